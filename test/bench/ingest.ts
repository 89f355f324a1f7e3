// `npm run bench -- ingest [--rows N] [--large]`: a contract file POSTed as text/csv until 201,
// beside psql \copy of the same file into an equivalent table (the ceiling) and csv-parse alone
// (the parser's ceiling), in the same run; peak RSS of the web and worker processes; the same file
// with 1% bad rows until 422; and 200 sequential 10-row uploads. The processes run the build (dist/),
// as the Procfile does.
import { execFile } from 'node:child_process';
import { createReadStream } from 'node:fs';
import { rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse } from 'csv-parse';
import { createAccount } from '../../shared/tenancy/accounts.ts';
import { issueKey } from '../../shared/tenancy/apiKeys.ts';
import { createPool } from '../../shared/platform/db.ts';
import { createDataset } from '../../shared/domain/datasets.ts';
import { freePort } from '../../shared/platform/embeddedPostgres.ts';
import { createTestDatabase } from '../setup/database.ts';
import { CONTRACT_HEADER, contractBlocks } from '../support/contracts.ts';
import { peakRssMiB, postFile, startServer, stopServers, writeContractFile } from './support.ts';

function psqlCopy(url: string, path: string): Promise<number> {
  const started = performance.now();
  return new Promise((resolve, reject) => {
    execFile('psql', [url, '-v', 'ON_ERROR_STOP=1', '-c', `\\copy bench_copy (contract_id, customer, product, start_date, end_date, amount, currency) FROM '${path}' CSV HEADER`], (error) =>
      error ? reject(error) : resolve(performance.now() - started),
    );
  });
}

async function csvParseAlone(path: string): Promise<number> {
  const started = performance.now();
  let n = 0;
  for await (const _record of createReadStream(path).pipe(parse({ bom: true }))) n++;
  return performance.now() - started;
}

const pct = (values: number[], p: number) => values.toSorted((a, b) => a - b)[Math.min(values.length - 1, Math.floor((p / 100) * values.length))]!;

