// The figures of a version in one reporting currency (../shared/spec/contract.md, "One reporting
// currency"), from its basis (fxBasis.ts) and a set of rates. A value in currency X at month M is
// worth value × rate(X, M) ÷ rate(R, M) in the reporting currency R. With the rates as integers of
// 10^-10 units (A), every figure of month M is an integer numerator over D × A(R, M), D the basis'
// denominator FIXED: its sums are held to 1/FIXED of a cent (exact.ts states the precision), the
// kinds of changes are decided exactly, and a figure is rounded once more when shown. The customer is the unit: a customer's MRR at
// M is the sum of their converted MRRs; movements compare M − 1 and M both at M's rates; fxImpact
// is what last month's MRR gains from M − 1's rates to M's.
import { formatMonth } from './calendar.ts';
import { type Movement, MOVEMENTS } from './definitions.ts';
import type { CurrencyBasis, FxBasis, SeveralCurrencies, Vector } from './fxBasis.ts';
import { type Approximate, fixedOf, moneyWithin, ratio, ratioWithin } from './exact.ts';

/** A set's rates: currency → month → the rate in 10^-10 units of the base. */
export type RateTable = { base: string; rates: Map<string, Map<number, bigint>> };

export const RATE_SCALE = 10n ** 10n;

type Figure = string | null;
export type ReportingMonth = {
  month: string;
  activeCustomers: number | null;
  mrr: Figure;
  arr: Figure;
  arpa: Figure;
  movements: Record<Movement, { customers: number | null; mrr: Figure }> & { netNewMrr: Figure; fxImpact: Figure };
  rates: { customerChurn: Figure; grossMrrChurn: Figure; netRevenueRetention: Figure; grossRevenueRetention: Figure };
};

export type MissingRate = { month: string; currency: string };
/** The converted series; `missing[i]`: the absent rates that made `monthly[i]` null (none for most). */
export type Reporting = { currency: string; monthly: ReportingMonth[]; missing: MissingRate[][] };

const nullMonth = (month: number): ReportingMonth => ({
  month: formatMonth(month),
  activeCustomers: null,
  mrr: null,
  arr: null,
  arpa: null,
  movements: { ...(Object.fromEntries(MOVEMENTS.map((m) => [m, { customers: null, mrr: null }])) as Record<Movement, { customers: null; mrr: null }>), netNewMrr: null, fxImpact: null },
  rates: { customerChurn: null, grossMrrChurn: null, netRevenueRetention: null, grossRevenueRetention: null },
});

/** A month's rates of a set, as conversions use them: each currency's A, and the reporting currency's (aR). */
export type MonthRates = { a: Map<string, bigint>; aR: bigint };

/**
 * The rates at month `m` that converting values in the `involved` currencies to `reporting`
 * needs and the set lacks, or, when none is missing, each one's A (the base's is 1) and aR. Values
 * in the reporting currency alone need no rate: then aR is 1 and so is its A.
 */
export function ratesAt(table: RateTable, reporting: string, m: number, involved: readonly string[]): { missing: string[] } | MonthRates {
  const rateOf = (c: string): bigint | undefined => (c === table.base ? RATE_SCALE : table.rates.get(c)?.get(m));
  const others = involved.filter((c) => c !== reporting);
  const needed = others.length > 0 ? [...others, reporting] : [];
  const missing = needed.filter((c) => rateOf(c) === undefined);
  if (missing.length > 0) return { missing };
  const aR = others.length > 0 ? rateOf(reporting)! : 1n;
  return { a: new Map(involved.map((c) => [c, c === reporting ? aR : rateOf(c)!])), aR };
}

