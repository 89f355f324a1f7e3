// The monthly figures of a version, from its contributing contracts one customer at a time
// (../shared/spec/contract.md, "Metrics and catalog"; the definitions are in definitions.ts).
// A customer's MRR in a currency changes only in the months where one of their contracts starts
// or stops being active at the month end, so each customer is walked through those months only:
// what changed there goes into the currency's months as differences (MRR, active customers, the
// retention sums) or as that month's movements, and into their cohort's row. The totals are
// summed up once at the end. Exact throughout (exact.ts); rounded only in the documents it makes.
import { formatMonth } from './calendar.ts';
import { type ContractTerm, MAX_MONTHS, type Movement, MOVEMENTS } from './definitions.ts';
import { CommonDenominator, ExactSum, type Fraction, money, Q, ratio, type Term } from './exact.ts';

/**
 * A customer's MRR from `month` on, until their next change, and the movement that led to it:
 * exact, as a numerator over `den` (a Number while den is Q, else a BigInt).
 */
export type CustomerChange = { month: number; movement: Movement; mrr: number | bigint; den: bigint };

/**
 * A customer's MRR as the walk keeps it: the sum of its Number terms over Q (`q`), and its other
 * terms active (`slow`, their indices, ascending; the same empty array when none, as for most).
 */
type Value = { q: number; slow: readonly number[] };
type Step = Value & { month: number; movement: Movement };

const NONE: readonly number[] = [];
/** Events of one customer are numbered below this (2^26), inside the key that sorts them by month. */
const EVENT_KEY = 67_108_864;
const ZERO_VALUE: Value = { q: 0, slow: NONE };

/** One month of a currency, as the metrics document shows it. */
export type MonthFigures = {
  month: string;
  currency: string;
  activeContracts: number;
  activeCustomers: number;
  mrr: string;
  arr: string;
  arpa: string | null;
  movements: Record<Movement, { customers: number; mrr: string }> & { netNewMrr: string };
  rates: { customerChurn: string | null; grossMrrChurn: string | null; netRevenueRetention: string | null; grossRevenueRetention: string | null };
};

export type CohortFigures = { currency: string; cohort: string; customers: number; mrr: string; months: { month: string; customers: number; mrr: string }[] };

/**
 * A currency's month cells, exact, for the conversion to a reporting currency (fxBasis.ts): per
 * month, the differences from the month before of its active customers, MRR and retention sums,
 * and the month's movements; the retention sums run past the series' last month.
 */
export type ExactCells = {
  currency: string;
  cells: { month: number; customers: number; mrr: Fraction; retained?: { now: Fraction; then: Fraction; min: Fraction }; moves?: Record<Movement, { customers: number; mrr: Fraction }> }[];
}[];

/** Where a currency's series runs: from its first month to its last (the month after the last active month end, where its churn shows). */
export type SeriesBounds = { currency: string; first: number; last: number };

type MonthCell = {
  /** Differences, summed up from the series' first month: */
  contracts: number;
  customers: number;
  mrr: ExactSum;
  /** Of the customers with MRR twelve month ends ago: their MRR now, then, and min(now, then) (made when first needed). */
  retained: { now: ExactSum; then: ExactSum; min: ExactSum } | undefined;
  /** This month's movements (made when first needed: most months of most files have some, a file of many months few). */
  moves: Record<Movement, { customers: number; mrr: ExactSum }> | undefined;
};

type CohortCell = { customers: number; mrr: ExactSum };

/** Items by month number, in an array from the first month asked for (grown at either end). */
class ByMonth<T> {
  private base = 0;
  private items: (T | undefined)[] = [];

  get(month: number): T | undefined {
    return this.items[month - this.base];
  }

  *values(): Generator<T> {
    for (const item of this.items) if (item !== undefined) yield item;
  }

  *entries(): Generator<[number, T]> {
    for (let i = 0; i < this.items.length; i++) if (this.items[i] !== undefined) yield [this.base + i, this.items[i]!];
  }

