// A version's figures in one reporting currency (contract, "One reporting currency"): converted at
// read from the version's basis (fxBasis.ts, made ahead after its build, or at the first read) with
// the set of rates in force, on the process's basis thread (fxBasisMaker.ts), unless the worker
// converted them ahead for that set (fxAnswers.ts). The answer is kept per version, set and
// currency, in the process (a version's figures and a set never change), so that a reading again
// costs no conversion, and reads that ask at once share one.
import { byBytes } from '../figures/book.ts';
import { parseMonth } from '../figures/calendar.ts';
import { type StoredChange, unpackChanges } from '../figures/customerChanges.ts';
import type { CustomerMovement } from '../figures/definitions.ts';
import { lcm, money } from '../figures/exact.ts';
import { missingRates, ratesAt, type Reporting, type ReportingCohorts } from '../figures/reporting.ts';
import type { Pool } from '../platform/db.ts';
import { badRequest } from '../platform/problems.ts';
import type { Tenant } from './datasets.ts';
import { ratesInForce } from './exchangeRates.ts';
import { convertApart, convertCohortsApart } from './fxBasisMaker.ts';
import { keptAnswer } from './fxAnswers.ts';
import { customersTableOf } from './customerTables.ts';
import { seriesMonth } from './monthlyFigures.ts';

/** A small cache that forgets the least recently used. */
class Recent<T> {
  private readonly items = new Map<string, T>();
  private readonly size: number;
  constructor(size: number) {
    this.size = size;
  }
  get(key: string): T | undefined {
    const v = this.items.get(key);
    if (v !== undefined) {
      this.items.delete(key);
      this.items.set(key, v);
    }
    return v;
  }
  set(key: string, v: T): void {
    this.items.set(key, v);
    if (this.items.size > this.size) this.items.delete(this.items.keys().next().value!);
  }
  delete(key: string): void {
    this.items.delete(key);
  }
}

const answers = new Recent<Promise<Reporting>>(64);
const cohortAnswers = new Recent<Promise<ReportingCohorts>>(16);

/** The answer kept under `key`, or the one `made` now (forgotten if it fails). */
function kept<T>(cache: Recent<Promise<T>>, key: string, made: () => Promise<T>): Promise<T> {
  let answer = cache.get(key);
  if (answer === undefined) {
    cache.set(key, (answer = made()));
    answer.catch(() => cache.delete(key));
  }
  return answer;
}

const noRates = () =>
  badRequest('There is no set of exchange rates in force: upload your month-end rates first (POST /v1/exchange-rates).', [
    { field: 'reportingCurrency', code: 'no_exchange_rates', message: 'Upload your month-end rates first: POST /v1/exchange-rates.' },
  ]);

/** The set of rates in force, which must know the reporting currency: else 400. */
export async function ratesFor(pool: Pool, tenant: Tenant, currency: string) {
  const set = await ratesInForce(pool, tenant);
  if (!set) throw noRates();
  if (!set.currencies.includes(currency)) {
    throw badRequest('The reporting currency is not in the set of rates in force.', [
      { field: 'reportingCurrency', code: 'unknown_currency', message: `The set ${set.id} has rates for ${set.currencies.join(', ')} (its base ${set.table.base} first).` },
    ]);
  }
  return set;
}

/** The `reporting` member of the metrics; 400 when no set is in force or it does not know the currency. */
export async function readReporting(pool: Pool, tenant: Tenant, versionId: string, currency: string, range: { from?: string | undefined; to?: string | undefined }) {
  const set = await ratesFor(pool, tenant, currency);
  const key = `${versionId}:${set.id}:${currency}`;
  const answer = await kept(answers, key, async () => (await keptAnswer(pool, 'metrics', versionId, set.id, currency)) ?? convertApart(pool, versionId, set.table, currency));
  const shown = answer.monthly.flatMap((m, i) => ((!range.from || m.month >= range.from) && (!range.to || m.month <= range.to) ? [i] : []));
  return {
    currency,
    exchangeRatesId: set.id,
    monthly: shown.map((i) => answer.monthly[i]!),
    missingRates: missingRates(shown.map((i) => answer.missing[i]!)),
  };
}

