// `npm run bench -- ingest [--rows N] [--runs R] [--shapes simple,realistic,quoted] [--large] [--quick | --small-only]`:
// contract files POSTed as text/csv until 201, alternating with psql \copy of the same file into an
// equivalent table (the ceiling), R runs each, medians and ranges; csv-parse alone (the parser's
// ceiling); the worker's build phases; peak RSS of the web and worker processes; each file with 1%
// bad rows until 422 (up to 1M rows); and 200 sequential 10-row uploads. File shapes: `simple`,
// the generator the service was tuned on (ASCII, no quotes, ~64 bytes a row); `realistic`, shaped
// like exports from spreadsheets and CRMs (names in many scripts, quoted delimiters and quotes,
// multi-year terms, a customer per 25 rows; test/support/realisticContracts.ts); `quoted`, the
// same with every field quoted and CRLF line ends. --large adds realistic files of 10M rows. The
// processes run the build (dist/), as the Procfile does. --quick: the good files only; --small-only:
// the small uploads only.
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
import { type RealisticShape, realisticBlocks, realisticHeader, shapeName } from '../support/realisticContracts.ts';
import { cpuSeconds, cpuSpent, peakRssMiB, postFile, startServer, stopServers, writeBlocks } from './support.ts';

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
const median = (values: number[]) => {
  const sorted = values.toSorted((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
};
const seconds = (ms: number) => (ms / 1000).toFixed(2);
const range = (values: number[]) => `${seconds(Math.min(...values))}–${seconds(Math.max(...values))}`;

type Shape = { name: string; describe: string; write: (path: string, rows: number, badEvery?: number) => Promise<number> };

const SHAPES: Record<string, Shape> = {
  simple: {
    name: 'simple',
    describe: 'simple: ASCII, no quotes, LF',
    write: (path, rows, badEvery) => writeBlocks(path, CONTRACT_HEADER, contractBlocks(0, rows, badEvery === undefined ? {} : { badEvery })),
  },
  realistic: realistic('realistic', {}),
  quoted: realistic('quoted', { quoteAll: true, crlf: true }),
};

function realistic(name: string, shape: RealisticShape): Shape {
  return {
    name,
    describe: shapeName(shape),
    write: (path, rows, badEvery) => writeBlocks(path, realisticHeader(shape), realisticBlocks(0, rows, rows, { ...shape, ...(badEvery !== undefined && { badEvery }) })),
  };
}

type Phases = { startMs: number; copyMs: number; checkMs: number; readsMs: number; figuresMs: number; commitMs: number; ms: number; readsIn: string; tallyGaveUpOn?: string };

export async function benchIngest(args: string[]): Promise<void> {
  const option = (name: string) => (args.includes(name) ? args[args.indexOf(name) + 1] : undefined);
  const rows = Number(option('--rows') ?? 1_000_000);
  const runs = Number(option('--runs') ?? 3);
  /** Good files only: no 1%-bad files, no small uploads (for quick comparisons while working). */
  const quick = args.includes('--quick');
  const shapes = (option('--shapes') ?? 'simple,realistic,quoted').split(',').map((n) => SHAPES[n] ?? (() => { throw new Error(`unknown shape ${n}: ${Object.keys(SHAPES).join(', ')}`); })());
  /** The small uploads alone: no large file (for comparisons of a small build's latency). */
  const smallOnly = args.includes('--small-only');
  const cases = smallOnly ? [] : [...shapes.map((shape) => ({ shape, rows })), ...(args.includes('--large') ? [{ shape: SHAPES['realistic']!, rows: 10_000_000 }] : [])];
  const database = await createTestDatabase();
  const pool = createPool(database.url, 2, 'bench');
  const account = await createAccount(pool, 'Bench');
  const { key } = await issueKey(pool, account.id, 'live');
  await pool.query(`CREATE TABLE bench_copy (contract_id text, customer text NOT NULL, product text, start_date date, end_date date, amount numeric(20, 2), currency char(3))`);

  const port = await freePort();
  const env = { DATABASE_URL: database.url, PORT: String(port), LOG_LEVEL: 'warn' };
  // The worker's build summaries, by version, for the phase timings in the report.
  const builds = new Map<string, Phases>();
  const keepBuilds = (line: string) => {
    if (!line.includes('"version built"')) return;
    const built = JSON.parse(line) as Phases & { versionId: string };
    builds.set(built.versionId, built);
  };
  const worker = await startServer('dist/worker/main.js', { ...env, LOG_LEVEL: 'info' }, /worker started/, keepBuilds);
  const web = await startServer('dist/api/main.js', env, 'healthz');
  const base = `http://127.0.0.1:${port}`;
  const table: Record<string, string | number>[] = [];
  const phaseTable: Record<string, string | number>[] = [];
  const cpuTable: Record<string, string | number>[] = [];
  try {
    for (const { shape, rows } of cases) {
      const good = join(tmpdir(), `bench-${shape.name}-${rows}.csv`);
      const bytes = await shape.write(good, rows);
      const mb = (bytes / 1e6).toFixed(0);
      const label = `${shape.name} ${rows.toLocaleString('en')}`;
      console.log(`${label}: ${shape.describe}, ${mb} MB (${(bytes / rows).toFixed(0)} bytes a row)`);

      const copies: number[] = [];
      const posts: number[] = [];
      const phases: Phases[] = [];
      const cpus: Record<string, number>[] = [];
      const ds = await createDataset(pool, { accountId: account.id, mode: 'live' }, { externalRef: `bench-${shape.name}-${rows}` });
      for (let run = 0; run < runs; run++) {
        await pool.query('TRUNCATE bench_copy');
        const beforeCopy = await cpuSeconds({});
        copies.push(await psqlCopy(database.url, good));
        const copyCpu = cpuSpent(beforeCopy, await cpuSeconds({}));
        await pool.query('TRUNCATE bench_copy');
        const beforePost = await cpuSeconds({ web: web.pid!, worker: worker.pid! });
        const ours = await postFile(`${base}/v1/datasets/${ds.id}/versions`, key, good, `bench-${shape.name}-${rows}-${run}`);
        cpus.push({ ...cpuSpent(beforePost, await cpuSeconds({ web: web.pid!, worker: worker.pid! })), copyPostgres: copyCpu['postgres']! });
        if (ours.status !== 201) throw new Error(`${label}: ${ours.status} ${ours.body.slice(0, 300)}`);
        posts.push(ours.ms);
        const versionId = (JSON.parse(ours.body) as { id: string }).id;
        for (let wait = 0; !builds.has(versionId) && wait < 500; wait++) await new Promise((r) => setTimeout(r, 20));
        const built = builds.get(versionId);
        if (built) phases.push({ ...built, ms: ours.ms - built.ms });
      }
      const parseMs = await csvParseAlone(good);
      const copyMs = median(copies);
      const postMs = median(posts);
      const rate = (ms: number) => Math.round(rows / (ms / 1000));
      table.push(
        { file: label, MB: mb, path: 'psql \\copy (ceiling)', 'median s': seconds(copyMs), range: range(copies), 'rows/s': rate(copyMs), 'vs \\copy': '1.00x' },
        { file: label, MB: mb, path: 'csv-parse alone', 'median s': seconds(parseMs), range: '', 'rows/s': rate(parseMs), 'vs \\copy': `${(copyMs / parseMs).toFixed(2)}x` },
        { file: label, MB: mb, path: 'POST text/csv → 201', 'median s': seconds(postMs), range: range(posts), 'rows/s': rate(postMs), 'vs \\copy': `${(copyMs / postMs).toFixed(2)}x` },
      );
      if (phases.length > 0) {
        const of = (name: keyof Phases) => Math.round(median(phases.map((p) => Number(p[name]))));
        const cpu = (name: string) => median(cpus.map((c) => c[name]!)).toFixed(2);
        cpuTable.push({ file: label, '\\copy: postgres': cpu('copyPostgres'), 'POST: web': cpu('web'), worker: cpu('worker'), postgres: cpu('postgres'), total: median(cpus.map((c) => c['web']! + c['worker']! + c['postgres']!)).toFixed(2) });
        phaseTable.push({ file: label, 'upload+wait': of('ms'), 'parse+validate+tally+COPY': of('copyMs'), duplicates: of('checkMs'), 'reads (tally, book)': of('readsMs'), 'figures stored': of('figuresMs'), commit: of('commitMs'), 'reads in': phases[0]!.readsIn + (phases[0]!.tallyGaveUpOn ? ` (tally outgrew: ${phases[0]!.tallyGaveUpOn})` : '') });
      }
      if (rows <= 1_000_000 && !quick) {
        const bad = join(tmpdir(), `bench-${shape.name}-bad-${rows}.csv`);
        await shape.write(bad, rows, 100);
        const rejected = await postFile(`${base}/v1/datasets/${ds.id}/versions`, key, bad, `bench-${shape.name}-bad-${rows}`);
        if (rejected.status !== 422) throw new Error(`${label}, 1% bad: ${rejected.status} ${rejected.body.slice(0, 300)}`);
        const errors = (JSON.parse(rejected.body) as { errors: unknown[] }).errors.length;
        table.push({ file: label, MB: mb, path: `1% bad → 422 (${errors} errors)`, 'median s': seconds(rejected.ms), range: '', 'rows/s': rate(rejected.ms), 'vs \\copy': `${(copyMs / rejected.ms).toFixed(2)}x` });
        await rm(bad);
      }
      await rm(good);
      console.log(`peak RSS after ${label}: web ${(await peakRssMiB(web.pid!)).toFixed(0)} MiB, worker ${(await peakRssMiB(worker.pid!)).toFixed(0)} MiB`);
    }

    // Small files (not with --quick): 200 sequential 10-row uploads, each POST until 201; then a backlog.
    const smallUploads = async (): Promise<string[]> => {
      const ds = await createDataset(pool, { accountId: account.id, mode: 'live' }, { externalRef: 'bench-small' });
      const small = CONTRACT_HEADER + [...contractBlocks(0, 10)].join('');
      const times: number[] = [];
      const versionIds: string[] = [];
      for (let i = 0; i < 200; i++) {
        const started = performance.now();
        const res = await fetch(`${base}/v1/datasets/${ds.id}/versions`, {
          method: 'POST',
          headers: { authorization: `Bearer ${key}`, 'idempotency-key': `small-${i}`, 'content-type': 'text/csv' },
          body: small,
        });
        const body = (await res.json()) as { id: string };
        if (res.status !== 201) throw new Error(`small upload ${i}: ${res.status}`);
        times.push(performance.now() - started);
        versionIds.push(body.id);
      }
      // Where a small upload's time goes: the worker's phases, and the rest (web, queue, waiting).
      for (let wait = 0; versionIds.some((id) => !builds.has(id)) && wait < 100; wait++) await new Promise((r) => setTimeout(r, 20));
      const built = versionIds.map((id, i) => ({ ...builds.get(id)!, post: times[i]! })).filter((b) => b.ms !== undefined);
      const of = (get: (b: (typeof built)[number]) => number) => median(built.map(get)).toFixed(1);

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
      return [
        `200 sequential 10-row uploads, POST → 201: p50 ${pct(times, 50).toFixed(1)} ms, p99 ${pct(times, 99).toFixed(1)} ms (targets 50 / 250)`,
        `  medians, ms: worker job ${of((b) => b.ms)} (start ${of((b) => b.startMs)}, parse+COPY ${of((b) => b.copyMs)}, duplicates ${of((b) => b.checkMs)}, reads ${of((b) => b.readsMs)}, figures stored ${of((b) => b.figuresMs)}, commit ${of((b) => b.commitMs)}); the rest of the POST ${of((b) => b.post - b.ms)}`,
        `backlog: 50 small builds queued in ${queuedMs.toFixed(0)} ms, all built ${drainedMs.toFixed(0)} ms after the first was queued`,
      ];
    };
    const smallReport = quick ? [] : await smallUploads();

    console.log(`\nbench ingest: end to end through the API and a worker, same database, same run; ${runs} runs alternating with \\copy, medians (range: min–max)`);
    console.table(table);
    console.log('worker build phases, good files (ms, medians; upload+wait: the POST less the build):');
    console.table(phaseTable);
    console.log('CPU seconds per run (user + system, medians; 2 cores here): PostgreSQL for \\copy; the web process, the worker and PostgreSQL for a POST:');
    console.table(cpuTable);
    console.log(`peak RSS: web ${(await peakRssMiB(web.pid!)).toFixed(0)} MiB, worker ${(await peakRssMiB(worker.pid!)).toFixed(0)} MiB (target <= 256 each)`);
    for (const line of smallReport) console.log(line);
  } finally {
    await stopServers([web, worker]);
    await pool.end();
    await database.drop();
  }
}
