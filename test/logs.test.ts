// Logs an operator can follow: a request to the build and the export it started, and a client
// that goes away mid-answer as one JSON line, never a raw stack outside the log stream.
import { request } from 'node:http';
import { expect } from 'chai';
import { eventually } from './support/eventually.ts';
import { HEADER, newDataset, postCsv } from './support/ingest.ts';
import { useService } from './support/service.ts';

type LogLine = Record<string, unknown> & { msg: string };

describe('logs that connect', function () {
  this.timeout(60_000);
  let key: string;
  let accountId: string;
  const svc = useService();
  before(async () => {
    ({ key, accountId } = await svc.tenant());
  });

  const lines = (): LogLine[] =>
    svc
      .logs()
      .split('\n')
      .filter((l) => l.startsWith('{'))
      .map((l) => JSON.parse(l) as LogLine);

  it('when a request creates a version and an export, then the worker lines of both name the request, account, dataset, version or export and job', async () => {
    const ds = await newDataset(svc, key);
    const created = await svc.request(`/v1/datasets/${ds}/versions`, {
      key,
      body: `${HEADER}\nl-1,Acme,,2026-01-01,2026-12-31,5,EUR\n`,
      headers: { 'content-type': 'text/csv', 'x-request-id': 'trace-build-1' },
    });
    expect(created.status, created.text).to.equal(201);
    // The worker logs once its job returns, which may be just after the answer went out.
    const built = await eventually(
      async () => lines().find((l) => l.msg === 'version built' && l['versionId'] === created.json.id),
      (l) => l !== undefined,
    );
    expect(built).to.include({ requestId: 'trace-build-1', accountId, datasetId: ds, versionId: created.json.id, outcome: 'active' });
    expect(built!['jobId']).to.be.a('string');

    const requested = await svc.request(`/v1/datasets/${ds}/exports`, { key, json: { format: 'csv' }, headers: { 'x-request-id': 'trace-export-1' } });
    expect(requested.status, requested.text).to.equal(202);
    const exported = await eventually(
      async () => lines().find((l) => l.msg === 'export built' && l['exportId'] === requested.json.id),
      (l) => l !== undefined,
    );
    expect(exported).to.include({ requestId: 'trace-export-1', accountId, datasetId: ds, versionId: created.json.id, exportId: requested.json.id });
    expect(exported!['jobId']).to.be.a('string');
  });

  it('when a client goes away while a large answer streams, then the service logs one JSON line and writes nothing to stderr', async () => {
    const ds = await newDataset(svc, key);
    // 50,000 rows with two errors each: a 422 of about 10 MB, streamed from the database.
    const bad = `${HEADER}\n${Array.from({ length: 50_000 }, (_, i) => `b-${i},,,2026-02-3${i % 10},2026-12-31,5,EUR`).join('\n')}\n`;
    const first = await postCsv(svc, key, ds, bad, { idempotencyKey: 'cut-short', wait: 60 });
    expect(first.status).to.equal(422);

    const written: string[] = [];
    const stderrWrite = process.stderr.write;
    process.stderr.write = ((chunk: string | Uint8Array, ...rest: unknown[]) => {
      written.push(String(chunk));
      return (stderrWrite as (...args: unknown[]) => boolean).call(process.stderr, chunk, ...rest);
    }) as typeof process.stderr.write;
    try {
      // The replay streams the same 10 MB again: read its first bytes, then hang up.
      const url = new URL(`${svc.url}/v1/datasets/${ds}/versions`);
      await new Promise<void>((resolve, reject) => {
        const req = request(
          url,
          { method: 'POST', headers: { authorization: `Bearer ${key}`, 'idempotency-key': 'cut-short', 'content-type': 'text/csv', 'x-request-id': 'trace-cut-1' } },
          (res) => {
            res.once('data', () => {
              req.destroy();
              resolve();
            });
          },
        );
        req.on('error', () => {});
        req.once('close', resolve);
        req.end(bad);
        setTimeout(() => reject(new Error('no answer')), 30_000).unref();
      });
      const cut = await eventually(
        async () => lines().filter((l) => l['reqId'] === 'trace-cut-1' && l.msg.startsWith('answer')),
        (found) => found.length > 0,
      );
      expect(cut).to.have.length(1);
      expect(cut[0]!.msg).to.equal('answer cut short: the client went away');
      await new Promise((resolve) => setTimeout(resolve, 200));
      expect(written.join('')).to.not.match(/ERR_STREAM_PREMATURE_CLOSE|Error:/);
    } finally {
      process.stderr.write = stderrWrite;
    }
  });
});