export async function benchIngest(args: string[]): Promise<void> {
  const rowsArg = args.indexOf('--rows');
  const sizes = [rowsArg >= 0 ? Number(args[rowsArg + 1]) : 1_000_000, ...(args.includes('--large') ? [10_000_000] : [])];
  const database = await createTestDatabase();
  const pool = createPool(database.url, 2, 'bench');
  const account = await createAccount(pool, 'Bench');
  const { key } = await issueKey(pool, account.id, 'live');
  await pool.query(`CREATE TABLE bench_copy (contract_id text, customer text NOT NULL, product text, start_date date, end_date date, amount numeric(20, 2), currency char(3))`);

  const port = await freePort();
  const env = { DATABASE_URL: database.url, PORT: String(port), LOG_LEVEL: 'warn' };
  // The worker's build summaries are kept, for the phase timings in the report.
  const builds: Record<string, unknown>[] = [];
  const keepBuilds = (line: string) => void (line.includes('"version built"') && builds.push(JSON.parse(line)));
  const worker = await startServer('dist/worker/main.js', { ...env, LOG_LEVEL: 'info' }, /worker started/, keepBuilds);
  const web = await startServer('dist/api/main.js', env, 'healthz');
  const base = `http://127.0.0.1:${port}`;
  const table: Record<string, string | number>[] = [];
  try {
    for (const rows of sizes) {
      const good = join(tmpdir(), `bench-good-${rows}.csv`);
      const bad = join(tmpdir(), `bench-bad-${rows}.csv`);
      const bytes = await writeContractFile(good, rows);
      await writeContractFile(bad, rows, 100);
      const mb = (bytes / 1e6).toFixed(0);

      await pool.query('TRUNCATE bench_copy');
      const copyMs = await psqlCopy(database.url, good);
      await pool.query('TRUNCATE bench_copy');
      const parseMs = await csvParseAlone(good);
      const ds = await createDataset(pool, { accountId: account.id, mode: 'live' }, { externalRef: `bench-${rows}` });
      const ours = await postFile(`${base}/v1/datasets/${ds.id}/versions`, key, good, `bench-good-${rows}`);
      if (ours.status !== 201) throw new Error(`good file: ${ours.status} ${ours.body.slice(0, 300)}`);
      const rejected = await postFile(`${base}/v1/datasets/${ds.id}/versions`, key, bad, `bench-bad-${rows}`);
      if (rejected.status !== 422) throw new Error(`bad file: ${rejected.status} ${rejected.body.slice(0, 300)}`);
      const errors = (JSON.parse(rejected.body) as { errors: unknown[] }).errors.length;

      const rate = (ms: number) => Math.round(rows / (ms / 1000));
      table.push(
        { rows, 'file MB': mb, path: 'psql \\copy (ceiling)', seconds: +(copyMs / 1000).toFixed(2), 'rows/s': rate(copyMs), 'vs \\copy': '1.00x' },
        { rows, 'file MB': mb, path: 'csv-parse alone', seconds: +(parseMs / 1000).toFixed(2), 'rows/s': rate(parseMs), 'vs \\copy': `${(copyMs / parseMs).toFixed(2)}x` },
        { rows, 'file MB': mb, path: 'POST text/csv → 201', seconds: +(ours.ms / 1000).toFixed(2), 'rows/s': rate(ours.ms), 'vs \\copy': `${(copyMs / ours.ms).toFixed(2)}x` },
        { rows, 'file MB': mb, path: `1% bad → 422 (${errors} errors)`, seconds: +(rejected.ms / 1000).toFixed(2), 'rows/s': rate(rejected.ms), 'vs \\copy': `${(copyMs / rejected.ms).toFixed(2)}x` },
      );
      await rm(good);
      await rm(bad);
      console.log(`peak RSS after ${rows} rows: web ${(await peakRssMiB(web.pid!)).toFixed(0)} MiB, worker ${(await peakRssMiB(worker.pid!)).toFixed(0)} MiB`);
    }

    // Small files: 200 sequential 10-row uploads, each POST until 201.
    const ds = await createDataset(pool, { accountId: account.id, mode: 'live' }, { externalRef: 'bench-small' });
    const small = CONTRACT_HEADER + [...contractBlocks(0, 10)].join('');
    const times: number[] = [];
    for (let i = 0; i < 200; i++) {
      const started = performance.now();
      const res = await fetch(`${base}/v1/datasets/${ds.id}/versions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'idempotency-key': `small-${i}`, 'content-type': 'text/csv' },
        body: small,
      });
      await res.arrayBuffer();
      if (res.status !== 201) throw new Error(`small upload ${i}: ${res.status}`);
      times.push(performance.now() - started);
    }

    // A backlog: 50 small builds queued at once (Prefer: wait=0), timed until the last is built.
    const backlogDs = await createDataset(pool, { accountId: account.id, mode: 'live' }, { externalRef: 'bench-backlog' });
    const backlogStarted = performance.now();
    for (let i = 0; i < 50; i++) {
      const res = await fetch(`${base}/v1/datasets/${backlogDs.id}/versions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'idempotency-key': `backlog-${i}`, 'content-type': 'text/csv', prefer: 'wait=0' },
        body: small,
      });
      await res.arrayBuffer();
    }
    const queuedMs = performance.now() - backlogStarted;
    for (;;) {
      const { rows } = await pool.query(`SELECT count(*) FILTER (WHERE status IN ('active', 'superseded', 'failed')) AS done FROM versions WHERE dataset_id = $1`, [backlogDs.id]);
      if (Number(rows[0].done) === 50) break;
      await new Promise((r) => setTimeout(r, 10));
    }
    const drainedMs = performance.now() - backlogStarted;

    console.log('\nbench ingest: end to end through the API and a worker, same database, same run');
    console.table(table);
    console.log('worker build phases (ms):');
    console.table(builds.filter((b) => Number(b['rows']) > 1000).map(({ rows, outcome, errors, copyMs, checkMs, readsMs, commitMs }) => ({ rows, outcome, errors, copyMs, checkMs, readsMs, commitMs })));
    console.log(`peak RSS: web ${(await peakRssMiB(web.pid!)).toFixed(0)} MiB, worker ${(await peakRssMiB(worker.pid!)).toFixed(0)} MiB (target <= 256 each)`);
    console.log(`200 sequential 10-row uploads, POST → 201: p50 ${pct(times, 50).toFixed(1)} ms, p99 ${pct(times, 99).toFixed(1)} ms (targets 50 / 250)`);
    console.log(`backlog: 50 small builds queued in ${queuedMs.toFixed(0)} ms, all built ${drainedMs.toFixed(0)} ms after the first was queued`);
  } finally {
    await stopServers([web, worker]);
    await pool.end();
    await database.drop();
  }
}
