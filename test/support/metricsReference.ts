// A plain reference of the figures, written from the words of ../shared/spec/contract.md ("Metrics
// and catalog"), not from the build's code: dates with JavaScript's Date in UTC, values as exact
// fractions of BigInts, every month end computed by brute force over every contract. Slow and
// obviously right; the property tests hold the real builds to it.

export type ReferenceRow = { customer: string; startDate?: string; endDate?: string; amount?: string; currency?: string };

/** An exact fraction, always reduced, denominator > 0. */
export class Frac {
  readonly n: bigint;
  readonly d: bigint;
  constructor(n: bigint, d: bigint = 1n) {
    if (d < 0n) [n, d] = [-n, -d];
    let a = n < 0n ? -n : n;
    let b = d;
    while (b) [a, b] = [b, a % b];
    const g = a === 0n ? d : a;
    this.n = n / g;
    this.d = d / g;
  }
  static ZERO = new Frac(0n);
  add(o: Frac): Frac {
    // x + 0 = x, 0 + x = x: most of the sums below add customers with no MRR at that month end.
    if (o.n === 0n) return this;
    if (this.n === 0n) return o;
    return new Frac(this.n * o.d + o.n * this.d, this.d * o.d);
  }
  sub(o: Frac): Frac {
    if (o.n === 0n) return this;
    return new Frac(this.n * o.d - o.n * this.d, this.d * o.d);
  }
  mul(o: Frac): Frac {
    return new Frac(this.n * o.n, this.d * o.d);
  }
  div(o: Frac): Frac {
    return new Frac(this.n * o.d, this.d * o.n);
  }
  cmp(o: Frac): number {
    const x = this.n * o.d - o.n * this.d;
    return x > 0n ? 1 : x < 0n ? -1 : 0;
  }
  get positive(): boolean {
    return this.n > 0n;
  }
  /** Rounded half away from zero to `places` decimals, as a decimal string. */
  round(places: number): string {
    const scale = 10n ** BigInt(places);
    const neg = this.n < 0n;
    const abs = (neg ? -this.n : this.n) * scale;
    let q = abs / this.d;
    const r = abs % this.d;
    if (2n * r >= this.d) q += 1n;
    const s = q.toString().padStart(places + 1, '0');
    return `${neg && q !== 0n ? '-' : ''}${s.slice(0, -places)}.${s.slice(-places)}`;
  }
}

const DAY = 86_400_000;
const parse = (date: string) => Date.UTC(Number(date.slice(0, 4)), Number(date.slice(5, 7)) - 1, Number(date.slice(8, 10)));
const iso = (ms: number) => new Date(ms).toISOString().slice(0, 10);
/** The last day of month index k (k = year × 12 + month − 1), computed once for each k. */
const monthEnds = new Map<number, string>();
const monthEnd = (k: number) => {
  let end = monthEnds.get(k);
  if (end === undefined) monthEnds.set(k, (end = iso(Date.UTC(Math.floor(k / 12), k % 12 + 1, 1) - DAY)));
  return end;
};
const monthIndex = (date: string) => Number(date.slice(0, 4)) * 12 + Number(date.slice(5, 7)) - 1;
const label = (k: number) => `${String(Math.floor(k / 12)).padStart(4, '0')}-${String((k % 12) + 1).padStart(2, '0')}`;

/** startDate plus m calendar months, the day clamped to that month's length. */
function plusMonths(date: string, m: number): string {
  const y = Number(date.slice(0, 4));
  const mo = Number(date.slice(5, 7)) - 1 + m;
  const d = Number(date.slice(8, 10));
  const last = new Date(Date.UTC(y, mo + 1, 0)).getUTCDate();
  return iso(Date.UTC(y, mo, Math.min(d, last)));
}

