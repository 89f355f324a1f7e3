// Files still arriving: a slow client must cost its own request only, and a file whose receiving
// process died must not leave a version building or a partial file behind.
import { expect } from 'chai';
import { request as httpRequest } from 'node:http';
import { freePort } from '../shared/platform/embeddedPostgres.ts';
import { CONTRACT_HEADER, contractBlocks, contractsCsv } from './support/contracts.ts';
import { eventually } from './support/eventually.ts';
import { newDataset, postCsv } from './support/ingest.ts';
import { startScript } from './support/processes.ts';
import { type TestService, useService } from './support/service.ts';

/** A text/csv POST whose body the test writes piece by piece, as a slow client would. */
function slowUpload(svc: TestService, key: string, datasetId: string, port = new URL(svc.url).port) {
  const req = httpRequest({
    host: '127.0.0.1',
    port,
    method: 'POST',
    path: `/v1/datasets/${datasetId}/versions`,
    headers: { authorization: `Bearer ${key}`, 'idempotency-key': crypto.randomUUID(), 'content-type': 'text/csv', prefer: 'wait=60' },
  });
  const answer = new Promise<{ status: number; json: any }>((resolve, reject) => {
    req.on('response', (res) => {
      let text = '';
      res.on('data', (c) => (text += c));
      res.on('end', () => resolve({ status: res.statusCode!, json: JSON.parse(text) }));
    });
    req.on('error', reject);
  });
  answer.catch(() => {});
  return { req, answer };
}

describe('uploads still arriving', function () {
  this.timeout(120_000);
  const svc = useService({
      env: { WORKER_CONCURRENCY: '1', STREAMED_BUILD_PATIENCE_MS: '300', BLOB_HEARTBEAT_MS: '300', BLOB_WRITER_TIMEOUT_MS: '2000', SWEEP_INTERVAL_MS: '300' },
    });

  it('when one client sends its file slowly, then another account\'s small upload is built at once, and the slow one is built once its file is whole', async () => {
    const slow = await svc.tenant();
    const slowDs = await newDataset(svc, slow.key);
    const upload = slowUpload(svc, slow.key, slowDs);
    // The first bytes arrive (the version and its build exist), then the client dawdles.
    upload.req.write(CONTRACT_HEADER + 'c-1,Acme,Pro,2026-01-01,2026-12-31,10.00,EUR\n');
    await eventually(() => svc.db.query(`SELECT status FROM versions WHERE dataset_id = $1`, [slowDs]), (r) => r.rows[0]?.status === 'building', { everyMs: 20 });
    const drip = setInterval(() => upload.req.write('\n'), 100);
    try {
      const other = await svc.tenant();
      const ds = await newDataset(svc, other.key);
      const started = performance.now();
      const quick = await postCsv(svc, other.key, ds, contractsCsv(3), { wait: 30 });
      const ms = performance.now() - started;
      expect(quick.status, quick.text).to.equal(201);
      // With one build slot held by the slow file, this waited until that file was whole (minutes).
      expect(ms).to.be.below(5_000);
    } finally {
      clearInterval(drip);
    }
    upload.req.end('c-2,Beta,Lite,2026-03-01,2026-05-31,300.00,EUR\n');
    const answer = await upload.answer;
    expect(answer.status).to.equal(201);
    expect(answer.json).to.include({ status: 'active', rowCount: 2 });
  });

  it('when the web process dies while receiving a file, then its version (if any) fails with a problem and the partial file is removed within the writer timeout', async () => {
    const { key } = await svc.tenant();
    const ds = await newDataset(svc, key);
    const port = await freePort();
    const web = await startScript(
      'api/main.ts',
      { ...svc.childEnv, PORT: String(port), BASE_URL: `http://127.0.0.1:${port}`, BLOB_HEARTBEAT_MS: '300' },
      /api listening/,
    );
    const upload = slowUpload(svc, key, ds, String(port));
    upload.req.on('error', () => {});
    // A few MiB: part of the file is stored, the rest never comes.
    for (const block of contractBlocks(0, 60_000)) upload.req.write(block);
    const writing = await eventually(
      () => svc.db.query<{ id: string }>(`SELECT id FROM blobs WHERE bytes IS NULL AND writer_seen_at IS NOT NULL`),
      (r) => r.rows.length === 1,
      { everyMs: 20 },
    );
    const blobId = writing.rows[0]!.id;
    // With the PostgreSQL store the version exists while its file streams in (it builds meanwhile).
    const streamed = svc.config.blobStore.kind === 'postgres';
    if (streamed) await eventually(() => svc.db.query(`SELECT 1 FROM blob_chunks WHERE blob_id = $1`, [blobId]), (r) => r.rows.length > 0, { everyMs: 20 });
    web.child.kill('SIGKILL');
    await web.exited;

    const gone = await eventually(() => svc.db.query('SELECT count(*)::int AS n FROM blobs WHERE id = $1', [blobId]), (r) => r.rows[0].n === 0, { timeoutMs: 15_000, everyMs: 100 });
    expect(gone.rows[0].n).to.equal(0);
    const versions = await svc.request(`/v1/datasets/${ds}/versions`, { key });
    if (!streamed) {
      expect(versions.json.data).to.deep.equal([]); // the file never arrived whole: no version was made
      return;
    }
    expect(versions.json.data).to.have.length(1);
    const failed = versions.json.data[0];
    expect(failed.status).to.equal('failed');
    expect(failed.problem.type).to.match(/\/internal$/);
    expect(failed.problem.detail).to.match(/upload the file again/i);
    const chunks = await svc.db.query('SELECT count(*)::int AS n FROM blob_chunks WHERE blob_id = $1', [blobId]);
    expect(chunks.rows[0].n).to.equal(0);
  });

  it('when a file is still being received by a live process, then the sweep leaves it alone', async () => {
    const { key } = await svc.tenant();
    const ds = await newDataset(svc, key);
    const upload = slowUpload(svc, key, ds);
    upload.req.write(CONTRACT_HEADER);
    // Longer than the writer timeout, with nothing sent: the heartbeat alone keeps it.
    await new Promise((r) => setTimeout(r, 3_000));
    upload.req.end('c-1,Acme,Pro,2026-01-01,2026-12-31,10.00,EUR\n');
    const answer = await upload.answer;
    expect(answer.status).to.equal(201);
    expect(answer.json.status).to.equal('active');
  });
});
