// `npm run bench -- fx [--rows N] [--other-every N]`: the metrics in one reporting currency on a
// realistic file of N rows (default 1,000,000; the issue's target is 10,000,000: 400,000
// customers) in three currencies, each customer in its own and one row in N (default 1,000) in
// another, with rates for every month of the series: the build, the basis it keeps, the first
// GET …/metrics?reportingCurrency= after the build and after a new set, then sequential reads
// (p50, p99) beside the plain metrics in the same run.
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { rm } from 'node:fs/promises';
import { createAccount } from '../../shared/tenancy/accounts.ts';
import { issueKey } from '../../shared/tenancy/apiKeys.ts';
import { createPool, withTransaction } from '../../shared/platform/db.ts';
import { createDataset } from '../../shared/domain/datasets.ts';
import { readFxBasis, storeFxBasis } from '../../shared/domain/monthlyFigures.ts';
import { freePort } from '../../shared/platform/embeddedPostgres.ts';
import { createTestDatabase } from '../setup/database.ts';
import { realisticBlocks, realisticHeader } from '../support/realisticContracts.ts';
import { peakRssMiB, postFile, startServer, stopServers, writeBlocks } from './support.ts';
import { timed } from './figures.ts';

const REQUESTS = Number(process.env['BENCH_REQUESTS'] ?? 200);

/** A rate with ten decimals that wanders from month to month. */
const rateOf = (currency: string, k: number, salt: number) => {
  const start = currency === 'USD' ? 0.92 : 1.17;
  const value = start * (1 + 0.05 * Math.sin((k + salt) / 7));
  return value.toFixed(10);
};