  getOrMake(month: number, make: () => T): T {
    if (this.items.length === 0) this.base = month;
    let i = month - this.base;
    if (i < 0) {
      // Room below as well as what was asked: growing down again soon costs no new copy.
      const room = Math.max(-i, this.items.length);
      this.items = [...(new Array(room) as undefined[]), ...this.items];
      this.base -= room;
      i += room;
    }
    let item = this.items[i];
    if (item === undefined) this.items[i] = item = make();
    return item;
  }
}

const newCell = (): MonthCell => ({ contracts: 0, customers: 0, mrr: new ExactSum(), retained: undefined, moves: undefined });
const newCohortCell = (): CohortCell => ({ customers: 0, mrr: new ExactSum() });

class CurrencyBook {
  first = Infinity;
  lastActive = -Infinity;
  readonly cells = new ByMonth<MonthCell>();
  /** cohort month → month → differences of the cohort's customers with MRR, and of their MRR. */
  readonly cohorts = new Map<number, ByMonth<CohortCell>>();

  readonly currency: string;

  constructor(currency: string) {
    this.currency = currency;
  }

  cell(month: number): MonthCell {
    return this.cells.getOrMake(month, newCell);
  }

  /** A denominator for every sum of the currency's months and cohorts: each is then made a fraction with a few multiplications. */
  common(): CommonDenominator {
    const sums: ExactSum[] = [];
    for (const cell of this.cells.values()) {
      sums.push(cell.mrr);
      if (cell.retained) sums.push(cell.retained.now, cell.retained.then, cell.retained.min);
      if (cell.moves) for (const m of MOVEMENTS) sums.push(cell.moves[m].mrr);
    }
    for (const row of this.cohorts.values()) for (const cell of row.values()) sums.push(cell.mrr);
    return CommonDenominator.of(sums);
  }

  cohortRow(cohort: number): ByMonth<CohortCell> {
    let row = this.cohorts.get(cohort);
    if (row === undefined) this.cohorts.set(cohort, (row = new ByMonth()));
    return row;
  }

  /** The series' last month: the month after the last active month end, within MAX_MONTHS of the first. */
  get last(): number {
    return Math.min(this.lastActive + 1, this.first + MAX_MONTHS - 1);
  }
}

const ZERO = new ExactSum();

export class MetricsBook {
  private readonly currencies = new Map<string, CurrencyBook>();
  /** Scratch space for a customer's sorted events. */
  private keys = new Float64Array(64);

  private currency(name: string): CurrencyBook {
    let c = this.currencies.get(name);
    if (c === undefined) this.currencies.set(name, (c = new CurrencyBook(name)));
    return c;
  }

