import { expect } from 'chai';
import type { ChildProcess } from 'node:child_process';
import { contractsCsv } from './support/contracts.ts';
import { eventually } from './support/eventually.ts';
import { HEADER, newDataset, postCsv } from './support/ingest.ts';
import { startScript } from './support/processes.ts';
import { useService } from './support/service.ts';
import { mayStartBuild } from '../shared/domain/versions.ts';

type Worker = { child: ChildProcess; output: () => string; exited: Promise<number | null> };

describe('workers that scale out', function () {
  this.timeout(120_000);
  let key: string;
  let workers: Worker[] = [];
  const svc = useService({ worker: false });
  before(async () => {
    ({ key } = await svc.tenant());
  });
  afterEach(async () => {
    for (const w of workers) w.child.kill('SIGTERM');
    await Promise.all(workers.map((w) => w.exited));
    workers = [];
  });

  const startWorkers = async (n: number, env: Record<string, string> = {}) => {
    const started = await Promise.all(
      Array.from({ length: n }, () => startScript('worker/main.ts', { ...svc.childEnv, ...env }, /worker started/)),
    );
    workers.push(...started);
    return started;
  };
  const builtBy = (w: Worker, versionId: string) => w.output().split('\n').filter((l) => l.includes('"version built"') && l.includes(versionId)).length;

  it('when three workers share ten concurrent uploads, then each version is built exactly once and the work is shared', async () => {
    const three = await startWorkers(3);
    const datasets = await Promise.all(Array.from({ length: 10 }, () => newDataset(svc, key)));
    const file = contractsCsv(20_000);
    const replies = await Promise.all(datasets.map((ds) => postCsv(svc, key, ds, file, { wait: 60 })));
    expect(replies.map((r) => r.status)).to.deep.equal(Array(10).fill(201));
    // Each worker logs a build after committing it and deleting the file: wait for the lines.
    const logged = () => replies.every((r) => three.some((w) => builtBy(w, r.json.id) > 0));
    await eventually(logged, (all) => all, { everyMs: 20 });
    for (const reply of replies) {
      const builds = three.map((w) => builtBy(w, reply.json.id));
      expect(builds.reduce((a, b) => a + b, 0), reply.json.id).to.equal(1);
    }
    const busy = three.filter((w) => replies.some((r) => builtBy(w, r.json.id) > 0));
    expect(busy.length).to.be.greaterThanOrEqual(2);
  });

  it("when one dataset gets several versions at once, then its builds run one at a time in creation order", async () => {
    await startWorkers(2);
    const ds = await newDataset(svc, key);
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) {
      ids.push((await postCsv(svc, key, ds, contractsCsv(20_000 + i), { wait: 0 })).json.id);
    }
    await eventually(
      async () => (await svc.db.query(`SELECT count(*) FILTER (WHERE status IN ('active', 'superseded')) AS done FROM versions WHERE dataset_id = $1`, [ds])).rows[0].done,
      (done) => Number(done) === 3,
      { timeoutMs: 20_000 },
    );
    const { rows } = await svc.db.query('SELECT id, status, started_at, completed_at FROM versions WHERE dataset_id = $1 ORDER BY seq', [ds]);
    expect(rows.map((r: { id: string }) => r.id)).to.deep.equal(ids);
    expect(rows.map((r: { status: string }) => r.status)).to.deep.equal(['superseded', 'superseded', 'active']);
    for (let i = 1; i < rows.length; i++) {
      expect(rows[i].started_at.getTime(), `build ${i} started before build ${i - 1} ended`).to.be.at.least(rows[i - 1].completed_at.getTime());
    }
    expect((await svc.request(`/v1/datasets/${ds}`, { key })).json.activeVersionId).to.equal(ids[2]);
  });

  it('when two workers take builds of one dataset at once (pg-boss checks its group in the snapshot of each fetch), then one starts and the other waits: none while another builds, none before an earlier one first starts', async () => {
    await startWorkers(1);
    const ds = await newDataset(svc, key);
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) ids.push((await postCsv(svc, key, ds, contractsCsv(10 + i), { wait: 60 })).json.id);
    const [v1, v2, v3] = ids as [string, string, string];
    const status = async () => (await svc.db.query('SELECT status, started_at IS NOT NULL AS started FROM versions WHERE dataset_id = $1 ORDER BY seq', [ds])).rows;
    const set = (id: string, state: string, started: boolean) =>
      svc.db.query(`UPDATE versions SET status = $2, started_at = CASE WHEN $3 THEN clock_timestamp() END WHERE id = $1`, [id, state, started]);
    // Built; now as if v1 were building and the jobs of v2 and v3 were taken by two workers at once.
    await set(v1, 'building', true);
    await set(v2, 'queued', false);
    await set(v3, 'queued', false);
    expect(await Promise.all([mayStartBuild(svc.db, v3, ds), mayStartBuild(svc.db, v2, ds)])).to.deep.equal([false, false]);
    await set(v1, 'superseded', true);
    expect(await Promise.all([mayStartBuild(svc.db, v3, ds), mayStartBuild(svc.db, v2, ds)])).to.deep.equal([false, true]);
    expect((await status()).map((r: { status: string }) => r.status)).to.deep.equal(['superseded', 'building', 'queued']);
    // v2 waits for the rest of its file, having started (deferBuild): v3 is not held back by it.
    await set(v2, 'queued', true);
    expect(await mayStartBuild(svc.db, v3, ds)).to.equal(true);
    await set(v3, 'active', true);
    await set(v2, 'superseded', true);
  });

  it('when a worker gets SIGTERM mid-build, then it hands the job back and another worker finishes it', async () => {
    const [first] = await startWorkers(1, { SHUTDOWN_TIMEOUT_MS: '1000' });
    const ds = await newDataset(svc, key);
    // Big enough that the build outlasts the worker's second of grace: SIGTERM comes as soon as it
    // reports its first rows, with seconds of work still ahead of it (about 2.5 s here; 400k rows
    // were built within the grace once large versions' customers got a table of their own). A
    // build stopped while its customers' rows were written, or between statements, went on to
    // activate the version without its job: it now stops (versionBuild.ts, throwIfAborted).
    // Had the first worker finished it, it would have logged the build: checked below.
    const rows = 1_000_000;
    const created = await postCsv(svc, key, ds, contractsCsv(rows), { wait: 0 });
    const path = `/v1/datasets/${ds}/versions/${created.json.id}`;
    await eventually(() => svc.request(path, { key }), (r) => r.json.status === 'building' && r.json.progress.rowsProcessed > 0, { everyMs: 10 });
    first!.child.kill('SIGTERM');
    expect(await first!.exited).to.equal(0);
    expect((await svc.request(path, { key })).json.status).to.be.oneOf(['building', 'queued']);
    expect((await svc.request(`/v1/datasets/${ds}`, { key })).json.activeVersionId).to.equal(null);

    const [second] = await startWorkers(1);
    const version = (await eventually(() => svc.request(path, { key }), (r) => r.json.status === 'active', { timeoutMs: 30_000 })).json;
    expect(version).to.include({ status: 'active', rowCount: rows });
    // The worker logs the build after committing it and deleting the file.
    await eventually(() => builtBy(second!, created.json.id), (n) => n > 0, { everyMs: 20 });
    expect(builtBy(second!, created.json.id)).to.equal(1);
    expect(builtBy(first!, created.json.id)).to.equal(0);
    const stored = await svc.db.query('SELECT count(*) FROM contract_rows WHERE version_id = $1', [created.json.id]);
    expect(Number(stored.rows[0].count)).to.equal(rows);
  });
});