/** The monthly value, in the currency's units: amount ÷ whole months when endDate is the day before startDate + m months, else ÷ (days ÷ (365.25 / 12)). */
export function referenceMonthlyValue(startDate: string, endDate: string, amount: string): Frac {
  const cents = BigInt(amount.replace('.', '')) * (amount.includes('.') ? 10n ** BigInt(2 - amount.split('.')[1]!.length) : 100n);
  const dayAfterEnd = iso(parse(endDate) + DAY);
  for (let m = 1; m <= 12 * 10_000; m++) {
    const candidate = plusMonths(startDate, m);
    if (candidate === dayAfterEnd) return new Frac(cents, 100n * BigInt(m));
    if (candidate > dayAfterEnd) break;
  }
  const days = BigInt(Math.round((parse(endDate) - parse(startDate)) / DAY) + 1);
  // amount ÷ (days ÷ (365.25 / 12)) = cents ÷ 100 × 36525 ÷ (1200 × days)
  return new Frac(cents * 36_525n, 120_000n * days);
}

type Contract = { customer: string; currency: string; startDate: string; endDate: string; value: Frac };

const MOVES = ['newBusiness', 'expansion', 'contraction', 'churn', 'reactivation'] as const;

/** Everything the metrics, cohorts and customers reads answer, from the rows. */
export function referenceFigures(rows: ReferenceRow[]) {
  const contracts: Contract[] = [];
  for (const r of rows) {
    if (!r.startDate || !r.endDate || !r.amount || !r.currency || Number(r.amount) === 0) continue;
    contracts.push({ customer: r.customer, currency: r.currency, startDate: r.startDate, endDate: r.endDate, value: referenceMonthlyValue(r.startDate, r.endDate, r.amount) });
  }
  const currencies = [...new Set(contracts.map((c) => c.currency))].sort();
  const activeAt = (c: Contract, k: number) => c.startDate <= monthEnd(k) && monthEnd(k) <= c.endDate;
  const monthly: unknown[] = [];
  const cohorts: unknown[] = [];
  /** month label → currency → customer → { previousMrr, mrr, movement } */
  const customersByMonth = new Map<string, { customer: string; currency: string; month: string; previousMrr: string; mrr: string; movement: string }[]>();
  const bounds: { currency: string; first: number; last: number }[] = [];

  for (const currency of currencies) {
    const mine = contracts.filter((c) => c.currency === currency);
    // Month ends that find a contract active: a contract's lie between its start's month and its end's.
    let first = Infinity;
    let lastActive = -Infinity;
    for (const c of mine) for (let k = monthIndex(c.startDate); k <= monthIndex(c.endDate); k++) if (activeAt(c, k)) {
      first = Math.min(first, k);
      lastActive = Math.max(lastActive, k);
    }
    if (first === Infinity) continue;
    const last = Math.min(lastActive + 1, first + 599);
    bounds.push({ currency, first, last });
    const customers = [...new Set(mine.map((c) => c.customer))];
    const mrrOf = new Map<string, Frac[]>(); // customer → MRR at each month end of the series
    for (const customer of customers) {
      const theirs = mine.filter((c) => c.customer === customer);
      const series: Frac[] = [];
      for (let k = first; k <= last; k++) series.push(theirs.filter((c) => activeAt(c, k)).reduce((s, c) => s.add(c.value), Frac.ZERO));
      mrrOf.set(customer, series);
    }
    const at = (customer: string, k: number) => (k < first || k > last ? Frac.ZERO : mrrOf.get(customer)![k - first]!);
    const activeContracts = (k: number) => mine.filter((c) => activeAt(c, k)).length;
    const cohortOf = new Map<string, number>();
    for (const customer of customers) {
      for (let k = first; k <= last; k++) if (at(customer, k).positive) {
        cohortOf.set(customer, k);
        break;
      }
    }

    for (let k = first; k <= last; k++) {
      let mrr = Frac.ZERO;
      let prevMrr = Frac.ZERO;
      let active = 0;
      let prevActive = 0;
      const moves = Object.fromEntries(MOVES.map((m) => [m, { customers: 0, mrr: Frac.ZERO }])) as Record<(typeof MOVES)[number], { customers: number; mrr: Frac }>;
      let nowS = Frac.ZERO;
      let thenS = Frac.ZERO;
      let minS = Frac.ZERO;
      const listed: { customer: string; currency: string; month: string; previousMrr: string; mrr: string; movement: string }[] = [];
      for (const customer of customers) {
        const p = at(customer, k - 1);
        const q = at(customer, k);
        mrr = mrr.add(q);
        prevMrr = prevMrr.add(p);
        if (q.positive) active++;
        if (p.positive) prevActive++;
        let movement: string | undefined;
        if (!p.positive && q.positive) {
          let earlier = false;
          for (let j = first; j < k; j++) if (at(customer, j).positive) earlier = true;
          movement = earlier ? 'reactivation' : 'newBusiness';
          moves[movement as 'reactivation'].customers++;
          moves[movement as 'reactivation'].mrr = moves[movement as 'reactivation'].mrr.add(q);
        } else if (p.positive && q.positive && q.cmp(p) > 0) {
          movement = 'expansion';
          moves.expansion.customers++;
          moves.expansion.mrr = moves.expansion.mrr.add(q.sub(p));
        } else if (p.positive && q.positive && q.cmp(p) < 0) {
          movement = 'contraction';
          moves.contraction.customers++;
          moves.contraction.mrr = moves.contraction.mrr.add(p.sub(q));
        } else if (p.positive && !q.positive) {
          movement = 'churn';
          moves.churn.customers++;
          moves.churn.mrr = moves.churn.mrr.add(p);
        } else if (p.positive) movement = 'retained';
        if (movement) listed.push({ customer, currency, month: label(k), previousMrr: p.round(2), mrr: q.round(2), movement });
        const then = at(customer, k - 12);
        if (then.positive) {
          nowS = nowS.add(q);
          thenS = thenS.add(then);
          minS = minS.add(q.cmp(then) < 0 ? q : then);
        }
      }
      const list = customersByMonth.get(label(k)) ?? [];
      list.push(...listed.sort((a, b) => Buffer.compare(Buffer.from(a.customer), Buffer.from(b.customer))));
      customersByMonth.set(label(k), list);
      const ratio = (a: Frac, b: Frac) => (b.n === 0n ? null : a.div(b).round(4));
      const net = moves.newBusiness.mrr.add(moves.expansion.mrr).add(moves.reactivation.mrr).sub(moves.contraction.mrr).sub(moves.churn.mrr);
      monthly.push({
        month: label(k),
        currency,
        activeContracts: activeContracts(k),
        activeCustomers: active,
        mrr: mrr.round(2),
        arr: mrr.mul(new Frac(12n)).round(2),
        arpa: active === 0 ? null : mrr.div(new Frac(BigInt(active))).round(2),
        movements: { ...Object.fromEntries(MOVES.map((m) => [m, { customers: moves[m].customers, mrr: moves[m].mrr.round(2) }])), netNewMrr: net.round(2) },
        rates: {
          customerChurn: ratio(new Frac(BigInt(moves.churn.customers)), new Frac(BigInt(prevActive))),
          grossMrrChurn: ratio(moves.churn.mrr.add(moves.contraction.mrr), prevMrr),
          netRevenueRetention: ratio(nowS, thenS),
          grossRevenueRetention: ratio(minS, thenS),
        },
      });
    }
    for (const cohort of [...new Set(cohortOf.values())].sort((a, b) => a - b)) {
      const members = customers.filter((c) => cohortOf.get(c) === cohort);
      const months = [];
      for (let k = cohort; k <= last; k++) {
        const withMrr = members.filter((c) => at(c, k).positive);
        months.push({ month: label(k), customers: withMrr.length, mrr: withMrr.reduce((s, c) => s.add(at(c, k)), Frac.ZERO).round(2) });
      }
      cohorts.push({ currency, cohort: label(cohort), customers: months[0]!.customers, mrr: months[0]!.mrr, months });
    }
  }
  monthly.sort((a, b) => {
    const x = a as { month: string; currency: string };
    const y = b as { month: string; currency: string };
    return x.month < y.month ? -1 : x.month > y.month ? 1 : x.currency < y.currency ? -1 : x.currency > y.currency ? 1 : 0;
  });
  return { monthly, cohorts, customersByMonth, bounds };
}