  /**
   * All the contributing contracts of one customer in one currency (each customer and currency
   * once). Answers the customer's changes of MRR, in month order.
   */
  addCustomer(currencyName: string, contracts: readonly ContractTerm[]): CustomerChange[] {
    const cur = this.currency(currencyName);
    const terms: Term[] = [];
    const events: number[] = []; // [month, contract (~contract when it stops)] pairs, flattened
    let fastTotal = 0;
    for (const c of contracts) {
      if (c.lastMonth < c.firstMonth) continue; // holds no month end
      if (c.firstMonth < cur.first) cur.first = c.firstMonth;
      if (c.lastMonth > cur.lastActive) cur.lastActive = c.lastMonth;
      cur.cell(c.firstMonth).contracts++;
      cur.cell(c.lastMonth + 1).contracts--;
      events.push(c.firstMonth, terms.length, c.lastMonth + 1, ~terms.length);
      if (c.value.fast === c.value.fast) fastTotal += c.value.fast;
      terms.push(c.value);
    }
    if (terms.length === 0) return [];
    // A term is summed as a Number when it is one over Q and all of them together stay within
    // 2^52 (then every partial sum and difference is exact); any other is kept apart, exact.
    const allSlow = fastTotal > 2 ** 52;
    const isSlow = terms.map((t) => allSlow || t.fast !== t.fast);

    // Walk the months where a contract starts or stops, in order: each event's month and number
    // in one key (month × 2^26 + event), sorted as numbers (in a scratch array kept for the next).
    const n = events.length / 2;
    if (this.keys.length < n) this.keys = new Float64Array(Math.max(n, 2 * this.keys.length));
    const keys = this.keys.subarray(0, n);
    for (let e = 0; e < n; e++) keys[e] = events[2 * e]! * EVENT_KEY + e;
    keys.sort();
    const steps: Step[] = [];
    let value: Value = ZERO_VALUE;
    let q = 0;
    let slow = NONE;
    let active = 0;
    for (let i = 0; i < n; ) {
      const month = events[2 * (keys[i]! % EVENT_KEY)]!;
      for (; i < n; i++) {
        const e = keys[i]! % EVENT_KEY;
        if (events[2 * e] !== month) break;
        const c = events[2 * e + 1]!;
        const k = c >= 0 ? c : ~c;
        active += c >= 0 ? 1 : -1;
        if (!isSlow[k]) q += c >= 0 ? terms[k]!.fast : -terms[k]!.fast;
        else slow = c >= 0 ? insertSorted(slow, k) : slow.filter((x) => x !== k);
      }
      if (active === 0) {
        q = 0; // exactly (a Number sum may say -0)
        slow = NONE;
      } else if (slow.length === 0) slow = NONE;
      const cmp = slow === value.slow || sameTerms(slow, value.slow) ? (q > value.q ? 1 : q < value.q ? -1 : 0) : compareValues({ q, slow }, value, terms);
      if (cmp === 0) {
        if (slow !== value.slow || q !== value.q) value = { q, slow }; // the same value, of other terms
        continue; // a renewal at the same monthly value: no change
      }
      const previous = steps.length === 0 ? ZERO_VALUE : steps[steps.length - 1]!;
      const movement: Movement = !isActive(previous) ? (steps.length === 0 ? 'newBusiness' : 'reactivation') : active === 0 ? 'churn' : cmp > 0 ? 'expansion' : 'contraction';
      const step: Step = { q, slow, month, movement };
      this.recordChange(cur, terms, previous, step);
      steps.push(step);
      value = step;
    }
    this.recordCohort(cur, terms, steps);
    this.recordRetention(cur, terms, steps);
    return steps.map((s) => customerChange(s, terms));
  }

  private recordChange(cur: CurrencyBook, terms: Term[], p: Value, n: Step): void {
    const cell = cur.cell(n.month);
    addDifference(cell.mrr, terms, n, p);
    cell.customers += (isActive(n) ? 1 : 0) - (isActive(p) ? 1 : 0);
    cell.moves ??= Object.fromEntries(MOVEMENTS.map((m) => [m, { customers: 0, mrr: new ExactSum() }])) as NonNullable<MonthCell['moves']>;
    const move = cell.moves[n.movement];
    move.customers++;
    if (n.movement === 'churn') addValue(move.mrr, terms, p, 1);
    else if (n.movement === 'newBusiness' || n.movement === 'reactivation') addValue(move.mrr, terms, n, 1);
    else if (n.movement === 'expansion') addDifference(move.mrr, terms, n, p);
    else addDifference(move.mrr, terms, p, n);
  }

  /** The customer's cohort is the month of their first change (their new business). */
  private recordCohort(cur: CurrencyBook, terms: Term[], steps: Step[]): void {
    if (steps.length === 0) return;
    const row = cur.cohortRow(steps[0]!.month);
    let p: Value = ZERO_VALUE;
    for (const n of steps) {
      const cell = row.getOrMake(n.month, newCohortCell);
      cell.customers += (isActive(n) ? 1 : 0) - (isActive(p) ? 1 : 0);
      addDifference(cell.mrr, terms, n, p);
      p = n;
    }
  }

