// `npm run bench -- changes [--rows N]`: two realistic versions of N rows (default 1,000,000) that
// differ in 1% of their contracts (a third removed, a third with a corrected amount, a third new),
// built through the API and a worker; then GET …/versions/{id}/changes the first time (the pair
// is compared and kept: the issue's target is 5 s), again (100 ms), every page of
// …/changes/contracts (100 a page, all and changed only: 100 ms each) and the whole CSV; with the
// web process's and the worker's peak RSS (256 MiB each).
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { rm } from 'node:fs/promises';
import { realisticBlocks, realisticHeader } from '../support/realisticContracts.ts';
import { createPool } from '../../shared/platform/db.ts';
import { cpuSeconds, peakRssMiB, postFile, startBenchService, writeBlocks } from './support.ts';

/** One row in this many is removed, one corrected, and as many new ones are added: 1% in all. */
const EVERY = 300;

/** The first file's rows, corrected: row i removed when i % EVERY is 0, its amount raised by 1 when 1; then new rows. */
function* correctedBlocks(rows: number): Generator<string> {
  let i = 0;
  for (const block of realisticBlocks(0, rows, rows)) {
    const lines = block.split('\n');
    const last = lines.pop()!; // '' after the block's final line break
    const kept: string[] = [];
    for (const line of lines) {
      const k = i++ % EVERY;
      if (k === 0) continue;
      // The amount and the currency end the line, unquoted.
      kept.push(k === 1 ? line.replace(/,(\d+)\.(\d\d),([A-Z]{3})$/, (_, units: string, cents: string, currency: string) => `,${Number(units) + 1}.${cents},${currency}`) : line);
    }
    yield `${kept.join('\n')}\n${last}`;
  }
  yield* realisticBlocks(rows, rows + Math.floor(rows / EVERY), rows);
}

/** CPU seconds used so far by the PostgreSQL backends connected to the database (its web and worker connections). */
async function databaseCpuSeconds(url: string): Promise<number> {
  const pool = createPool(url, 1, 'bench-cpu');
  try {
    const { rows } = await pool.query<{ pid: number }>('SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()');
    const seconds = await cpuSeconds(Object.fromEntries(rows.map((r) => [String(r.pid), r.pid])));
    return rows.reduce((sum, r) => sum + (Number.isNaN(seconds[String(r.pid)]) ? 0 : seconds[String(r.pid)]!), 0);
  } finally {
    await pool.end();
  }
}

const percentile = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;

async function get(url: string, key: string, accept = 'application/json'): Promise<{ ms: number; body: string }> {
  const started = performance.now();
  const res = await fetch(url, { headers: { authorization: `Bearer ${key}`, accept } });
  const body = await res.text();
  if (res.status !== 200) throw new Error(`${url}: ${res.status} ${body.slice(0, 300)}`);
  return { ms: performance.now() - started, body };
}

/** Every page of a list, each timed. */
async function everyPage(url: string, key: string): Promise<{ pages: number[]; items: number }> {
  const pages: number[] = [];
  let items = 0;
  let cursor: string | null = null;
  do {
    const { ms, body } = await get(`${url}${cursor ? `&cursor=${cursor}` : ''}`, key);
    const page = JSON.parse(body) as { data: unknown[]; nextCursor: string | null };
    pages.push(ms);
    items += page.data.length;
    cursor = page.nextCursor;
  } while (cursor);
  return { pages: pages.sort((a, b) => a - b), items };
}

