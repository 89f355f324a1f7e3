// `npm run bench -- errors [--rows N]`: a file whose every row is bad (1,000,000 rows by default,
// so as many row errors), POSTed until 422; the answer streams every error from the database.
// Beside it, in the same run: psql reading the same errors out with COPY (the ceiling for
// streaming them), GET of the failed version, the idempotent replay of the 422, and the peak RSS
// of the web process, which must not grow with the number of errors. Then a file with 1% bad rows:
// POST → 422, the first page of its errors, and the whole rejected-rows CSV.
import { execFile } from 'node:child_process';
import { rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createAccount } from '../../shared/tenancy/accounts.ts';
import { issueKey } from '../../shared/tenancy/apiKeys.ts';
import { createPool } from '../../shared/platform/db.ts';
import { createDataset } from '../../shared/domain/datasets.ts';
import { freePort } from '../../shared/platform/embeddedPostgres.ts';
import { createTestDatabase } from '../setup/database.ts';
import { peakRssMiB, postFile, startServer, stopServers, writeContractFile } from './support.ts';

function psqlErrorsOut(url: string, versionId: string): Promise<number> {
  const started = performance.now();
  const sql = `\\copy (SELECT row_number, field, code, message FROM version_errors WHERE version_id = '${versionId}' ORDER BY row_number, seq) TO '/dev/null'`;
  return new Promise((resolve, reject) => {
    execFile('psql', [url, '-v', 'ON_ERROR_STOP=1', '-c', sql], (error) => (error ? reject(error) : resolve(performance.now() - started)));
  });
}

async function timedGet(url: string, key: string, accept = 'application/json'): Promise<{ ms: number; bytes: number; status: number }> {
  const started = performance.now();
  const res = await fetch(url, { headers: { authorization: `Bearer ${key}`, accept } });
  let bytes = 0;
  for await (const chunk of res.body!) bytes += (chunk as Uint8Array).length;
  return { ms: performance.now() - started, bytes, status: res.status };
}

export async function benchErrors(args: string[]): Promise<void> {
  const rowsArg = args.indexOf('--rows');
  const rows = rowsArg >= 0 ? Number(args[rowsArg + 1]) : 1_000_000;
  const database = await createTestDatabase();
  const pool = createPool(database.url, 2, 'bench');
  const account = await createAccount(pool, 'Bench');
  const { key } = await issueKey(pool, account.id, 'live');
  const port = await freePort();
  const env = { DATABASE_URL: database.url, PORT: String(port), LOG_LEVEL: 'warn' };
  const worker = await startServer('dist/worker/main.js', { ...env, LOG_LEVEL: 'info' }, /worker started/);
  const web = await startServer('dist/api/main.js', env, 'healthz');
  const base = `http://127.0.0.1:${port}`;
  const file = join(tmpdir(), `bench-all-bad-${rows}.csv`);
  const somewhatBad = join(tmpdir(), `bench-1pct-bad-${rows}.csv`);
  try {
    await writeContractFile(file, rows, 1);
    const idleRss = await peakRssMiB(web.pid!);
    const ds = await createDataset(pool, { accountId: account.id, mode: 'live' }, { externalRef: 'bench-errors' });
    const url = `${base}/v1/datasets/${ds.id}/versions`;
    const rejected = await postFile(url, key, file, 'bench-all-bad');
    if (rejected.status !== 422) throw new Error(`expected 422, got ${rejected.status} ${rejected.body.slice(0, 300)}`);
    const problem = JSON.parse(rejected.body) as { errors: unknown[]; versionId: string };
    const rssAfter422 = await peakRssMiB(web.pid!);
    const replay = await postFile(url, key, file, 'bench-all-bad');
    if (replay.body !== rejected.body) throw new Error('the replay differs from the first answer');
    const version = await timedGet(`${url}/${problem.versionId}`, key);
    const psqlMs = await psqlErrorsOut(database.url, problem.versionId);
    const rssEnd = await peakRssMiB(web.pid!);

    // 1% bad rows: what a user fixes. The rejected rows come back from the kept file.
    await writeContractFile(somewhatBad, rows, 100);
    const ds2 = await createDataset(pool, { accountId: account.id, mode: 'live' }, { externalRef: 'bench-errors-1pct' });
    const url2 = `${base}/v1/datasets/${ds2.id}/versions`;
    const failed = await postFile(url2, key, somewhatBad, 'bench-1pct-bad');
    if (failed.status !== 422) throw new Error(`expected 422, got ${failed.status} ${failed.body.slice(0, 300)}`);
    const failedProblem = JSON.parse(failed.body) as { errors: unknown[]; versionId: string };
    const errorsUrl = `${url2}/${failedProblem.versionId}/errors`;
    const firstPage = await timedGet(`${errorsUrl}?limit=100`, key);
    const rejectedCsv = await timedGet(errorsUrl, key, 'text/csv');
    if (firstPage.status !== 200 || rejectedCsv.status !== 200) throw new Error(`errors resource: ${firstPage.status} / ${rejectedCsv.status}`);

    const mb = (n: number) => +(n / 1e6).toFixed(1);
    console.log(`\nbench errors: ${rows} rows, every one bad (${problem.errors.length} row errors), same database, same run`);
    console.table([
      { path: 'psql \\copy of the errors out (ceiling)', seconds: +(psqlMs / 1000).toFixed(2), 'answer MB': '', 'vs ceiling': '1.00x' },
      { path: 'POST → 422 (parse, validate, spill, answer)', seconds: +(rejected.ms / 1000).toFixed(2), 'answer MB': mb(rejected.body.length), 'vs ceiling': `${(psqlMs / rejected.ms).toFixed(2)}x` },
      { path: 'same key again → replayed 422', seconds: +(replay.ms / 1000).toFixed(2), 'answer MB': mb(replay.body.length), 'vs ceiling': `${(psqlMs / replay.ms).toFixed(2)}x` },
      { path: 'GET the failed version (first 100 errors)', seconds: +(version.ms / 1000).toFixed(2), 'answer MB': mb(version.bytes), 'vs ceiling': '' },
    ]);
    console.log(`\n1% bad rows: ${rows} rows, ${failedProblem.errors.length} row errors`);
    console.table([
      { path: 'POST → 422', seconds: +(failed.ms / 1000).toFixed(2), 'answer MB': mb(failed.body.length) },
      { path: 'GET …/errors, first page of 100', seconds: +(firstPage.ms / 1000).toFixed(3), 'answer MB': mb(firstPage.bytes) },
      { path: 'GET …/errors as text/csv (the rejected rows)', seconds: +(rejectedCsv.ms / 1000).toFixed(2), 'answer MB': mb(rejectedCsv.bytes) },
    ]);
    console.log(
      `web peak RSS: ${idleRss.toFixed(0)} MiB idle, ${rssAfter422.toFixed(0)} MiB after the 422, ${rssEnd.toFixed(0)} MiB after replay and GET, ` +
        `${(await peakRssMiB(web.pid!)).toFixed(0)} MiB after the rejected rows; ` +
        `worker ${(await peakRssMiB(worker.pid!)).toFixed(0)} MiB (target <= 256 each)`,
    );
  } finally {
    await rm(file, { force: true });
    await rm(somewhatBad, { force: true });
    await stopServers([web, worker]);
    await pool.end();
    await database.drop();
  }
}