  /**
   * The retention sums: at month M, a customer with MRR at M − 12 adds their MRR now, then, and
   * the smaller of the two. That changes only at the customer's change months and twelve after.
   */
  private recordRetention(cur: CurrencyBook, terms: Term[], steps: Step[]): void {
    let now: Value = ZERO_VALUE;
    let then: Value = ZERO_VALUE;
    let least: Value = ZERO_VALUE;
    let atNow = -1; // the last step at or before the month
    let atThen = -1; // the last step at or before the month − 12
    let i = 0; // next step month
    let j = 0; // next step month + 12
    while (i < steps.length || j < steps.length) {
      const month = Math.min(i < steps.length ? steps[i]!.month : Infinity, j < steps.length ? steps[j]!.month + 12 : Infinity);
      while (i < steps.length && steps[i]!.month <= month) atNow = i++;
      while (j < steps.length && steps[j]!.month + 12 <= month) atThen = j++;
      const previously = atThen < 0 ? ZERO_VALUE : steps[atThen]!;
      const counted = isActive(previously);
      const nextNow = counted ? (atNow < 0 ? ZERO_VALUE : steps[atNow]!) : ZERO_VALUE;
      const nextThen = counted ? previously : ZERO_VALUE;
      const nextLeast = counted ? (compareValues(nextNow, nextThen, terms) < 0 ? nextNow : nextThen) : ZERO_VALUE;
      if (nextNow !== now || nextThen !== then || nextLeast !== least) {
        const cell = cur.cell(month);
        const sums = (cell.retained ??= { now: new ExactSum(), then: new ExactSum(), min: new ExactSum() });
        if (nextNow !== now) addDifference(sums.now, terms, nextNow, now);
        if (nextThen !== then) addDifference(sums.then, terms, nextThen, then);
        if (nextLeast !== least) addDifference(sums.min, terms, nextLeast, least);
        [now, then, least] = [nextNow, nextThen, nextLeast];
      }
    }
  }

  /** Every currency's cells, exact (see ExactCells). */
  exactCells(): ExactCells {
    return this.series().map((cur) => ({
      currency: cur.currency,
      cells: [...cur.cells.entries()].map(([month, c]) => ({
        month,
        customers: c.customers,
        mrr: c.mrr.fraction(),
        ...(c.retained && { retained: { now: c.retained.now.fraction(), then: c.retained.then.fraction(), min: c.retained.min.fraction() } }),
        ...(c.moves && { moves: Object.fromEntries(MOVEMENTS.map((m) => [m, { customers: c.moves![m].customers, mrr: c.moves![m].mrr.fraction() }])) as Record<Movement, { customers: number; mrr: Fraction }> }),
      })),
    }));
  }

  /** Each currency's series bounds, ordered by currency. */
  bounds(): SeriesBounds[] {
    return this.series().map((c) => ({ currency: c.currency, first: c.first, last: c.last }));
  }

  private series(): CurrencyBook[] {
    return [...this.currencies.values()].filter((c) => c.first !== Infinity).sort((a, b) => byBytes(a.currency, b.currency));
  }

  /** The monthly figures of every currency, ordered by month then currency. */
  monthly(): MonthFigures[] {
    const out: MonthFigures[] = [];
    for (const cur of this.series()) {
      const common = cur.common();
      let contracts = 0;
      let customers = 0;
      const mrr = new ExactSum();
      const retainedNow = new ExactSum();
      const retainedThen = new ExactSum();
      const retainedMin = new ExactSum();
      let lastCustomers = 0;
      let lastMrr: Fraction = { n: 0n, d: 1n };
      for (let m = cur.first; m <= cur.last; m++) {
        const cell = cur.cells.get(m);
        if (cell) {
          contracts += cell.contracts;
          customers += cell.customers;
          mrr.add(cell.mrr);
          if (cell.retained) {
            retainedNow.add(cell.retained.now);
            retainedThen.add(cell.retained.then);
            retainedMin.add(cell.retained.min);
          }
        }
        const exact = mrr.fraction(common);
        const moveOf = (name: Movement) => cell?.moves?.[name] ?? { customers: 0, mrr: ZERO };
        const net = new ExactSum();
        for (const name of MOVEMENTS) net.add(moveOf(name).mrr, name === 'contraction' || name === 'churn' ? -1 : 1);
        const churned = moveOf('churn');
        const lost = moveOf('churn').mrr.clone().add(moveOf('contraction').mrr).fraction(common);
        const then = retainedThen.fraction(common);
        out.push({
          month: formatMonth(m),
          currency: cur.currency,
          activeContracts: contracts,
          activeCustomers: customers,
          mrr: money(exact),
          arr: money({ n: exact.n * 12n, d: exact.d }),
          arpa: customers === 0 ? null : money({ n: exact.n, d: exact.d * BigInt(customers) }),
          movements: {
            ...(Object.fromEntries(MOVEMENTS.map((name) => [name, { customers: moveOf(name).customers, mrr: money(moveOf(name).mrr.fraction(common)) }])) as Record<
              Movement,
              { customers: number; mrr: string }
            >),
            netNewMrr: money(net.fraction(common)),
          },
          rates: {
            customerChurn: ratio({ n: BigInt(churned.customers), d: 1n }, { n: BigInt(lastCustomers), d: 1n }),
            grossMrrChurn: ratio(lost, lastMrr),
            netRevenueRetention: ratio(retainedNow.fraction(common), then),
            grossRevenueRetention: ratio(retainedMin.fraction(common), then),
          },
        });
        lastCustomers = customers;
        lastMrr = exact;
      }
    }
    return out.sort((a, b) => (a.month < b.month ? -1 : a.month > b.month ? 1 : byBytes(a.currency, b.currency)));
  }

