// `npm run bench -- errors [--rows N]`: a file whose every row is bad (1,000,000 rows by default,
// so as many row errors), POSTed until 422; the answer streams every error from the database.
// Beside it, in the same run: psql reading the same errors out with COPY (the ceiling for
// streaming them), GET of the failed version, the idempotent replay of the 422, and the peak RSS
// of the web process, which must not grow with the number of errors.
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

async function timedGet(url: string, key: string): Promise<{ ms: number; bytes: number; status: number }> {
  const started = performance.now();
  const res = await fetch(url, { headers: { authorization: `Bearer ${key}` } });
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

    const mb = (n: number) => +(n / 1e6).toFixed(1);
    console.log(`\nbench errors: ${rows} rows, every one bad (${problem.errors.length} row errors), same database, same run`);
    console.table([
      { path: 'psql \\copy of the errors out (ceiling)', seconds: +(psqlMs / 1000).toFixed(2), 'answer MB': '', 'vs ceiling': '1.00x' },
      { path: 'POST → 422 (parse, validate, spill, answer)', seconds: +(rejected.ms / 1000).toFixed(2), 'answer MB': mb(rejected.body.length), 'vs ceiling': `${(psqlMs / rejected.ms).toFixed(2)}x` },
      { path: 'same key again → replayed 422', seconds: +(replay.ms / 1000).toFixed(2), 'answer MB': mb(replay.body.length), 'vs ceiling': `${(psqlMs / replay.ms).toFixed(2)}x` },
      { path: 'GET the failed version', seconds: +(version.ms / 1000).toFixed(2), 'answer MB': mb(version.bytes), 'vs ceiling': `${(psqlMs / version.ms).toFixed(2)}x` },
    ]);
    console.log(
      `web peak RSS: ${idleRss.toFixed(0)} MiB idle, ${rssAfter422.toFixed(0)} MiB after the 422, ${rssEnd.toFixed(0)} MiB after replay and GET; ` +
        `worker ${(await peakRssMiB(worker.pid!)).toFixed(0)} MiB (target <= 256 each)`,
    );
  } finally {
    await rm(file, { force: true });
    await stopServers([web, worker]);
    await pool.end();
    await database.drop();
  }
}