export function convert(basis: FxBasis, table: RateTable, reporting: string): Reporting {
  if (basis.currencies.length === 0) return { currency: reporting, monthly: [], missing: [] };
  const first = Math.min(...basis.currencies.map((c) => c.first));
  const last = Math.max(...basis.currencies.map((c) => c.first + c.months.length - 1));
  const several = basis.several;
  const mixedChanges = groupByMonth(several.mixedChanges);
  const retention = several.mixedRetention;
  const retentionFrom = new Map<number, number[]>();
  for (let r = 0; r < retention.count; r++) {
    let starting = retentionFrom.get(retention.month[r]!);
    if (starting === undefined) retentionFrom.set(retention.month[r]!, (starting = []));
    starting.push(r);
  }
  let retentionNow: number[] = []; // the records whose months hold m

  // Whether a currency has MRR at a month end (any customer, told by their count: the sums are rounded).
  const held = (c: CurrencyBasis, m: number) => m >= c.first && m <= last && c.months[m - c.first]!.holders > 0;
  const activeAt = (m: number) => {
    let n = m >= several.first && m - several.first < several.active.length ? several.active[m - several.first]! : 0;
    for (const c of basis.currencies) if (m >= c.first && m <= last) n += c.months[m - c.first]!.active;
    return n;
  };

  const monthly: ReportingMonth[] = [];
  const missing: MissingRate[][] = [];
  const D = basis.denominator;
  for (let m = first; m <= last; m++) {
    retentionNow = [...retentionNow.filter((r) => retention.until[r]! >= m), ...(retentionFrom.get(m) ?? [])];
    const now = ratesAt(table, reporting, m, basis.currencies.filter((c) => held(c, m) || held(c, m - 1) || held(c, m - 12)).map((c) => c.currency));
    const before = ratesAt(table, reporting, m - 1, basis.currencies.filter((c) => held(c, m - 1)).map((c) => c.currency));
    if ('missing' in now || 'missing' in before) {
      missing.push([
        ...('missing' in before ? before.missing.map((c) => ({ month: formatMonth(m - 1), currency: c })) : []),
        ...('missing' in now ? now.missing.map((c) => ({ month: formatMonth(m), currency: c })) : []),
      ]);
      monthly.push(nullMonth(m));
      continue;
    }
    const A = (c: string) => now.a.get(c) ?? 0n; // a currency with no MRR at M, M − 1 or M − 12 adds 0
    const Aprev = (c: string) => before.a.get(c) ?? 0n;
    // A customer's own values at this month's rates, exact over their record's denominator: the kind of a change is decided exactly.
    const atRates = (v: Vector) => Object.entries(v).reduce((sum, [c, x]) => sum + x * A(c), 0n);
    let mrr = 0n;
    let prevAtNow = 0n; // last month's MRR at this month's rates
    let prevAtPrev = 0n; // last month's MRR at its own rates
    let keptNow = 0n;
    let keptThen = 0n;
    let keptMin = 0n;
    const i = m - several.first;
    const moves = Object.fromEntries(MOVEMENTS.map((name) => [name, { customers: several.moves[name][i] ?? 0, mrr: 0n }])) as Record<Movement, { customers: number; mrr: bigint }>;
    for (const c of basis.currencies) {
      const here = m >= c.first ? c.months[m - c.first] : undefined;
      const prev = m - 1 >= c.first ? c.months[m - 1 - c.first] : undefined;
      const a = A(c.currency);
      if (here) {
        mrr += here.mrr * a;
        keptNow += here.now * a;
        keptThen += here.then * a;
        keptMin += here.min * a;
        for (const name of MOVEMENTS) {
          moves[name].customers += here.moves[name].customers;
          moves[name].mrr += here.moves[name].mrr * a;
        }
      }
      if (prev) {
        prevAtNow += prev.mrr * a;
        prevAtPrev += prev.mrr * Aprev(c.currency);
      }
    }
    // What the rates decide: a change up in one currency and down in another, and min(now, then).
    for (const { delta, den } of mixedChanges.get(m) ?? []) {
      const change = atRates(delta);
      if (change > 0n) {
        moves.expansion.customers++;
        moves.expansion.mrr += fixedOf(change, den);
      } else if (change < 0n) {
        moves.contraction.customers++;
        moves.contraction.mrr -= fixedOf(change, den);
      }
    }
    keptMin += retention.minAt(retentionNow, A);
    const active = activeAt(m);
    const lastActive = activeAt(m - 1);
    const d = D * now.aR;
    // Each sum is within SUM_ERROR units of its exact value at rates A: a value of k sums, within k × e.
    const e = errorAt(now.a);
    const f = (n: bigint, k = 1n): Approximate => ({ n, d, e: k * e });
    const net = moves.newBusiness.mrr + moves.expansion.mrr + moves.reactivation.mrr - moves.contraction.mrr - moves.churn.mrr;
    // fxImpact: last month's MRR at this month's rates minus at its own.
    const fx: Approximate = { n: prevAtNow * D * before.aR - prevAtPrev * d, d: d * D * before.aR, e: e * D * before.aR + errorAt(before.a) * d };
    monthly.push({
      month: formatMonth(m),
      activeCustomers: active,
      mrr: moneyWithin(f(mrr)),
      arr: moneyWithin(f(12n * mrr, 12n)),
      arpa: active === 0 ? null : moneyWithin({ n: mrr, d: d * BigInt(active), e }),
      movements: {
        ...(Object.fromEntries(MOVEMENTS.map((name) => [name, { customers: moves[name].customers, mrr: moneyWithin(f(moves[name].mrr)) }])) as Record<
          Movement,
          { customers: number; mrr: string }
        >),
        netNewMrr: moneyWithin(f(net, 5n)),
        fxImpact: moneyWithin(fx),
      },
      rates: {
        customerChurn: ratio({ n: BigInt(moves.churn.customers), d: 1n }, { n: BigInt(lastActive), d: 1n }),
        // A ratio over nothing is null: told by the counts, as a rounded sum may hold a residue where the exact one is 0.
        grossMrrChurn: lastActive === 0 ? null : ratioWithin(f(moves.churn.mrr + moves.contraction.mrr, 2n), f(prevAtNow)),
        netRevenueRetention: activeAt(m - 12) === 0 ? null : ratioWithin(f(keptNow), f(keptThen)),
        grossRevenueRetention: activeAt(m - 12) === 0 ? null : ratioWithin(f(keptMin), f(keptThen)),
      },
    });
    missing.push([]);
  }
  return { currency: reporting, monthly, missing };
}