export async function benchChanges(args: string[]): Promise<void> {
  const option = (name: string) => (args.includes(name) ? args[args.indexOf(name) + 1] : undefined);
  const rows = Number(option('--rows') ?? 1_000_000);
  const service = await startBenchService(`bench-changes-${rows}`);
  const { key, web, worker } = service;
  const base = `${service.base}/v1/datasets/${service.datasetId}`;
  const files = [join(tmpdir(), `bench-changes-${rows}-1.csv`), join(tmpdir(), `bench-changes-${rows}-2.csv`)] as const;
  try {
    await writeBlocks(files[0], realisticHeader(), realisticBlocks(0, rows, rows));
    await writeBlocks(files[1], realisticHeader(), correctedBlocks(rows));
    const ids: string[] = [];
    for (const [n, file] of files.entries()) {
      const built = await postFile(`${base}/versions`, key, file, `bench-changes-${rows}-${n}`);
      if (built.status !== 201) throw new Error(`build: ${built.status} ${built.body.slice(0, 300)}`);
      ids.push((JSON.parse(built.body) as { id: string }).id);
      console.log(`version ${n + 1}: ${rows.toLocaleString('en')} realistic rows built in ${(built.ms / 1000).toFixed(1)} s`);
    }
    const workerAfterBuilds = await peakRssMiB(worker.pid!);
    const changesUrl = `${base}/versions/${ids[1]}/changes`;
    // The machine may be shared: PostgreSQL's CPU time for the comparison tells what the wall time cannot.
    const cpuBefore = await databaseCpuSeconds(service.databaseUrl);
    const first = await get(changesUrl, key);
    const compareCpu = (await databaseCpuSeconds(service.databaseUrl)) - cpuBefore;
    const summary = JSON.parse(first.body) as { contracts: Record<string, number>; months: unknown[] };
    const later: number[] = [];
    for (let i = 0; i < 100; i++) later.push((await get(changesUrl, key)).ms);
    console.log(`later, in order: ${later.map((ms) => ms.toFixed(0)).join(" ")}`);
    later.sort((a, b) => a - b);
    const all = await everyPage(`${changesUrl}/contracts?limit=100`, key);
    const changed = await everyPage(`${changesUrl}/contracts?limit=100&change=changed`, key);
    const csv = await get(`${changesUrl}/contracts`, key, 'text/csv');

    console.log(`\nbench changes: two realistic versions of ${rows.toLocaleString('en')} rows, 1% of contracts differing`);
    console.log(`contracts ${JSON.stringify(summary.contracts)}, ${summary.months.length} restated (month, currency) entries`);
    console.table([
      { read: `GET …/changes, first (compared and kept; PostgreSQL CPU ${compareCpu.toFixed(1)} s)`, 'ms (p50)': first.ms.toFixed(0), 'p99 / max ms': '', target: '≤ 5000' },
      { read: 'GET …/changes, later (100 requests)', 'ms (p50)': percentile(later, 50).toFixed(1), 'p99 / max ms': `${percentile(later, 99).toFixed(1)} / ${later.at(-1)!.toFixed(1)}`, target: '≤ 100' },
      { read: `GET …/changes/contracts, every page of 100 (${all.pages.length} pages, ${all.items} changes)`, 'ms (p50)': percentile(all.pages, 50).toFixed(1), 'p99 / max ms': `${percentile(all.pages, 99).toFixed(1)} / ${all.pages.at(-1)!.toFixed(1)}`, target: '≤ 100' },
      { read: `GET …/changes/contracts?change=changed, every page (${changed.pages.length})`, 'ms (p50)': percentile(changed.pages, 50).toFixed(1), 'p99 / max ms': `${percentile(changed.pages, 99).toFixed(1)} / ${changed.pages.at(-1)!.toFixed(1)}`, target: '≤ 100' },
      { read: `GET …/changes/contracts as CSV (${(csv.body.length / 1024 / 1024).toFixed(1)} MB)`, 'ms (p50)': csv.ms.toFixed(0), 'p99 / max ms': '', target: '' },
    ]);
    console.log(`peak RSS: web ${(await peakRssMiB(web.pid!)).toFixed(0)} MiB, worker ${(await peakRssMiB(worker.pid!)).toFixed(0)} MiB (target ≤ 256 each; the worker's is its two builds': ${workerAfterBuilds.toFixed(0)} MiB before the first changes request)`);
  } finally {
    await service.stop();
    for (const file of files) await rm(file, { force: true });
  }
}