/** The cohorts of the whole business in the reporting currency, with the set's id and the rates it lacked. */
export async function readReportingCohorts(pool: Pool, tenant: Tenant, versionId: string, currency: string) {
  const set = await ratesFor(pool, tenant, currency);
  const key = `${versionId}:${set.id}:${currency}`;
  const answer = await kept(cohortAnswers, key, async () => (await keptAnswer(pool, 'cohorts', versionId, set.id, currency)) ?? convertCohortsApart(pool, versionId, set.table, currency));
  return { exchangeRatesId: set.id, data: answer.data, missingRates: answer.missing };
}

export type ReportingCustomerMonth = {
  object: 'customer_month';
  customer: string;
  currency: string;
  month: string;
  previousMrr: string | null;
  mrr: string | null;
  movement: CustomerMovement | null;
};

/** Lines read per currency per query while a page fills, after the first query (a page and one more). */
const SCAN_LINES = 500;

type Line = { customer: string; currency: string; first_month: number; changes: Buffer };

/** A line's exact MRR (cents, n ÷ den) at the end of month `m`: its last change at or before m. */
function valueAt(changes: readonly StoredChange[], m: number): { n: bigint; den: bigint } {
  let value = { n: 0n, den: 1n };
  for (const c of changes) {
    if (c.month > m) break;
    value = { n: c.mrr, den: c.den };
  }
  return value;
}

/**
 * A page of the customers with MRR at the end of `month` or of the month before, in the
 * reporting currency: each customer across all their currencies, both month ends converted at
 * the month's rates (contract, "One reporting currency"), ordered by customer (as UTF-8 bytes).
 * A customer whose conversion needs a rate the set lacks has null figures and no movement.
 */