  /** The cohorts of every currency, ordered by currency then cohort. */
  cohorts(): CohortFigures[] {
    const out: CohortFigures[] = [];
    for (const cur of this.series()) {
      const common = cur.common();
      for (const cohort of [...cur.cohorts.keys()].sort((a, b) => a - b)) {
        if (cohort > cur.last) continue;
        const row = cur.cohorts.get(cohort)!;
        let customers = 0;
        const mrr = new ExactSum();
        const months: CohortFigures['months'] = [];
        for (let m = cohort; m <= cur.last; m++) {
          const cell = row.get(m);
          if (cell) {
            customers += cell.customers;
            mrr.add(cell.mrr);
          }
          months.push({ month: formatMonth(m), customers, mrr: money(mrr.fraction(common)) });
        }
        out.push({ currency: cur.currency, cohort: formatMonth(cohort), customers: months[0]!.customers, mrr: months[0]!.mrr, months });
      }
    }
    return out;
  }
}

/** Whether a value is above zero: every term is, so whether any is active. */
const isActive = (v: Value) => v.q !== 0 || v.slow.length !== 0;

function insertSorted(list: readonly number[], k: number): number[] {
  const out = [...list, k];
  return out.sort((a, b) => a - b);
}

const sameTerms = (a: readonly number[], b: readonly number[]) => a === b || (a.length === b.length && a.every((x, i) => x === b[i]));

/** A value's exact sum. */
function exactOf(v: Value, terms: Term[]): ExactSum {
  const sum = new ExactSum();
  addValue(sum, terms, v, 1);
  return sum;
}

/** a − b's sign, exact: in Numbers when their other terms are the same. */
function compareValues(a: Value, b: Value, terms: Term[]): -1 | 0 | 1 {
  if (sameTerms(a.slow, b.slow)) return a.q > b.q ? 1 : a.q < b.q ? -1 : 0;
  return exactOf(a, terms).add(exactOf(b, terms), -1).sign();
}

/** Adds a value (sign 1) or takes it away (-1). */
function addValue(sum: ExactSum, terms: Term[], v: Value, sign: 1 | -1): void {
  sum.addNumber(sign * v.q);
  for (const k of v.slow) sum.addTerm(terms[k]!, sign);
}

/** Adds a − b (each of a and b within 2^52: their difference is exact). */
function addDifference(sum: ExactSum, terms: Term[], a: Value, b: Value): void {
  sum.addNumber(a.q - b.q);
  if (a.slow === b.slow) return;
  for (const k of a.slow) sum.addTerm(terms[k]!, 1);
  for (const k of b.slow) sum.addTerm(terms[k]!, -1);
}

/** The change as the book answers it: its MRR as one exact numerator. */
function customerChange(s: Step, terms: Term[]): CustomerChange {
  if (s.slow.length === 0) return { month: s.month, movement: s.movement, mrr: s.q, den: Q };
  const f = exactOf(s, terms).fraction();
  return { month: s.month, movement: s.movement, mrr: f.n, den: f.d };
}


/** Byte order of UTF-8 text (PostgreSQL's C collation): code point order. */
export function byBytes(a: string, b: string): number {
  return Buffer.compare(Buffer.from(a, 'utf8'), Buffer.from(b, 'utf8'));
}