/** A set of rates as uploaded: the base, and [month "YYYY-MM", currency, rate "1.2345"] records. */
export type ReferenceRates = { base: string; rates: [string, string, string][] };

const decimal = (s: string) => {
  const [whole, frac = ''] = s.split('.');
  return new Frac(BigInt(whole! + frac), 10n ** BigInt(frac.length));
};

/**
 * A book seen in currency `reporting` with a set of rates: every customer's MRR per currency at
 * every month end by brute force (as referenceFigures computes it, 0 outside the currency's
 * series), the set's rates as exact fractions, and the absent rates asked for, each once.
 */
function reportingBook(rows: ReferenceRow[], set: ReferenceRates, reporting: string) {
  const { bounds } = referenceFigures(rows);
  const contracts = rows
    .filter((r) => r.startDate && r.endDate && r.amount && r.currency && Number(r.amount) !== 0)
    .map((r) => ({ customer: r.customer, currency: r.currency!, startDate: r.startDate!, endDate: r.endDate!, value: referenceMonthlyValue(r.startDate!, r.endDate!, r.amount!) }));
  const customers = [...new Set(contracts.map((c) => c.customer))];
  const value = (customer: string, currency: string, k: number) => {
    const b = bounds.find((x) => x.currency === currency);
    if (!b || k < b.first || k > b.last) return Frac.ZERO;
    return contracts.filter((c) => c.customer === customer && c.currency === currency && c.startDate <= monthEnd(k) && monthEnd(k) <= c.endDate).reduce((s, c) => s.add(c.value), Frac.ZERO);
  };
  const currencies = bounds.map((b) => b.currency);
  const rate = (currency: string, k: number): Frac | undefined => {
    if (currency === set.base) return new Frac(1n);
    const at = label(k);
    const r = set.rates.find(([month, c]) => month === at && c === currency);
    return r && decimal(r[2]);
  };
  const missing: { month: string; currency: string }[] = [];
  const need = (currency: string, k: number) => {
    if (rate(currency, k) === undefined && !missing.some((x) => x.month === label(k) && x.currency === currency)) missing.push({ month: label(k), currency });
    return rate(currency, k) !== undefined;
  };
  /** Whether the rates at month `at` of the currencies `used` (and the reporting one, if any is another) are in the set; notes those absent. */
  const needAll = (used: string[], at: number) => {
    const others = used.filter((c) => c !== reporting);
    let ok = true;
    for (const c of others) ok = need(c, at) && ok;
    if (others.length > 0) ok = need(reporting, at) && ok;
    return ok;
  };
  const missingSorted = () =>
    [...missing].sort((a, b) => (a.month < b.month ? -1 : a.month > b.month ? 1 : a.currency < b.currency ? -1 : a.currency > b.currency ? 1 : 0));
  /** value × rate(X, k) ÷ rate(R, k); the reporting currency's own values need no rate. */
  const conv = (v: Frac, currency: string, k: number) => (currency === reporting ? v : v.mul(rate(currency, k)!).div(rate(reporting, k)!));
  const mrrAt = (customer: string, valuedAt: number, k: number) => currencies.reduce((s, c) => s.add(value(customer, c, k).positive ? conv(value(customer, c, k), c, valuedAt) : Frac.ZERO), Frac.ZERO);
  const holds = (customer: string, k: number) => currencies.some((c) => value(customer, c, k).positive);
  const first = Math.min(...bounds.map((b) => b.first));
  const last = Math.max(...bounds.map((b) => b.last));
  return { bounds, customers, currencies, value, need, needAll, missingSorted, mrrAt, holds, first, last };
}