export async function readReportingCustomerMonths(
  pool: Pool,
  tenant: Tenant,
  versionId: string,
  currency: string,
  query: { month: string; movement?: CustomerMovement | undefined; limit: number; after?: string | undefined },
) {
  const [set, table] = await Promise.all([ratesFor(pool, tenant, currency), customersTableOf(pool, versionId)]);
  const month = parseMonth(query.month);
  const [{ rows: series }, { rows: held }] = await Promise.all([
    pool.query<{ currency: string; covers: boolean }>(
      'SELECT currency::text AS currency, first_month <= $2 AND last_month >= $2 AS covers FROM version_series WHERE version_id = $1',
      [versionId, month],
    ),
    pool.query<{ currency: string }>(
      `SELECT DISTINCT s.currency::text AS currency FROM version_series s, unnest(ARRAY[$2::int, $2::int - 1]) AS m(at)
       WHERE s.version_id = $1 AND m.at BETWEEN s.first_month AND s.last_month AND (${seriesMonth('s', 'm.at')}->>'activeCustomers')::int > 0`,
      [versionId, month],
    ),
  ]);
  const monthRates = ratesAt(set.table, currency, month, held.map((h) => h.currency));
  const missingRates = 'missing' in monthRates ? [...new Set(monthRates.missing)].sort(byBytes).map((c) => ({ month: query.month, currency: c })) : [];
  const covering = series.filter((s) => s.covers).map((s) => s.currency);
  const all = series.map((s) => s.currency);

  const data: ReportingCustomerMonth[] = [];
  let after = query.after;
  // A page's worth and one more per currency at first (most customers hold one currency, most hold MRR in the month); more as pages come short.
  let scan = Math.min(SCAN_LINES, query.limit + 1);
  for (;;) {
    // Each currency's next lines in customer order; a customer is whole up to the first currency that filled its batch.
    const { rows } = await pool.query<Line>(
      // char(3), as the column: compared as text, the primary key went unused (a whole scan of the version's customers per currency: 0.7 s a page at 10M rows).
      `SELECT x.* FROM unnest($2::char(3)[]) AS cur(c) CROSS JOIN LATERAL (
         SELECT customer, currency::text AS currency, first_month, changes FROM ${table}
         WHERE version_id = $1 AND currency = cur.c AND first_month <= $3 AND last_month >= $3 AND ($4::text IS NULL OR customer > $4::text COLLATE "C")
         ORDER BY customer LIMIT $5) x`,
      [versionId, covering, month, after ?? null, scan],
    );
    let horizon: string | undefined;
    for (const c of covering) {
      const of = rows.filter((r) => r.currency === c);
      if (of.length === scan && (horizon === undefined || byBytes(of.at(-1)!.customer, horizon) < 0)) horizon = of.at(-1)!.customer;
    }
    const byCustomer = new Map<string, Line[]>();
    for (const r of rows) {
      if (horizon !== undefined && byBytes(r.customer, horizon) > 0) continue;
      let lines = byCustomer.get(r.customer);
      if (lines === undefined) byCustomer.set(r.customer, (lines = []));
      lines.push(r);
    }
    const customers = [...byCustomer.keys()].sort(byBytes);
    const figures = customers.map((customer) => {
      const lines = byCustomer.get(customer)!;
      const values = lines.map((l) => {
        const changes = unpackChanges(l.first_month, l.changes);
        return { currency: l.currency, p: valueAt(changes, month - 1), q: valueAt(changes, month), earlier: l.first_month < month };
      });
      return { customer, values };
    });
    // Whether a customer new this month in every currency they hold now had MRR before, in a currency they no longer hold.
    const maybeNew = figures.filter((f) => f.values.every((v) => v.p.n === 0n && !v.earlier)).map((f) => f.customer);
    const returning = new Set<string>();
    if (maybeNew.length > 0) {
      const { rows: before } = await pool.query<{ customer: string }>(
        `SELECT DISTINCT customer FROM ${table} WHERE version_id = $1 AND currency = ANY ($2::char(3)[]) AND customer = ANY ($3::text[]) AND first_month < $4`,
        [versionId, all, maybeNew, month],
      );
      for (const r of before) returning.add(r.customer);
    }
    for (const { customer, values } of figures) {
      const involved = values.filter((v) => v.p.n > 0n || v.q.n > 0n);
      if (involved.length === 0) continue;
      const line: ReportingCustomerMonth = { object: 'customer_month', customer, currency, month: query.month, previousMrr: null, mrr: null, movement: null };
      const rates = ratesAt(set.table, currency, month, involved.map((v) => v.currency));
      if (!('missing' in rates)) {
        let den = 1n;
        for (const v of involved) den = lcm(lcm(den, v.p.den), v.q.den);
        let p = 0n;
        let q = 0n;
        for (const v of involved) {
          const a = rates.a.get(v.currency)!;
          p += v.p.n * (den / v.p.den) * a;
          q += v.q.n * (den / v.q.den) * a;
        }
        const had = values.some((v) => v.earlier) || returning.has(customer);
        line.previousMrr = money({ n: p, d: den * rates.aR });
        line.mrr = money({ n: q, d: den * rates.aR });
        line.movement = p === 0n ? (had ? 'reactivation' : 'newBusiness') : q === 0n ? 'churn' : q > p ? 'expansion' : q < p ? 'contraction' : 'retained';
      }
      if (query.movement !== undefined && line.movement !== query.movement) continue;
      data.push(line);
      if (data.length > query.limit) {
        data.pop();
        return { exchangeRatesId: set.id, missingRates, data, next: data.at(-1)!.customer };
      }
    }
    if (horizon === undefined) return { exchangeRatesId: set.id, missingRates, data, next: undefined };
    after = horizon;
    scan = SCAN_LINES;
  }
}
