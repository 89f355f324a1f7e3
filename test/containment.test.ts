import { expect } from 'chai';
import { PgBoss, type Job } from 'pg-boss';
import { createLogger } from '../shared/platform/log.ts';
import { queues } from '../shared/platform/queue.ts';
import { startBuild } from '../shared/domain/versions.ts';
import { deterministicProblem } from '../worker/jobs/buildVersion.ts';
import { startWorker } from '../worker/worker.ts';
import { eventually } from './support/eventually.ts';
import { buildNow, HEADER, newDataset, postCsv } from './support/ingest.ts';
import { type TestService, useService } from './support/service.ts';

const SMALL = `${HEADER}\nc1,Acme,Widget,2024-01-01,2024-12-31,1200.00,EUR\n`;

/**
 * A file whose build thread holds a lot in memory: every row a product of its own, with a long
 * name. The tally counts them on its own thread; the build thread holds the catalog it hands back
 * (every product, with its figures) while storing it.
 */
function manyProducts(rows: number): string {
  const lines = [HEADER];
  const pad = 'x'.repeat(150);
  for (let i = 0; i < rows; i++) lines.push(`c${i},Acme,Product ${i} ${pad},2024-01-01,2024-12-31,100.00,EUR`);
  return `${lines.join('\n')}\n`;
}

/** The pg-boss job of a version's build: its state and attempts. */
async function buildJob(svc: TestService, versionId: string) {
  const { rows } = await svc.db.query(`SELECT state, retry_count FROM pgboss.job WHERE name = $1 AND data->>'versionId' = $2`, [queues.buildVersion, versionId]);
  return rows as { state: string; retry_count: number }[];
}

