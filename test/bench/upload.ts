// `npm run bench -- upload [--mb N] [--rounds N] [--s3]`: a contract file of 1 GB (or N MB) sent to the web process
// the ways a user can, same database, same run:
// - a bare Node HTTP server that reads and drops the body: the ceiling for moving the bytes;
// - PUT to the upload URL, one request (the baseline the issue sets);
// - tus-js-client against the upload's tusEndpoint, in one go;
// - tus-js-client with one forced reconnect: the connection is dropped at half (upload.abort(),
//   as when a network goes away), then the upload is started again, which HEADs and resumes.
// Each upload must end `uploaded` with every byte; the web process's peak RSS is printed.
import { createReadStream } from 'node:fs';
import { rm } from 'node:fs/promises';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Upload as TusUpload } from 'tus-js-client';
import { createAccount } from '../../shared/tenancy/accounts.ts';
import { issueKey } from '../../shared/tenancy/apiKeys.ts';
import { createPool } from '../../shared/platform/db.ts';
import { createDataset } from '../../shared/domain/datasets.ts';
import { freePort } from '../../shared/platform/embeddedPostgres.ts';
import { createTestDatabase } from '../setup/database.ts';
import { blobStoreEnv, startTestObjectStore, stopTestObjectStore } from '../setup/objectStore.ts';
import { peakRssMiB, startServer, stopServers, writeContractFile } from './support.ts';

/** PUTs (or POSTs) a file from disk in one request; resolves with the status once answered. */
function sendFile(url: string, path: string, method = 'PUT'): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = request(url, { method, headers: { 'content-type': 'text/csv' } }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode!));
    });
    req.on('error', reject);
    createReadStream(path).pipe(req);
  });
}

/** tus-js-client from disk; with `reconnectAt`, the connection is dropped once that many bytes went out, then resumed. */
function tusFile(endpoint: string, path: string, size: number, reconnectAt?: number): Promise<{ resumedFrom: number | undefined }> {
  return new Promise((resolve, reject) => {
    let dropped = false;
    let resumedFrom: number | undefined;
    const upload: TusUpload = new TusUpload(createReadStream(path), {
      endpoint,
      uploadSize: size,
      retryDelays: [0, 500, 1000],
      onProgress: (sent) => {
        if (dropped && resumedFrom === undefined) resumedFrom = sent;
        if (reconnectAt === undefined || dropped || sent < reconnectAt) return;
        dropped = true;
        void upload.abort(false).then(() => upload.start());
      },
      onSuccess: () => resolve({ resumedFrom }),
      onError: reject,
    });
    upload.start();
  });
}

const timed = async <T>(work: () => Promise<T>): Promise<{ ms: number; result: T }> => {
  const started = performance.now();
  const result = await work();
  return { ms: performance.now() - started, result };
};

