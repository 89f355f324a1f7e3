// `npm run bench -- figures [--rows N]`: the reads of a version's monthly figures on a realistic
// file of N rows (default 1,000,000; the issue's target is 10,000,000: 400,000 customers), built
// through the API and a worker: GET …/metrics, GET …/cohorts and GET …/customers?month= (the
// first, middle and last months of the series, a page of 100 and the page after it, filtered by
// movement), sequential requests, p50 and p99 beside GET /v1/datasets/{id} in the same run.
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { rm } from 'node:fs/promises';
import { realisticBlocks, realisticHeader } from '../support/realisticContracts.ts';
import { peakRssMiB, postFile, startBenchService, writeBlocks } from './support.ts';

const REQUESTS = Number(process.env['BENCH_REQUESTS'] ?? 200);

export function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}

export async function timed(url: string, key: string, n: number): Promise<{ p50: number; p99: number; bytes: number }> {
  const ms: number[] = [];
  let bytes = 0;
  for (let i = 0; i < n; i++) {
    const started = performance.now();
    const res = await fetch(url, { headers: { authorization: `Bearer ${key}` } });
    const body = await res.text();
    if (res.status !== 200) throw new Error(`${url}: ${res.status} ${body.slice(0, 200)}`);
    ms.push(performance.now() - started);
    bytes = body.length;
  }
  ms.sort((a, b) => a - b);
  return { p50: percentile(ms, 50), p99: percentile(ms, 99), bytes };
}

export async function benchFigures(args: string[]): Promise<void> {
  const option = (name: string) => (args.includes(name) ? args[args.indexOf(name) + 1] : undefined);
  const rows = Number(option('--rows') ?? 1_000_000);
  const service = await startBenchService(`bench-figures-${rows}`);
  const { key, base, web, worker } = service;
  const ds = { id: service.datasetId };
  const file = join(tmpdir(), `bench-figures-${rows}.csv`);
  try {
    await writeBlocks(file, realisticHeader(), realisticBlocks(0, rows, rows));
    const built = await postFile(`${base}/v1/datasets/${ds.id}/versions`, key, file, `bench-figures-${rows}`);
    if (built.status !== 201) throw new Error(`build: ${built.status} ${built.body.slice(0, 300)}`);
    console.log(`realistic ${rows.toLocaleString('en')} rows built in ${(built.ms / 1000).toFixed(1)} s; peak RSS web ${await peakRssMiB(web.pid!)} MiB, worker ${await peakRssMiB(worker.pid!)} MiB`);
    const metrics = (await (await fetch(`${base}/v1/datasets/${ds.id}/metrics`, { headers: { authorization: `Bearer ${key}` } })).json()) as { monthly: { month: string }[] };
    const months = [...new Set(metrics.monthly.map((m) => m.month))];
    const [first, middle, last] = [months[0]!, months[Math.floor(months.length / 2)]!, months.at(-1)!];
    const v1 = `${base}/v1/datasets/${ds.id}`;
    const page2 = async (month: string) => {
      const page = (await (await fetch(`${v1}/customers?month=${month}&limit=100`, { headers: { authorization: `Bearer ${key}` } })).json()) as { nextCursor: string | null };
      return `${v1}/customers?month=${month}&limit=100${page.nextCursor ? `&cursor=${page.nextCursor}` : ''}`;
    };
    const reads: [string, string][] = [
      ['GET /v1/datasets/{id} (baseline)', v1],
      ['GET …/metrics (whole series)', `${v1}/metrics`],
      ['GET …/cohorts', `${v1}/cohorts`],
      ['GET …/cohorts?currency=EUR', `${v1}/cohorts?currency=EUR`],
      [`GET …/customers?month=${first} (first)`, `${v1}/customers?month=${first}&limit=100`],
      [`GET …/customers?month=${middle}`, `${v1}/customers?month=${middle}&limit=100`],
      [`GET …/customers?month=${middle}, 2nd page`, await page2(middle)],
      [`GET …/customers?month=${last} (last)`, `${v1}/customers?month=${last}&limit=100`],
      [`GET …/customers?month=${middle}&movement=churn`, `${v1}/customers?month=${middle}&movement=churn&limit=100`],
      [`GET …/customers?month=${middle}&movement=newBusiness&currency=JPY`, `${v1}/customers?month=${middle}&movement=newBusiness&currency=JPY&limit=100`],
    ];
    const table: Record<string, string | number>[] = [];
    for (const [name, url] of reads) {
      await timed(url, key, 5); // warm
      const t = await timed(url, key, REQUESTS);
      table.push({ read: name, 'p50 ms': t.p50.toFixed(1), 'p99 ms': t.p99.toFixed(1), 'KB': (t.bytes / 1024).toFixed(0) });
    }
    console.log(`\nbench figures: ${REQUESTS} sequential requests each, realistic ${rows.toLocaleString('en')} rows (${months.length} months), same run`);
    console.table(table);
  } finally {
    await service.stop();
    await rm(file, { force: true });
  }
}