export async function benchFx(args: string[]): Promise<void> {
  const option = (name: string) => (args.includes(name) ? args[args.indexOf(name) + 1] : undefined);
  const rows = Number(option('--rows') ?? 1_000_000);
  const otherEvery = Number(option('--other-every') ?? 1000);
  const database = await createTestDatabase();
  const pool = createPool(database.url, 2, 'bench');
  const account = await createAccount(pool, 'Bench');
  const { key } = await issueKey(pool, account.id, 'live');
  const ds = await createDataset(pool, { accountId: account.id, mode: 'live' }, { externalRef: `bench-fx-${rows}` });
  const port = await freePort();
  const env = { DATABASE_URL: database.url, PORT: String(port), LOG_LEVEL: 'warn' };
  const worker = await startServer('dist/worker/main.js', { ...env, LOG_LEVEL: 'info' }, /worker started/);
  const web = await startServer('dist/api/main.js', env, 'healthz');
  const base = `http://127.0.0.1:${port}`;
  const v1 = `${base}/v1/datasets/${ds.id}`;
  const file = join(tmpdir(), `bench-fx-${rows}.csv`);
  const get = async (url: string) => {
    const started = performance.now();
    const res = await fetch(url, { headers: { authorization: `Bearer ${key}` } });
    const body = await res.text();
    if (res.status !== 200) throw new Error(`${url}: ${res.status} ${body.slice(0, 300)}`);
    return { ms: performance.now() - started, json: JSON.parse(body) as Record<string, unknown> };
  };
  const upload = async (salt: number, months: number[]) => {
    const lines = ['base,EUR'];
    for (const k of months) for (const c of ['GBP', 'USD']) lines.push(`${Math.floor(k / 12)}-${String((k % 12) + 1).padStart(2, '0')},${c},${rateOf(c, k, salt)}`);
    const res = await fetch(`${base}/v1/exchange-rates`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'text/csv', 'idempotency-key': `bench-fx-${salt}` },
      body: lines.join('\n'),
    });
    if (res.status !== 201) throw new Error(`rates: ${res.status} ${await res.text()}`);
  };
  try {
    const shape = { currencies: ['EUR', 'USD', 'GBP'], otherCurrencyEvery: otherEvery };
    await writeBlocks(file, realisticHeader(shape), realisticBlocks(0, rows, rows, shape));
    const built = await postFile(`${v1}/versions`, key, file, `bench-fx-${rows}`);
    if (built.status !== 201) throw new Error(`build: ${built.status} ${built.body.slice(0, 300)}`);
    const versionId = (JSON.parse(built.body) as { id: string }).id;
    const counts = await pool.query<{ customers: string; several: string }>(
      `SELECT count(*) AS customers, count(*) FILTER (WHERE n > 1) AS several
       FROM (SELECT customer, count(*) AS n FROM version_customers WHERE version_id = $1 GROUP BY customer) c`,
      [versionId],
    );
    const { customers, several } = counts.rows[0]!;
    console.log(
      `realistic ${rows.toLocaleString('en')} rows (EUR, USD, GBP; one row in ${otherEvery} in another currency) built in ${(built.ms / 1000).toFixed(1)} s: ` +
        `${Number(customers).toLocaleString('en')} customers, ${Number(several).toLocaleString('en')} in several currencies`,
    );
    const plain = await get(`${v1}/metrics`);
    const months = [...new Set((plain.json['monthly'] as { month: string }[]).map((m) => m.month))].map((m) => Number(m.slice(0, 4)) * 12 + Number(m.slice(5, 7)) - 1);
    await upload(0, months);
    const first = await get(`${v1}/metrics?reportingCurrency=EUR`);
    const reporting = first.json['reporting'] as { monthly: unknown[]; missingRates: unknown[] };
    if (reporting.missingRates.length > 0) throw new Error(`missing rates: ${JSON.stringify(reporting.missingRates.slice(0, 3))}`);
    const otherCurrency = await get(`${v1}/metrics?reportingCurrency=USD`);
    await upload(1, months);
    const afterNewSet = await get(`${v1}/metrics?reportingCurrency=EUR`);
    // The basis again, from the cells the build kept, as the backfill job or a first reporting read makes it for a version without one (figures computed in SQL).
    await pool.query('UPDATE version_fx SET basis = NULL WHERE version_id = $1', [versionId]);
    const cellsStarted = performance.now();
    await readFxBasis(pool, versionId);
    console.log(`the basis made again from the build's cells and its customers of several currencies (a version without one): ${(performance.now() - cellsStarted).toFixed(0)} ms`);
    // The basis again, made from every stored customer, as for a version built before the build kept its cells.
    const basisStarted = performance.now();
    await withTransaction(pool, async (client) => {
      const series = await client.query<{ currency: string; first: number; last: number }>(
        'SELECT currency::text AS currency, first_month AS first, last_month AS last FROM version_series WHERE version_id = $1 ORDER BY currency',
        [versionId],
      );
      // Made again as the build made it (the same basis replaces it).
      await client.query('DELETE FROM version_fx WHERE version_id = $1', [versionId]);
      await storeFxBasis(client, versionId, series.rows);
    });
    const basisMs = performance.now() - basisStarted;
    const basisBytes = (await pool.query<{ bytes: number }>('SELECT pg_column_size(basis) AS bytes FROM version_fx WHERE version_id = $1', [versionId])).rows[0]!.bytes;
    console.log(
      `the basis (${(basisBytes / 1024).toFixed(0)} KiB) made from every customer, as for a version built before migration 021: ${basisMs.toFixed(0)} ms`,
    );
    console.log(
      `first GET …/metrics?reportingCurrency=EUR right after the account's first set of rates, nothing made ahead yet (its basis made at the read from the build's cells): ${first.ms.toFixed(0)} ms (${reporting.monthly.length} months); ` +
        `then ?reportingCurrency=USD: ${otherCurrency.ms.toFixed(0)} ms; EUR after a new set: ${afterNewSet.ms.toFixed(0)} ms`,
    );
    // The account converts now: a build of the same file makes its basis ahead (the backfill-figures job), and its first reporting read finds it.
    await aheadOfTheFirstRead();
    async function aheadOfTheFirstRead() {
      const rebuilt = await postFile(`${v1}/versions`, key, file, `bench-fx-${rows}-again`);
      if (rebuilt.status !== 201) throw new Error(`build: ${rebuilt.status} ${rebuilt.body.slice(0, 300)}`);
      const rebuiltId = (JSON.parse(rebuilt.body) as { id: string }).id;
      const waitStarted = performance.now();
      const until = async (what: string, sql: string) => {
        while ((await pool.query(sql, [rebuiltId])).rows.length === 0) {
          if (performance.now() - waitStarted > 180_000) throw new Error(`no ${what} made ahead within 3 minutes`);
          await new Promise((r) => setTimeout(r, 50));
        }
        return performance.now() - waitStarted;
      };
      const basisMs = await until('basis', 'SELECT 1 FROM version_fx WHERE version_id = $1 AND basis IS NOT NULL');
      // Its figures in each of the set's three currencies, converted ahead (fxAnswers.ts).
      const answersMs = await until('converted figures', 'SELECT 1 FROM version_fx_answers WHERE version_id = $1 HAVING count(*) = 3');
      const ahead = await get(`${v1}/metrics?reportingCurrency=EUR`);
      const aheadCohorts = await get(`${v1}/cohorts?reportingCurrency=GBP`);
      console.log(
        `built again, the account converting: its basis made ahead ${basisMs.toFixed(0)} ms after the build's answer, its figures converted ahead ${answersMs.toFixed(0)} ms after; ` +
          `first GET …/metrics?reportingCurrency=EUR: ${ahead.ms.toFixed(0)} ms, first GET …/cohorts?reportingCurrency=GBP: ${aheadCohorts.ms.toFixed(0)} ms`,
      );
    }
    const firstCohorts = await get(`${v1}/cohorts?reportingCurrency=EUR`);
    console.log(`first GET …/cohorts?reportingCurrency=EUR: ${firstCohorts.ms.toFixed(0)} ms`);
    const table: Record<string, string | number>[] = [];
    for (const [name, url] of [
      ['GET …/metrics (baseline)', `${v1}/metrics`],
      ['GET …/metrics?reportingCurrency=EUR', `${v1}/metrics?reportingCurrency=EUR`],
      ['GET …/metrics?reportingCurrency=GBP&from=…&to=… (a year)', `${v1}/metrics?reportingCurrency=GBP&from=2022-01&to=2022-12`],
      ['GET …/cohorts (baseline)', `${v1}/cohorts`],
      ['GET …/cohorts?reportingCurrency=EUR', `${v1}/cohorts?reportingCurrency=EUR`],
      ['GET …/customers?month=2022-06 (baseline)', `${v1}/customers?month=2022-06&limit=100`],
      ['GET …/customers?month=2022-06&reportingCurrency=EUR', `${v1}/customers?month=2022-06&limit=100&reportingCurrency=EUR`],
    ] as const) {
      await timed(url, key, 5);
      const t = await timed(url, key, REQUESTS);
      table.push({ read: name, 'p50 ms': t.p50.toFixed(1), 'p99 ms': t.p99.toFixed(1), KB: (t.bytes / 1024).toFixed(0) });
    }
    console.log(`\nbench fx: ${REQUESTS} sequential requests each, same run; peak RSS web ${await peakRssMiB(web.pid!)} MiB, worker ${await peakRssMiB(worker.pid!)} MiB`);
    console.table(table);
  } finally {
    await pool.end();
    await stopServers([web, worker]);
    await rm(file, { force: true });
    await database.drop();
  }
}