describe('a build that cannot finish', function () {
  this.timeout(120_000);

  describe('when its build thread runs out of memory', () => {
    // A heap a thread starts in, but far too small for the catalog of 80,000 long product names
    // (40,000 came close: under CI's load one build fit in it, 9c293ad).
    // On the PostgreSQL store whatever the run's: a thread this small cannot even load the S3 client.
    const svc = useService({ env: { BUILD_HEAP_MB: '20', BLOB_STORE: 'postgres' } });

    it('then the version fails at once with 413 and its problem, the worker stays up and another account is built right after', async () => {
      const big = await svc.tenant();
      const ds = await newDataset(svc, big.key);
      const failed = await postCsv(svc, big.key, ds, manyProducts(80_000), { wait: 60 });
      expect(failed.status, failed.text).to.equal(413);
      expect(failed.headers.get('content-type')).to.match(/^application\/problem\+json/);
      expect(failed.json).to.include({ type: `${svc.config.errorsBase}/payload-too-large`, status: 413 });
      expect(failed.json.detail).to.match(/more memory than a build may use \(20 MiB\)/).and.match(/Retrying the same file will not help/);
      const versionId = failed.json.versionId;
      expect(versionId).to.match(/^ver_/);

      const version = (await svc.request(`/v1/datasets/${ds}/versions/${versionId}`, { key: big.key })).json;
      expect(version.status).to.equal('failed');
      expect(version.problem).to.include({ type: `${svc.config.errorsBase}/payload-too-large`, status: 413, detail: failed.json.detail });
      expect((await svc.request(`/v1/datasets/${ds}`, { key: big.key })).json.activeVersionId).to.equal(null);
      const stored = await svc.db.query('SELECT count(*)::int AS n FROM contract_rows WHERE version_id = $1', [versionId]);
      expect(stored.rows[0].n).to.equal(0);
      // Not retried: a deterministic failure would only take the next attempts down the same way.
      const jobs = await eventually(() => buildJob(svc, versionId), (js) => js.every((j) => j.state !== 'active'));
      expect(jobs.map((j) => j.state)).to.deep.equal(['completed']);

      const other = await svc.tenant();
      const otherDs = await newDataset(svc, other.key);
      const built = await postCsv(svc, other.key, otherDs, SMALL, { wait: 30 });
      expect(built.status, built.text).to.equal(201);
      expect(built.json).to.include({ status: 'active', rowCount: 1 });
      expect(svc.logs()).to.include('build thread ended; starting another');
    });
  });

  describe('when PostgreSQL refuses a value of the file as data', () => {
    const svc = useService();

    it('then a cell with a NUL byte fails the version at once with 422, without a retry', async () => {
      const { key } = await svc.tenant();
      const ds = await newDataset(svc, key);
      const started = Date.now();
      const reply = await postCsv(svc, key, ds, `${HEADER}\nc1,Ac\u0000me,Widget,2024-01-01,2024-12-31,1200.00,EUR\n`, { wait: 30 });
      expect(reply.status, reply.text).to.equal(422);
      expect(reply.json.type).to.equal(`${svc.config.errorsBase}/ingest-validation-failed`);
      expect(Date.now() - started).to.be.below(10_000);
      const versionId = reply.json.versionId;
      expect((await svc.request(`/v1/datasets/${ds}/versions/${versionId}`, { key })).json.status).to.equal('failed');
      const jobs = await eventually(() => buildJob(svc, versionId), (js) => js.every((j) => j.state !== 'active'));
      expect(jobs.map((j) => j.state)).to.deep.equal(['completed']);
    });

    it('then any data exception (SQLSTATE class 22) is a failure retrying cannot fix, and a lost connection is not', async () => {
      const outOfRange = await svc.db.query('SELECT 1e30::numeric(20, 2)').catch((error: unknown) => error);
      expect((outOfRange as { code: string }).code).to.equal('22003');
      expect(deterministicProblem(outOfRange)).to.include({ type: 'ingest-validation-failed' });
      expect(deterministicProblem(outOfRange)!.detail).to.match(/Retrying the same file will not help/);
      const cancelled = await svc.db.query('SET LOCAL statement_timeout = 1; SELECT pg_sleep(1)').catch((error: unknown) => error);
      expect(deterministicProblem(cancelled)).to.equal(undefined);
      expect(deterministicProblem(Object.assign(new Error('read ECONNRESET'), { code: 'ECONNRESET' }))).to.equal(undefined);
    });
  });

  describe('when a job is dead-lettered after its attempts', () => {
    const svc = useService({ worker: false });

    it('then the version and the export it was building end failed with a problem, never building or queued', async () => {
      const { key } = await svc.tenant();
      const ds = await newDataset(svc, key);
      const first = await postCsv(svc, key, ds, SMALL, { wait: 0 });
      await buildNow(svc, first.json.id);
      const exported = await svc.request(`/v1/datasets/${ds}/exports`, { key, json: { format: 'csv' } });
      expect(exported.json.status).to.equal('queued');
      const second = await postCsv(svc, key, ds, SMALL, { wait: 0 });
      expect(second.status).to.equal(202);

      // A worker that takes the jobs, starts them and then fails them for good, as pg-boss does with
      // an attempt that never returned (its heartbeat stopped) once no retry is left. The first
      // version's job (built above, in this process) is dead-lettered too: it stays active.
      const dying = new PgBoss({ connectionString: svc.databaseUrl, schedule: false, supervise: false });
      dying.on('error', () => {});
      await dying.start();
      let taken = 0;
      const deadLetter = (start: (job: Job<any>) => Promise<unknown>) => async (jobs: Job<any>[]) => {
        for (const job of jobs) await start(job);
        taken += jobs.length;
        return jobs.map((job) => ({ id: job.id, status: 'deadletter' as const }));
      };
      await dying.work(queues.buildVersion, { perJobResults: true, pollingIntervalSeconds: 0.5 }, deadLetter(async (job) => job.data.versionId === second.json.id && startBuild(svc.db, job.data.versionId)));
      await dying.work(queues.buildExport, { perJobResults: true, pollingIntervalSeconds: 0.5 }, deadLetter((job) => svc.db.query(`UPDATE exports SET status = 'building' WHERE id = $1`, [job.data.exportId])));
      await eventually(() => taken, (n) => n === 3);
      await dying.stop({ graceful: true, timeout: 2_000 });
      expect((await svc.request(`/v1/datasets/${ds}/versions/${second.json.id}`, { key })).json.status).to.equal('building');

      const log = createLogger({ logLevel: 'silent' }, 'test');
      const worker = await startWorker(svc.config, svc.databaseUrl, log);
      try {
        const version = await eventually(() => svc.request(`/v1/datasets/${ds}/versions/${second.json.id}`, { key }), (r) => r.json.status !== 'building');
        expect(version.json.status).to.equal('failed');
        expect(version.json.problem).to.include({ type: `${svc.config.errorsBase}/internal`, status: 500 });
        expect(version.json.problem.detail).to.match(/could not be built/);
        const exp = await eventually(() => svc.request(`/v1/datasets/${ds}/exports/${exported.json.id}`, { key }), (r) => r.json.status !== 'building');
        expect(exp.json.status).to.equal('failed');
        // The first version, built before, is untouched.
        expect((await svc.request(`/v1/datasets/${ds}`, { key })).json.activeVersionId).to.equal(first.json.id);
      } finally {
        await worker.stop();
      }
    });
  });
});
