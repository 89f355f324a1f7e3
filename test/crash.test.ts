import { expect } from 'chai';
import { contractsCsv } from './support/contracts.ts';
import { eventually } from './support/eventually.ts';
import { newDataset, postCsv } from './support/ingest.ts';
import { startScript } from './support/processes.ts';
import { useService } from './support/service.ts';

describe('a worker killed mid-build', function () {
  this.timeout(120_000);
  // A job whose worker went silent is abandoned after 10 s, pg-boss's floor, rather than the
  // default 15 s: the web process here creates the queues, so its value is theirs.
  const svc = useService({ worker: false, env: { QUEUE_HEARTBEAT_SECONDS: '10' } });

  it('when the worker gets SIGKILL while building, then another worker retries the job and no read ever shows partial data', async () => {
    const { key } = await svc.tenant();
    const ds = await newDataset(svc, key);
    // The kill comes as soon as the build reports its first rows (within half a second of its
    // start): the rest of the file, some seconds of work even on a fast machine, is still ahead of
    // it. That the kill landed mid-build is checked below, not assumed.
    const rows = 300_000;
    // The workers' supervisors look for dead workers' jobs every second (10 by default): the job
    // is failed over once its heartbeat lapses, as in production, without waiting 10 s more for it.
    const worker = () => startScript('worker/main.ts', { ...svc.childEnv, QUEUE_SUPERVISE_INTERVAL_SECONDS: '1', QUEUE_HEARTBEAT_SECONDS: '10' }, /worker started/);
    const first = await worker();

    const created = await postCsv(svc, key, ds, contractsCsv(rows), { wait: 0 });
    expect(created.status).to.equal(202);
    const versionId = created.json.id;
    const versionPath = `/v1/datasets/${ds}/versions/${versionId}`;

    // Let the first worker get into the build, then kill it without warning.
    await eventually(() => svc.request(versionPath, { key }), (r) => r.json.status === 'building' && r.json.progress.rowsProcessed > 0, { everyMs: 10 });
    expect((await svc.request(versionPath, { key })).json.status).to.equal('building');
    first.child.kill('SIGKILL');
    await first.exited;
    // Killed mid-build: nothing of the build was committed.
    expect((await svc.request(versionPath, { key })).json.status, 'the kill came after the build ended').to.equal('building');
    expect(Number((await svc.db.query('SELECT count(*) FROM contract_rows WHERE version_id = $1', [versionId])).rows[0].count)).to.equal(0);

    const second = await worker();
    try {
      let status = 'building';
      while (status !== 'active') {
        // Every read in between shows nothing partial: no active version, no metrics, no stored rows.
        const dataset = (await svc.request(`/v1/datasets/${ds}`, { key })).json;
        const metrics = await svc.request(`/v1/datasets/${ds}/metrics`, { key });
        const stored = Number((await svc.db.query('SELECT count(*) FROM contract_rows WHERE version_id = $1', [versionId])).rows[0].count);
        status = (await svc.request(versionPath, { key })).json.status;
        if (status === 'active') break;
        expect(status).to.be.oneOf(['building', 'queued']);
        expect(dataset.activeVersionId).to.equal(null);
        expect(metrics.status).to.equal(404);
        expect(stored).to.equal(0);
        await new Promise((r) => setTimeout(r, 250));
      }
      const version = (await svc.request(versionPath, { key })).json;
      expect(version).to.include({ status: 'active', rowCount: rows });
      const metrics = (await svc.request(`/v1/datasets/${ds}/metrics`, { key })).json;
      expect(metrics.rows.total).to.equal(rows);
      // Built again from the start by the second worker (it logs the build once committed).
      const builtBySecond = () => second.output().split('\n').filter((l) => l.includes('"version built"') && l.includes(versionId)).length;
      expect(await eventually(builtBySecond, (n) => n > 0)).to.equal(1);
      expect(first.output()).not.to.include('"version built"');
    } finally {
      second.child.kill('SIGTERM');
      await second.exited;
    }
  });
});