/**
 * The cohorts in currency `reporting` ("One reporting currency": the customer across their
 * currencies): a customer's cohort is their first month end with MRR in any currency; every
 * month from it to the last of all series, how many of the cohort have MRR and their MRR
 * converted at that month's rates, both null when a rate it needs is absent.
 */
export function referenceReportingCohorts(rows: ReferenceRow[], set: ReferenceRates, reporting: string) {
  const b = reportingBook(rows, set, reporting);
  if (b.bounds.length === 0) return { data: [], missingRates: [] };
  const cohortOf = new Map<string, number>();
  for (const customer of b.customers) {
    for (let k = b.first; k <= b.last; k++) {
      if (b.holds(customer, k)) {
        cohortOf.set(customer, k);
        break;
      }
    }
  }
  const data = [];
  for (const cohort of [...new Set(cohortOf.values())].sort((x, y) => x - y)) {
    const members = b.customers.filter((c) => cohortOf.get(c) === cohort);
    const months = [];
    for (let k = cohort; k <= b.last; k++) {
      const withMrr = members.filter((c) => b.holds(c, k));
      const used = b.currencies.filter((c) => withMrr.some((x) => b.value(x, c, k).positive));
      if (!b.needAll(used, k)) months.push({ month: label(k), customers: null, mrr: null });
      else months.push({ month: label(k), customers: withMrr.length, mrr: withMrr.reduce((s, c) => s.add(b.mrrAt(c, k, k)), Frac.ZERO).round(2) });
    }
    data.push({ currency: reporting, cohort: label(cohort), customers: months[0]!.customers, mrr: months[0]!.mrr, months });
  }
  return { data, missingRates: b.missingSorted() };
}

