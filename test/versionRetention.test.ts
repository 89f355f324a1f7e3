// Superseded versions past VERSION_RETENTION_DAYS: their rows and exports are purged, their
// records stay; the active version is never touched, and a purge cut short by a killed worker is
// finished by the next one.
import { readFileSync } from 'node:fs';
import { expect } from 'chai';
import { versionsPastRetention } from '../shared/domain/versions.ts';
import { queues } from '../shared/platform/queue.ts';
import { sendJobNow } from './support/jobs.ts';
import { contractsCsv } from './support/contracts.ts';
import { HEADER, newDataset, postCsv } from './support/ingest.ts';
import { eventually } from './support/eventually.ts';
import { startScript } from './support/processes.ts';
import { useService } from './support/service.ts';

const ONE = `${HEADER}\nc1,Acme,Pro,2026-01-01,2026-12-31,1200.00,EUR\n`;
const TWO = `${HEADER}\nc1,Acme,Pro,2026-01-01,2026-12-31,1200.00,EUR\nc2,Beta,Pro,2026-01-01,2026-12-31,600.00,EUR\n`;

describe('retention of superseded versions', () => {
  // No worker in this process: each test runs the project's worker as child processes.
  const svc = useService({ worker: false });
  const rowsOf = async (versionId: string) => Number((await svc.db.query('SELECT count(*) FROM contract_rows WHERE version_id = $1', [versionId])).rows[0].count);
  const purgeNow = () => sendJobNow(svc.databaseUrl, queues.purgeVersions);
  // Their supervisors look for a killed worker's jobs every second (10 by default): those jobs are
  // failed over to a retry as soon as their heartbeat lapses, as in production, not up to 10 s later.
  const worker = (env: Record<string, string> = {}) => startScript('worker/main.ts', { ...svc.childEnv, QUEUE_SUPERVISE_INTERVAL_SECONDS: '1', ...env }, /worker started/);

  it('when a superseded version is past its retention, then its rows and exports are purged, its record stays with rowsPurgedAt, and exporting it is 404; the active and the recent ones are untouched', async function () {
    this.timeout(60_000);
    const w = await worker();
    try {
      const { key } = await svc.tenant();
      const ds = await newDataset(svc, key);
      const old = await postCsv(svc, key, ds, ONE);
      const exp = await svc.request(`/v1/datasets/${ds}/exports`, { key, json: { format: 'csv' } });
      await eventually(() => svc.request(`/v1/datasets/${ds}/exports/${exp.json.id}`, { key }), (r) => r.json.status === 'ready');
      const recent = await postCsv(svc, key, ds, TWO);
      const active = await postCsv(svc, key, ds, TWO);
      expect([old.status, recent.status, active.status]).to.deep.equal([201, 201, 201]);
      const metricsBefore = await svc.request(`/v1/datasets/${ds}/metrics`, { key });
      await svc.db.query(`UPDATE versions SET superseded_at = now() - interval '31 days' WHERE id = $1`, [old.json.id]);

      await purgeNow();
      const purged = await eventually(() => svc.request(`/v1/datasets/${ds}/versions/${old.json.id}`, { key }), (r) => r.json.rowsPurgedAt !== null, { timeoutMs: 20_000 });
      expect(purged.json).to.include({ status: 'superseded', rowCount: 1 });
      expect(Date.parse(purged.json.rowsPurgedAt)).to.be.within(Date.now() - 60_000, Date.now());
      expect(await rowsOf(old.json.id)).to.equal(0);
      expect((await svc.request(`/v1/datasets/${ds}/exports/${exp.json.id}`, { key })).status).to.equal(404);
      expect((await svc.request(`/v1/datasets/${ds}/exports`, { key, json: { format: 'csv', versionId: old.json.id } })).status).to.equal(404);

      expect(await rowsOf(recent.json.id)).to.equal(2);
      expect(await rowsOf(active.json.id)).to.equal(2);
      expect((await svc.request(`/v1/datasets/${ds}/versions/${recent.json.id}`, { key })).json.rowsPurgedAt).to.equal(null);
      expect((await svc.request(`/v1/datasets/${ds}/metrics`, { key })).text).to.equal(metricsBefore.text);
      expect((await svc.request(`/v1/datasets/${ds}/exports`, { key, json: { format: 'csv', versionId: recent.json.id } })).status).to.equal(202);
    } finally {
      w.child.kill('SIGTERM');
      await w.exited;
    }
  });

  const customersOf = async (versionId: string) => Number((await svc.db.query('SELECT count(*) FROM version_customers WHERE version_id = $1', [versionId])).rows[0].count);

  /** A new dataset's first version superseded by a second, past its retention, its rows gone and its customers still there; `marks` sets its purge's marks. */
  async function cutShort(marks: string) {
    const { key } = await svc.tenant();
    const ds = await newDataset(svc, key);
    const [old, active] = [await postCsv(svc, key, ds, ONE), await postCsv(svc, key, ds, TWO)];
    expect([old.status, active.status]).to.deep.equal([201, 201]);
    expect(await customersOf(old.json.id)).to.equal(1);
    await svc.db.query('DELETE FROM contract_rows WHERE version_id = $1', [old.json.id]);
    await svc.db.query(`UPDATE versions SET superseded_at = now() - interval '31 days', ${marks} WHERE id = $1`, [old.json.id]);
    return { key, ds, old, active };
  }

  it('when a purge was cut short after the version\'s rows were marked purged, then the next run deletes its customers and changes all the same, and marks its purge finished', async function () {
    this.timeout(60_000);
    const w = await worker();
    try {
      // As a worker killed right after the mark leaves it: rows gone, marked, its customers still there.
      const { key, ds, old, active } = await cutShort('rows_purged_at = now()');

      await purgeNow();
      const finished = await eventually(() => svc.db.query('SELECT purge_finished_at FROM versions WHERE id = $1', [old.json.id]), (r) => r.rows[0].purge_finished_at !== null, { timeoutMs: 20_000 });
      expect(finished.rows[0].purge_finished_at).not.to.equal(null);
      expect(await customersOf(old.json.id)).to.equal(0);
      expect(await customersOf(active.json.id)).to.equal(2);
      expect((await svc.request(`/v1/datasets/${ds}/customers?month=2026-06`, { key })).json.data).to.have.length(2);
    } finally {
      w.child.kill('SIGTERM');
      await w.exited;
    }
  });

  it('when a purge taken as finished by sql/030 had left its customers, then sql/033 takes it again and the next run deletes them', async function () {
    this.timeout(60_000);
    const w = await worker();
    try {
      // As sql/030 left a purge cut short before it: rows gone, marked, taken as finished, its customers still there.
      const { key, ds, old } = await cutShort(`rows_purged_at = now() - interval '1 day', purge_finished_at = now() - interval '1 day'`);
      // A purge finished since (its mark after its rows'), with customers of its own made up: left alone.
      const [finished] = [await postCsv(svc, key, ds, ONE)];
      await postCsv(svc, key, ds, TWO);
      await svc.db.query(`UPDATE versions SET rows_purged_at = now() - interval '2 days', purge_finished_at = now() - interval '1 day' WHERE id = $1`, [finished.json.id]);
      // One whose table of its own was left without its mark (a purge cut short before 18df92a dropped the two together).
      const { old: orphan } = await cutShort(`rows_purged_at = now() - interval '1 day', purge_finished_at = now() - interval '1 day'`);
      const ownTable = `version_customers_apart."${orphan.json.id}"`;
      await svc.db.query('DELETE FROM version_customers WHERE version_id = $1', [orphan.json.id]);
      await svc.db.query(`CREATE TABLE ${ownTable} (LIKE version_customers)`);
      const stateOf = async (versionId: string) => (await svc.db.query('SELECT purge_finished_at IS NOT NULL AS finished FROM versions WHERE id = $1', [versionId])).rows[0].finished;

      const taken = async () => (await versionsPastRetention(svc.db, 30, 100)).map((v) => v.id);
      const before = await taken();
      expect(before).not.to.include(old.json.id); // taken as finished: never taken again
      expect(before).not.to.include(orphan.json.id);

      await svc.db.query(readFileSync(new URL('../sql/033_purges_taken_again.sql', import.meta.url), 'utf8'));
      expect([await stateOf(old.json.id), await stateOf(finished.json.id)]).to.deep.equal([false, true]);
      expect(await taken()).to.include.members([old.json.id, orphan.json.id]).and.not.to.include(finished.json.id);
      await purgeNow();
      await eventually(async () => [await stateOf(old.json.id), await stateOf(orphan.json.id)], (done) => done.every(Boolean), { timeoutMs: 20_000 });
      expect(await customersOf(old.json.id)).to.equal(0);
      expect((await svc.db.query('SELECT to_regclass($1) AS t', [ownTable])).rows[0].t).to.equal(null);
      expect(await customersOf(finished.json.id)).to.equal(1);
      expect((await svc.request(`/v1/datasets/${ds}/customers?month=2026-06`, { key })).json.data).to.have.length(2);
    } finally {
      w.child.kill('SIGTERM');
      await w.exited;
    }
  });

  const BIG = 90_000;
  it('when the worker is killed mid-purge, under load, then the next one finishes it and nothing of the active version is lost', async function () {
    this.timeout(120_000);
    const first = await worker({ PURGE_BATCH_ROWS: '100' });
    let second: Awaited<ReturnType<typeof worker>> | undefined;
    try {
      const { key } = await svc.tenant();
      const ds = await newDataset(svc, key);
      // Rows go a span of 64 pages at a time (about 4,000 rows): 90,000 rows are some 24 deletes, so
      // that the kill lands mid-purge even when the first one is seen late (30,000 were 8, and a fast
      // server finished them before the kill came).
      const big = await postCsv(svc, key, ds, contractsCsv(BIG), { wait: 60 });
      const active = await postCsv(svc, key, ds, contractsCsv(5_000), { wait: 60 });
      expect([big.status, active.status]).to.deep.equal([201, 201]);
      const metrics = (await svc.request(`/v1/datasets/${ds}/metrics`, { key })).text;
      await svc.db.query(`UPDATE versions SET superseded_at = now() - interval '31 days' WHERE id = $1`, [big.json.id]);

      // Load meanwhile: reads of the active version, and new versions of another dataset.
      let loading = true;
      const other = await newDataset(svc, key);
      const load = (async () => {
        let n = 0;
        while (loading) {
          const read = await svc.request(`/v1/datasets/${ds}/metrics`, { key });
          expect(read.text).to.equal(metrics);
          expect((await postCsv(svc, key, other, ONE)).status).to.equal(201);
          n++;
        }
        return n;
      })();

      await purgeNow();
      await eventually(() => rowsOf(big.json.id), (n) => n < BIG, { everyMs: 10, timeoutMs: 30_000 });
      first.child.kill('SIGKILL');
      await first.exited;
      const left = await rowsOf(big.json.id);
      expect(left, `the kill came mid-purge (rows left: ${left})`).to.be.above(0).and.below(BIG);
      expect((await svc.request(`/v1/datasets/${ds}/versions/${big.json.id}`, { key })).json.rowsPurgedAt).to.equal(null);

      second = await worker({ PURGE_BATCH_ROWS: '1000' });
      await purgeNow();
      await eventually(() => svc.request(`/v1/datasets/${ds}/versions/${big.json.id}`, { key }), (r) => r.json.rowsPurgedAt !== null, { timeoutMs: 60_000 });
      loading = false;
      expect(await load).to.be.above(0);
      expect(await rowsOf(big.json.id)).to.equal(0);
      expect(await rowsOf(active.json.id)).to.equal(5_000);
      expect((await svc.request(`/v1/datasets/${ds}/metrics`, { key })).text).to.equal(metrics);
    } finally {
      first.child.kill('SIGKILL');
      second?.child.kill('SIGTERM');
      await second?.exited;
    }
  });
});