export async function benchUpload(args: string[]): Promise<void> {
  const mbArg = args.indexOf('--mb');
  const mb = mbArg >= 0 ? Number(args[mbArg + 1]) : 1024;
  const s3 = args.includes('--s3');
  const roundsArg = args.indexOf('--rounds');
  const rounds = roundsArg >= 0 ? Number(args[roundsArg + 1]) : 3;
  if (s3) {
    process.env['TEST_BLOB_STORE'] = 's3';
    await startTestObjectStore(); // s3rver, in this process: a local stand-in, not a measure of S3
  }
  const database = await createTestDatabase();
  const pool = createPool(database.url, 2, 'bench');
  const account = await createAccount(pool, 'Bench');
  const { key } = await issueKey(pool, account.id, 'live');
  const port = await freePort();
  const sinkPort = await freePort();
  const env = { DATABASE_URL: database.url, PORT: String(port), LOG_LEVEL: 'warn', MAX_UPLOAD_BYTES: String(4 * 1024 ** 3), ...(s3 ? blobStoreEnv() : {}) };
  const web = await startServer('dist/api/main.js', env, 'healthz');
  const sink = await startServer('test/bench/sinkServer.ts', { PORT: String(sinkPort) }, 'healthz');
  const base = `http://127.0.0.1:${port}`;
  const file = join(tmpdir(), `bench-upload-${mb}mb.csv`);
  try {
    const size = await writeContractFile(file, Math.ceil((mb * 1e6) / 64));
    const ds = await createDataset(pool, { accountId: account.id, mode: 'live' }, { externalRef: 'bench-upload' });
    const newUpload = async () => {
      const res = await fetch(`${base}/v1/datasets/${ds.id}/uploads`, {
        method: 'POST',
        body: '{}',
        headers: { authorization: `Bearer ${key}`, 'idempotency-key': crypto.randomUUID(), 'content-type': 'application/json' },
      });
      if (res.status !== 201) throw new Error(`upload: ${res.status} ${await res.text()}`);
      return (await res.json()) as { id: string; url: string; tusEndpoint: string };
    };
    /** The upload must be whole: `uploaded`, every byte (object stores learn of a direct PUT only when a version names it). */
    const check = async (uploadId: string, direct = false) => {
      const { rows } = await pool.query<{ status: string; bytes: string | null }>('SELECT status, bytes FROM uploads WHERE id = $1', [uploadId]);
      if (direct && s3) return;
      if (rows[0]?.status !== 'uploaded' || Number(rows[0].bytes) !== size) throw new Error(`upload ${uploadId}: ${JSON.stringify(rows[0])}`);
    };

    // Each path `rounds` times, interleaved (the first writes into a cold database are slower);
    // the table gives the median, min and max. Files are deleted between rounds.
    const bare: number[] = [];
    const put: number[] = [];
    const once: number[] = [];
    const cut: number[] = [];
    const resumedFrom: number[] = [];
    for (let round = 0; round < rounds; round++) {
      bare.push((await timed(() => sendFile(`http://127.0.0.1:${sinkPort}/sink`, file, 'POST'))).ms);
      const viaPut = await newUpload();
      const p = await timed(() => sendFile(viaPut.url, file));
      if (p.result !== 200) throw new Error(`PUT answered ${p.result}`);
      await check(viaPut.id, true);
      put.push(p.ms);
      const viaTus = await newUpload();
      once.push((await timed(() => tusFile(viaTus.tusEndpoint, file, size))).ms);
      await check(viaTus.id);
      const viaCutTus = await newUpload();
      const c = await timed(() => tusFile(viaCutTus.tusEndpoint, file, size, size / 2));
      await check(viaCutTus.id);
      cut.push(c.ms);
      resumedFrom.push(c.result.resumedFrom ?? 0);
      await pool.query('DELETE FROM blobs WHERE id IN (SELECT blob_id FROM uploads)');
    }
    const rss = await peakRssMiB(web.pid!);

    const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
    const baseline = median(put);
    const row = (path: string, ms: number[], extra: Record<string, string | number> = {}) => ({
      path,
      'median s': +(median(ms) / 1000).toFixed(2),
      'min s': +(Math.min(...ms) / 1000).toFixed(2),
      'max s': +(Math.max(...ms) / 1000).toFixed(2),
      'MB/s': +(size / 1e6 / (median(ms) / 1000)).toFixed(0),
      'vs PUT': `${(median(ms) / baseline).toFixed(2)}x`,
      ...extra,
    });
    console.log(`\nbench upload: ${(size / 1e6).toFixed(0)} MB contract file, ${s3 ? 'S3 (s3rver)' : 'PostgreSQL'} blob store, ${rounds} rounds, same database, same run`);
    console.table([
      row('bare Node server reading and dropping the body (ceiling)', bare),
      row('PUT to the upload URL, one request (baseline)', put),
      row('tus-js-client, one go', once),
      row('tus-js-client, connection dropped at 50% and resumed', cut, { 'resumed from MB': +(median(resumedFrom) / 1e6).toFixed(0) }),
    ]);
    console.log(`web process peak RSS: ${rss.toFixed(0)} MiB`);
  } finally {
    await stopServers([web, sink]);
    await rm(file, { force: true });
    await pool.end();
    await database.drop();
    if (s3) await stopTestObjectStore();
  }
}