/**
 * The customers of month `month` in currency `reporting`: every customer with MRR in any
 * currency at its end or the month before's, both valued at `month`'s rates, the movement between
 * them; ordered by customer as UTF-8 bytes. `missingRates`: the month's rates absent for the
 * currencies anyone holds at either month end; a customer who needs one has null figures.
 */
export function referenceReportingCustomers(rows: ReferenceRow[], set: ReferenceRates, reporting: string, month: string) {
  const b = reportingBook(rows, set, reporting);
  const k = monthIndex(`${month}-01`);
  const anyone = b.currencies.filter((c) => b.customers.some((x) => b.value(x, c, k).positive || b.value(x, c, k - 1).positive));
  b.needAll(anyone, k);
  const missingRates = b.missingSorted();
  const listed = b.customers
    .filter((c) => b.holds(c, k) || b.holds(c, k - 1))
    .sort((x, y) => Buffer.compare(Buffer.from(x), Buffer.from(y)))
    .map((customer) => {
      const used = b.currencies.filter((c) => b.value(customer, c, k).positive || b.value(customer, c, k - 1).positive);
      const others = used.filter((c) => c !== reporting);
      const ok = others.every((c) => !missingRates.some((x) => x.currency === c)) && (others.length === 0 || !missingRates.some((x) => x.currency === reporting));
      if (!ok) return { object: 'customer_month', customer, currency: reporting, month, previousMrr: null, mrr: null, movement: null };
      const p = b.mrrAt(customer, k, k - 1);
      const q = b.mrrAt(customer, k, k);
      let earlier = false;
      for (let j = Math.min(b.first, k); j < k; j++) if (b.holds(customer, j)) earlier = true;
      const movement = !p.positive ? (earlier ? 'reactivation' : 'newBusiness') : !q.positive ? 'churn' : q.cmp(p) > 0 ? 'expansion' : q.cmp(p) < 0 ? 'contraction' : 'retained';
      return { object: 'customer_month', customer, currency: reporting, month, previousMrr: p.round(2), mrr: q.round(2), movement };
    });
  return { data: listed, missingRates };
}

/**
 * The `reporting` member of the metrics in currency `reporting`, from the contract's words ("One
 * reporting currency"): every customer's MRR per currency at every month end by brute force,
 * converted with exact fractions.
 */
