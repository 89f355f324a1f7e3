// Versions that became active before the month-end figures existed (sql/023 marks them): the
// workers compute their figures from the stored rows, so that an upgraded deployment reads the
// same metrics, cohorts and customers as a version built today.
import { expect } from 'chai';
import { queues } from '../shared/platform/queue.ts';
import { sendJobNow } from './support/jobs.ts';
import { eventually } from './support/eventually.ts';
import { HEADER, newDataset, postCsv } from './support/ingest.ts';
import { startScript } from './support/processes.ts';
import { useService } from './support/service.ts';

const BOOK = [
  HEADER,
  'c1,Acme,Pro,2024-01-15,2025-01-14,6000.00,EUR',
  'c2,Acme,Pro,2025-01-15,2026-01-14,4800.00,EUR',
  'c3,Beta,Team,2025-01-01,2025-12-31,14400.00,EUR',
  'c4,Gamma,Pro,2024-03-01,2024-08-31,600.00,USD',
  'c5,Gamma,Pro,2024-11-01,2025-04-30,900.00,USD',
  '',
].join('\n');

describe('monthly figures of versions from before they existed', () => {
  const svc = useService({ worker: false });
  const backfillNow = () => sendJobNow(svc.databaseUrl, queues.backfillFigures);
  /** What 016 left of a version built before it: no monthly figures, no columns, and 023's mark. */
  const asBefore016 = async (versionId: string) => {
    for (const table of ['version_cohorts', 'version_series', 'version_customers']) await svc.db.query(`DELETE FROM ${table} WHERE version_id = $1`, [versionId]);
    await svc.db.query('UPDATE versions SET columns = NULL, warnings = NULL, figures_pending = true WHERE id = $1', [versionId]);
  };

  it('when a version from before the monthly figures is marked, then a worker computes them from its rows: metrics, cohorts and customers as a build today answers them', async function () {
    this.timeout(60_000);
    const { key } = await svc.tenant();
    const ds = await newDataset(svc, key);
    const w = await startScript('worker/main.ts', svc.childEnv, /worker started/);
    try {
      const built = await postCsv(svc, key, ds, BOOK);
      expect(built.status).to.equal(201);
      const reads = [`/v1/datasets/${ds}/metrics`, `/v1/datasets/${ds}/cohorts`, `/v1/datasets/${ds}/customers?month=2025-01`, `/v1/datasets/${ds}/customers?month=2025-05&movement=churn`];
      const today = await Promise.all(reads.map(async (path) => (await svc.request(path, { key })).json));
      expect(today[0].monthly.length).to.be.greaterThan(20);

      await asBefore016(built.json.id);
      expect((await svc.request(reads[0]!, { key })).json.monthly).to.deep.equal([]);
      await backfillNow();
      expect(await eventually(async () => (await svc.db.query('SELECT figures_pending FROM versions WHERE id = $1', [built.json.id])).rows[0].figures_pending, (pending) => pending === false, { timeoutMs: 20_000 })).to.equal(false);
      const after = await Promise.all(reads.map(async (path) => (await svc.request(path, { key })).json));
      expect(JSON.stringify(after, null, 1)).to.equal(JSON.stringify(today, null, 1));
    } finally {
      w.child.kill('SIGTERM');
      await w.exited;
    }
  });

  it('when a marked version’s rows were purged, then its mark goes and nothing is computed; versions built today are never marked', async function () {
    this.timeout(60_000);
    const { key } = await svc.tenant();
    const ds = await newDataset(svc, key);
    const w = await startScript('worker/main.ts', svc.childEnv, /worker started/);
    try {
      const old = await postCsv(svc, key, ds, BOOK);
      const active = await postCsv(svc, key, ds, BOOK);
      expect([old.status, active.status]).to.deep.equal([201, 201]);
      await asBefore016(old.json.id);
      await svc.db.query('DELETE FROM contract_rows WHERE version_id = $1', [old.json.id]);
      await svc.db.query('UPDATE versions SET rows_purged_at = now() WHERE id = $1', [old.json.id]);
      await backfillNow();
      expect(await eventually(async () => (await svc.db.query('SELECT figures_pending FROM versions WHERE id = $1', [old.json.id])).rows[0].figures_pending, (pending) => pending === false, { timeoutMs: 20_000 })).to.equal(false);
      expect(Number((await svc.db.query('SELECT count(*) FROM version_series WHERE version_id = $1', [old.json.id])).rows[0].count)).to.equal(0);
      expect((await svc.db.query('SELECT figures_pending FROM versions WHERE id = $1', [active.json.id])).rows[0].figures_pending).to.equal(false);
    } finally {
      w.child.kill('SIGTERM');
      await w.exited;
    }
  });
});
