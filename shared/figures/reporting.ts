// The figures of a version in one reporting currency (../shared/spec/contract.md, "One reporting
// currency"), from its basis (fxBasis.ts) and a set of rates. A value in currency X at month M is
// worth value × rate(X, M) ÷ rate(R, M) in the reporting currency R. With the rates as integers of
// 10^-10 units (A), every figure of month M is an integer numerator over D × A(R, M), D the basis'
// denominator: exact, and rounded only when shown. The customer is the unit: a customer's MRR at
// M is the sum of their converted MRRs; movements compare M − 1 and M both at M's rates; fxImpact
// is what last month's MRR gains from M − 1's rates to M's.
import { formatMonth } from './calendar.ts';
import { type Movement, MOVEMENTS } from './definitions.ts';
import type { FxBasis } from './fxBasis.ts';
import { type Fraction, money, ratio } from './exact.ts';

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

/** A customer of several currencies as dense arrays: per currency, their MRR numerator at each month of the series (from `first`). */
type Dense = { values: Map<string, bigint[]>; firstPositive: number };

export function convert(basis: FxBasis, table: RateTable, reporting: string): Reporting {
  const bounds = new Map(basis.currencies.map((c) => [c.currency, c]));
  const first = Math.min(...basis.currencies.map((c) => c.first));
  const last = Math.max(...basis.currencies.map((c) => c.first + c.months.length - 1));
  if (basis.currencies.length === 0) return { currency: reporting, monthly: [], missing: [] };
  const span = last - first + 1;

  // Each customer of several currencies, month by month; a currency's value is 0 outside its series.
  const several: Dense[] = basis.several.map((s) => {
    const values = new Map<string, bigint[]>();
    let firstPositive = Infinity;
    for (const [currency, steps] of Object.entries(s.steps)) {
      const b = bounds.get(currency);
      const row = new Array<bigint>(span).fill(0n);
      if (b) {
        let at = 0;
        let v = 0n;
        for (let m = b.first; m <= b.last; m++) {
          while (at < steps.length && steps[at]!.month <= m) v = steps[at++]!.n;
          row[m - first] = v;
          if (v > 0n && m < firstPositive) firstPositive = m;
        }
      }
      values.set(currency, row);
    }
    return { values, firstPositive };
  });

  // Whether a currency has MRR at a month end (any customer).
  const hasMrr = (currency: string, m: number): boolean => {
    const b = bounds.get(currency)!;
    if (m >= b.first && b.months[m - b.first]!.mrr > 0n) return true;
    return several.some((s) => (s.values.get(currency)?.[m - first] ?? 0n) > 0n);
  };
  const currencies = [...bounds.keys()];
  const positive = new Map(currencies.map((c) => [c, Array.from({ length: span }, (_, i) => hasMrr(c, first + i))]));
  const held = (c: string, m: number) => m >= first && m <= last && positive.get(c)![m - first]!;

  const rateOf = (c: string, m: number): bigint | undefined => (c === table.base ? RATE_SCALE : table.rates.get(c)?.get(m));
  /** The rates a month's conversions need that the set lacks, or, when none is missing, each currency's A and the reporting currency's. */
  const ratesAt = (m: number, involved: string[]): { missing: string[] } | { a: Map<string, bigint>; aR: bigint } => {
    const others = involved.filter((c) => c !== reporting);
    const needed = others.length > 0 ? [...others, reporting] : [];
    const missing = needed.filter((c) => rateOf(c, m) === undefined);
    if (missing.length > 0) return { missing };
    const aR = others.length > 0 ? rateOf(reporting, m)! : 1n;
    const a = new Map(involved.map((c) => [c, c === reporting ? aR : rateOf(c, m)!]));
    return { a, aR };
  };

  const monthly: ReportingMonth[] = [];
  const missing: MissingRate[][] = [];
  const D = basis.denominator;
  let lastActive = 0;
  for (let m = first; m <= last; m++) {
    const now = ratesAt(m, currencies.filter((c) => held(c, m) || held(c, m - 1) || held(c, m - 12)));
    const before = ratesAt(m - 1, currencies.filter((c) => held(c, m - 1)));
    if ('missing' in now || 'missing' in before) {
      missing.push([
        ...('missing' in before ? before.missing.map((c) => ({ month: formatMonth(m - 1), currency: c })) : []),
        ...('missing' in now ? now.missing.map((c) => ({ month: formatMonth(m), currency: c })) : []),
      ]);
      monthly.push(nullMonth(m));
      lastActive = activeAt(basis, several, m, first);
      continue;
    }
    const A = (c: string) => now.a.get(c) ?? 0n; // a currency with no MRR at M, M − 1 or M − 12 adds 0
    const Aprev = (c: string) => before.a.get(c) ?? 0n;
    let mrr = 0n;
    let prevAtNow = 0n; // last month's MRR at this month's rates
    let prevAtPrev = 0n; // last month's MRR at its own rates
    let active = 0;
    let keptNow = 0n;
    let keptThen = 0n;
    let keptMin = 0n;
    const moves = Object.fromEntries(MOVEMENTS.map((name) => [name, { customers: 0, mrr: 0n }])) as Record<Movement, { customers: number; mrr: bigint }>;
    for (const c of basis.currencies) {
      const at = (k: number) => (k >= c.first ? c.months[k - c.first] : undefined);
      const here = at(m);
      const prev = at(m - 1);
      const a = A(c.currency);
      if (here) {
        mrr += here.mrr * a;
        active += here.active;
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
    const i = m - first;
    for (const s of several) {
      let p = 0n;
      let q = 0n;
      let pOwn = 0n;
      let then = 0n;
      for (const [c, row] of s.values) {
        const a = A(c);
        const vp = i > 0 ? row[i - 1]! : 0n;
        q += row[i]! * a;
        p += vp * a;
        pOwn += vp * Aprev(c);
        if (i >= 12) then += row[i - 12]! * a;
      }
      mrr += q;
      prevAtNow += p;
      prevAtPrev += pOwn;
      if (q > 0n) active++;
      if (then > 0n) {
        keptNow += q;
        keptThen += then;
        keptMin += q < then ? q : then;
      }
      const move: Movement | undefined =
        p === 0n && q > 0n ? (s.firstPositive < m ? 'reactivation' : 'newBusiness') : p > 0n && q === 0n ? 'churn' : p > 0n && q > p ? 'expansion' : p > 0n && q < p && q > 0n ? 'contraction' : undefined;
      if (move) {
        moves[move].customers++;
        moves[move].mrr += move === 'churn' ? p : move === 'expansion' ? q - p : move === 'contraction' ? p - q : q;
      }
    }
    const d = D * now.aR;
    const f = (n: bigint): Fraction => ({ n, d });
    const net = moves.newBusiness.mrr + moves.expansion.mrr + moves.reactivation.mrr - moves.contraction.mrr - moves.churn.mrr;
    // fxImpact: last month's MRR at this month's rates minus at its own.
    const fx: Fraction = { n: prevAtNow * D * before.aR - prevAtPrev * d, d: d * D * before.aR };
    monthly.push({
      month: formatMonth(m),
      activeCustomers: active,
      mrr: money(f(mrr)),
      arr: money(f(12n * mrr)),
      arpa: active === 0 ? null : money({ n: mrr, d: d * BigInt(active) }),
      movements: {
        ...(Object.fromEntries(MOVEMENTS.map((name) => [name, { customers: moves[name].customers, mrr: money(f(moves[name].mrr)) }])) as Record<Movement, { customers: number; mrr: string }>),
        netNewMrr: money(f(net)),
        fxImpact: money(fx),
      },
      rates: {
        customerChurn: ratio({ n: BigInt(moves.churn.customers), d: 1n }, { n: BigInt(lastActive), d: 1n }),
        grossMrrChurn: ratio(f(moves.churn.mrr + moves.contraction.mrr), f(prevAtNow)),
        netRevenueRetention: ratio(f(keptNow), f(keptThen)),
        grossRevenueRetention: ratio(f(keptMin), f(keptThen)),
      },
    });
    missing.push([]);
    lastActive = active;
  }
  return { currency: reporting, monthly, missing };
}

/** The absent rates of some months, each once, ordered by month then currency. */
export function missingRates(lists: readonly MissingRate[][]): MissingRate[] {
  const all = new Map<string, MissingRate>();
  for (const list of lists) for (const x of list) all.set(`${x.month}:${x.currency}`, x);
  return [...all.values()].sort((a, b) => (a.month < b.month ? -1 : a.month > b.month ? 1 : a.currency < b.currency ? -1 : a.currency > b.currency ? 1 : 0));
}

/** Customers with MRR at a month end, across their currencies (the next month's customer churn counts from it). */
function activeAt(basis: FxBasis, several: Dense[], m: number, first: number): number {
  let active = 0;
  for (const c of basis.currencies) if (m >= c.first) active += c.months[m - c.first]!.active;
  for (const s of several) if ([...s.values.values()].some((row) => row[m - first]! > 0n)) active++;
  return active;
}