export function referenceReporting(rows: ReferenceRow[], set: ReferenceRates, reporting: string) {
  const { bounds, customers, currencies, value, need, missingSorted, mrrAt, first, last } = reportingBook(rows, set, reporting);
  const anyMrr = (currency: string, k: number) => customers.some((c) => value(c, currency, k).positive);
  if (bounds.length === 0) return { currency: reporting, monthly: [], missingRates: [] };
  const monthly: unknown[] = [];
  for (let k = first; k <= last; k++) {
    // The rates month k needs: at k for every currency with MRR at k, k − 1 or k − 12 (its MRR,
    // last month's valued for the movements, the retention's base); at k − 1 for those of k − 1.
    let ok = true;
    for (const [at, ofMonths] of [[k, [k, k - 1, k - 12]], [k - 1, [k - 1]]] as const) {
      const used = currencies.filter((c) => ofMonths.some((j) => anyMrr(c, j)) && c !== reporting);
      for (const c of used) ok = need(c, at) && ok;
      if (used.length > 0) ok = need(reporting, at) && ok;
    }
    if (!ok) {
      monthly.push({
        month: label(k), activeCustomers: null, mrr: null, arr: null, arpa: null,
        movements: { ...Object.fromEntries(MOVES.map((m) => [m, { customers: null, mrr: null }])), netNewMrr: null, fxImpact: null },
        rates: { customerChurn: null, grossMrrChurn: null, netRevenueRetention: null, grossRevenueRetention: null },
      });
      continue;
    }
    let mrr = Frac.ZERO;
    let lastAtNow = Frac.ZERO;
    let lastAtThen = Frac.ZERO;
    let active = 0;
    let prevActive = 0;
    let keptNow = Frac.ZERO;
    let keptThen = Frac.ZERO;
    let keptMin = Frac.ZERO;
    const moves = Object.fromEntries(MOVES.map((m) => [m, { customers: 0, mrr: Frac.ZERO }])) as Record<(typeof MOVES)[number], { customers: number; mrr: Frac }>;
    for (const customer of customers) {
      const q = mrrAt(customer, k, k);
      const p = mrrAt(customer, k, k - 1);
      const then = mrrAt(customer, k, k - 12);
      mrr = mrr.add(q);
      lastAtNow = lastAtNow.add(p);
      lastAtThen = lastAtThen.add(mrrAt(customer, k - 1, k - 1));
      if (q.positive) active++;
      if (p.positive) prevActive++;
      if (then.positive) {
        keptNow = keptNow.add(q);
        keptThen = keptThen.add(then);
        keptMin = keptMin.add(q.cmp(then) < 0 ? q : then);
      }
      const add = (m: (typeof MOVES)[number], v: Frac) => {
        moves[m].customers++;
        moves[m].mrr = moves[m].mrr.add(v);
      };
      if (!p.positive && q.positive) {
        let earlier = false;
        for (let j = first; j < k; j++) if (currencies.some((c) => value(customer, c, j).positive)) earlier = true;
        add(earlier ? 'reactivation' : 'newBusiness', q);
      } else if (p.positive && !q.positive) add('churn', p);
      else if (p.positive && q.cmp(p) > 0) add('expansion', q.sub(p));
      else if (p.positive && q.cmp(p) < 0) add('contraction', p.sub(q));
    }
    const ratio = (a: Frac, b: Frac) => (b.n === 0n ? null : a.div(b).round(4));
    const net = moves.newBusiness.mrr.add(moves.expansion.mrr).add(moves.reactivation.mrr).sub(moves.contraction.mrr).sub(moves.churn.mrr);
    monthly.push({
      month: label(k),
      activeCustomers: active,
      mrr: mrr.round(2),
      arr: mrr.mul(new Frac(12n)).round(2),
      arpa: active === 0 ? null : mrr.div(new Frac(BigInt(active))).round(2),
      movements: { ...Object.fromEntries(MOVES.map((m) => [m, { customers: moves[m].customers, mrr: moves[m].mrr.round(2) }])), netNewMrr: net.round(2), fxImpact: lastAtNow.sub(lastAtThen).round(2) },
      rates: {
        customerChurn: ratio(new Frac(BigInt(moves.churn.customers)), new Frac(BigInt(prevActive))),
        grossMrrChurn: ratio(moves.churn.mrr.add(moves.contraction.mrr), lastAtNow),
        netRevenueRetention: ratio(keptNow, keptThen),
        grossRevenueRetention: ratio(keptMin, keptThen),
      },
    });
  }
  return { currency: reporting, monthly, missingRates: missingSorted() };
}