/**
 * A bound on the rounded terms of any one of the basis' sums (each within half a unit of 1/FIXED of
 * a cent: exact.ts): a sum's error is under SUM_TERMS ÷ 2 units, far more than any version adds.
 */
const SUM_TERMS = 10n ** 12n;

/** A bound on the error of a sum of the basis converted at rates `a` (its currencies' values times their A, summed), in its numerator's units. */
const errorAt = (a: ReadonlyMap<string, bigint>): bigint => {
  let total = 0n;
  for (const x of a.values()) total += x;
  return SUM_TERMS * total;
};

function groupByMonth<T extends { month: number }>(list: readonly T[]): Map<number, T[]> {
  const out = new Map<number, T[]>();
  for (const x of list) {
    let at = out.get(x.month);
    if (at === undefined) out.set(x.month, (at = []));
    at.push(x);
  }
  return out;
}

/** The absent rates of some months, each once, ordered by month then currency. */
export function missingRates(lists: readonly MissingRate[][]): MissingRate[] {
  const all = new Map<string, MissingRate>();
  for (const list of lists) for (const x of list) all.set(`${x.month}:${x.currency}`, x);
  return [...all.values()].sort((a, b) => (a.month < b.month ? -1 : a.month > b.month ? 1 : a.currency < b.currency ? -1 : a.currency > b.currency ? 1 : 0));
}

export type ReportingCohort = {
  currency: string;
  cohort: string;
  customers: number | null;
  mrr: Figure;
  months: { month: string; customers: number | null; mrr: Figure }[];
};
/** The converted cohorts; `missing`: the absent rates that made a figure null, each once. */
export type ReportingCohorts = { data: ReportingCohort[]; missing: MissingRate[] };

/**
 * The cohorts of the whole business in the reporting currency: a cohort's MRR at month M is its
 * customers' MRR in each currency converted at M's rates; a month whose conversion needs a rate
 * the set lacks has both figures null.
 */
export function convertCohorts(basis: FxBasis, table: RateTable, reporting: string): ReportingCohorts {
  const D = basis.denominator;
  const missing: MissingRate[][] = [];
  const data = basis.cohorts.map(({ cohort, active, mrr, holders }) => {
    const currencies = Object.keys(mrr);
    const months = active.map((customers, i) => {
      const m = cohort + i;
      const held = currencies.filter((c) => holders[c]![i]! > 0);
      const rates = ratesAt(table, reporting, m, held);
      if ('missing' in rates) {
        missing.push(rates.missing.map((c) => ({ month: formatMonth(m), currency: c })));
        return { month: formatMonth(m), customers: null, mrr: null };
      }
      let n = 0n;
      for (const c of held) n += mrr[c]![i]! * rates.a.get(c)!;
      return { month: formatMonth(m), customers, mrr: moneyWithin({ n, d: D * rates.aR, e: errorAt(rates.a) }) };
    });
    return { currency: reporting, cohort: formatMonth(cohort), customers: months[0]!.customers, mrr: months[0]!.mrr, months };
  });
  return { data, missing: missingRates(missing) };
}
