// The monthly figures of a version, from its contributing contracts one customer at a time
// (../shared/spec/contract.md, "Metrics and catalog"; the definitions are in definitions.ts).
// A customer's MRR in a currency changes only in the months where one of their contracts starts
// or stops being active at the month end, so each customer is walked through those months only:
// what changed there goes into the currency's months as differences (MRR, active customers, the
// retention sums) or as that month's movements, and into their cohort's row. The totals are
// summed up once at the end. Exact throughout (exact.ts); rounded only in the documents it makes.
import { formatMonth } from './calendar.ts';
import { type ContractTerm, MAX_MONTHS, type Movement, MOVEMENTS } from './definitions.ts';
import { CommonDenominator, ExactSum, type Fraction, lcm, money, Q, ratio, type Term } from './exact.ts';
import { MonthTable, type SharedMonthTable, sharedTableBytes } from './monthTable.ts';

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
/** A change as the walk makes it, and as addCustomer answers it (its exact MRR set then for those with other terms). */
type Step = Value & CustomerChange;

const NONE: readonly number[] = [];
/** Events of one customer are numbered below this (2^26), inside the key that sorts them by month. */
const EVENT_KEY = 67_108_864;
/** A customer of fewer than 2^15 events over fewer than 2^16 months has 32-bit keys instead (eventOrder). */
const SMALL_EVENT_BITS = 15;
const SMALL_EVENTS = (1 << SMALL_EVENT_BITS) - 1;
const SMALL_MONTHS = 1 << 16;
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
 * A currency's month cells, exact, for the conversion to a reporting currency (fxBasis.ts, which
 * holds them in its fixed point): per month, the differences from the month before of its active
 * customers, MRR and retention sums, and the month's movements; the retention sums run past the
 * series' last month. Exact fractions: the tally thread makes them, and its heap is small.
 */
export type ExactCells = {
  currency: string;
  cells: { month: number; customers: number; mrr: Fraction; retained?: { now: Fraction; then: Fraction; min: Fraction }; moves?: Record<Movement, { customers: number; mrr: Fraction }> }[];
  /** Each cohort's differences from the month before: its customers with MRR, and their MRR (absent in cells kept before there were any). */
  cohorts?: { cohort: number; cells: { month: number; customers: number; mrr: Fraction }[] }[];
}[];

/** Where a currency's series runs: from its first month to its last (the month after the last active month end, where its churn shows). */
export type SeriesBounds = { currency: string; first: number; last: number };

/**
 * The columns of a currency's months (monthTable.ts), each a difference from the month before
 * (summed up from the series' first month) but the movements, which are that month's own: active
 * contracts and customers, MRR; of the customers with MRR twelve month ends ago, their MRR now,
 * then, and min(now, then); then each movement's customers, and each movement's MRR.
 */
const CONTRACTS = 0;
const CUSTOMERS = 1;
const MRR = 2;
const RETAINED_NOW = 3;
const RETAINED_THEN = 4;
const RETAINED_MIN = 5;
const MOVE_CUSTOMERS = 6;
const MOVE_MRR = MOVE_CUSTOMERS + MOVEMENTS.length;
const COLUMNS = MOVE_MRR + MOVEMENTS.length;
/** A cohort's columns, differences by month: its customers with MRR, and their MRR. */
const COHORT_CUSTOMERS = 0;
const COHORT_MRR = 1;

/** A month's movements when nothing moved. */
const NO_MOVEMENTS: MonthFigures['movements'] = { ...(Object.fromEntries(MOVEMENTS.map((name) => [name, { customers: 0, mrr: '0.00' }])) as Record<Movement, { customers: number; mrr: string }>), netNewMrr: '0.00' };

const MOVEMENT_INDEX = Object.fromEntries(MOVEMENTS.map((m, i) => [m, i])) as Record<Movement, number>;

class CurrencyBook {
  first = Infinity;
  lastActive = -Infinity;
  readonly months = new MonthTable(COLUMNS);
  /** cohort month → its table by month. */
  readonly cohorts = new Map<number, MonthTable>();

  readonly currency: string;

  constructor(currency: string) {
    this.currency = currency;
  }

  /** A denominator for every sum of the currency's months and cohorts: each is then made a fraction with a few multiplications. */
  common(): CommonDenominator {
    const sums: ExactSum[] = [...this.months.restSums()];
    for (const row of this.cohorts.values()) sums.push(...row.restSums());
    return CommonDenominator.of(sums);
  }

  cohortRow(cohort: number): MonthTable {
    let row = this.cohorts.get(cohort);
    if (row === undefined) this.cohorts.set(cohort, (row = new MonthTable(2)));
    return row;
  }

  /** The series' last month: the month after the last active month end, within MAX_MONTHS of the first. */
  get last(): number {
    return Math.min(this.lastActive + 1, this.first + MAX_MONTHS - 1);
  }
}

/** A book as it crosses to another thread, to be merged there (MetricsBook.merge). */
export type SharedBook = { currency: string; first: number; lastActive: number; months: SharedMonthTable; cohorts: [number, SharedMonthTable][] }[];

/** About what a shared book takes in a heap once it has come across (sharedTableBytes, each of its tables). */
export function sharedBookBytes(book: SharedBook): number {
  return book.reduce((n, c) => n + sharedTableBytes(c.months) + c.cohorts.reduce((m, [, row]) => m + 64 + sharedTableBytes(row), 0), 0);
}

export class MetricsBook {
  private readonly currencies = new Map<string, CurrencyBook>();
  /** Scratch space for a customer's terms and events (valid during one addCustomer): the events sorted, and which terms are summed apart. */
  private keys = new Float64Array(64);
  private smallKeys = new Int32Array(64);
  private order = new Int32Array(64);
  private slowTerms = new Uint8Array(64);
  private readonly terms: Term[] = [];
  private readonly events: number[] = [];

  private currency(name: string): CurrencyBook {
    let c = this.currencies.get(name);
    if (c === undefined) this.currencies.set(name, (c = new CurrencyBook(name)));
    return c;
  }

  /** The book, to be merged into another in another thread (structured clone). */
  shared(): SharedBook {
    return [...this.currencies.values()].map((c) => ({
      currency: c.currency,
      first: c.first,
      lastActive: c.lastActive,
      months: c.months.shared(),
      cohorts: [...c.cohorts].map(([cohort, row]) => [cohort, row.shared()] as [number, SharedMonthTable]),
    }));
  }

  /**
   * Adds a book of other customers (its shared()) into this one: the figures are then those of one
   * book that took every customer (each customer's changes go into sums, and sums add exactly).
   */
  merge(other: SharedBook): void {
    for (const o of other) {
      const c = this.currency(o.currency);
      c.first = Math.min(c.first, o.first);
      c.lastActive = Math.max(c.lastActive, o.lastActive);
      c.months.merge(o.months);
      for (const [cohort, row] of o.cohorts) c.cohortRow(cohort).merge(row);
    }
  }

  /**
   * All the contributing contracts of one customer in one currency (each customer and currency
   * once). Answers the customer's changes of MRR, in month order.
   */
  addCustomer(currencyName: string, contracts: readonly ContractTerm[]): CustomerChange[] {
    const cur = this.currency(currencyName);
    const terms = this.terms;
    const events = this.events; // [month, contract (~contract when it stops)] pairs, flattened
    terms.length = 0;
    events.length = 0;
    let fastTotal = 0;
    let minMonth = Infinity;
    let maxMonth = -Infinity;
    for (const c of contracts) {
      if (c.lastMonth < c.firstMonth) continue; // holds no month end
      if (c.firstMonth < minMonth) minMonth = c.firstMonth;
      if (c.lastMonth > maxMonth) maxMonth = c.lastMonth;
      cur.months.add(c.firstMonth, CONTRACTS, 1);
      cur.months.add(c.lastMonth + 1, CONTRACTS, -1);
      events.push(c.firstMonth, terms.length, c.lastMonth + 1, ~terms.length);
      if (c.value.fast === c.value.fast) fastTotal += c.value.fast;
      terms.push(c.value);
    }
    if (terms.length === 0) return [];
    if (minMonth < cur.first) cur.first = minMonth;
    if (maxMonth > cur.lastActive) cur.lastActive = maxMonth;
    // A term is summed as a Number when it is one over Q and all of them together stay within
    // 2^52 (then every partial sum and difference is exact); any other is kept apart, exact.
    const allSlow = fastTotal > 2 ** 52;
    if (this.slowTerms.length < terms.length) this.slowTerms = new Uint8Array(2 * terms.length);
    const isSlow = this.slowTerms;
    for (let k = 0; k < terms.length; k++) isSlow[k] = allSlow || terms[k]!.fast !== terms[k]!.fast ? 1 : 0;

    // Walk the months where a contract starts or stops, in order.
    const n = events.length / 2;
    const order = this.eventOrder(n, minMonth, maxMonth + 1);
    const steps: Step[] = [];
    let value: Value = ZERO_VALUE;
    let q = 0;
    let slow = NONE;
    let active = 0;
    for (let i = 0; i < n; ) {
      const month = events[2 * order[i]!]!;
      for (; i < n; i++) {
        const e = order[i]!;
        if (events[2 * e] !== month) break;
        const c = events[2 * e + 1]!;
        const k = c >= 0 ? c : ~c;
        active += c >= 0 ? 1 : -1;
        if (isSlow[k] === 0) q += c >= 0 ? terms[k]!.fast : -terms[k]!.fast;
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
      const step: Step = { q, slow, month, movement, mrr: q, den: Q };
      this.recordChange(cur, terms, previous, step);
      steps.push(step);
      value = step;
    }
    this.recordCohort(cur, terms, steps);
    this.recordRetention(cur, terms, steps);
    for (const step of steps) if (step.slow.length > 0) exactChange(step, terms);
    return steps;
  }

  /**
   * The customer's `n` events (in this.events, their months from `first` to `last`) in month
   * order, as their numbers (in a scratch array kept for the next customer). Each event's month and
   * number go in one key that sorts as a number: 32-bit (month from the first × 2^15 + event) for
   * all but the rare customer of more events or months, whose keys are doubles (month × 2^26 + event).
   */
  private eventOrder(n: number, first: number, last: number): Int32Array {
    const events = this.events;
    if (this.order.length < n) {
      this.order = new Int32Array(Math.max(n, 2 * this.order.length));
      this.smallKeys = new Int32Array(this.order.length);
    }
    const order = this.order;
    if (n <= SMALL_EVENTS && last - first < SMALL_MONTHS) {
      const keys = this.smallKeys.subarray(0, n);
      for (let e = 0; e < n; e++) keys[e] = ((events[2 * e]! - first) << SMALL_EVENT_BITS) | e;
      keys.sort();
      for (let i = 0; i < n; i++) order[i] = keys[i]! & SMALL_EVENTS;
      return order;
    }
    if (this.keys.length < n) this.keys = new Float64Array(Math.max(n, 2 * this.keys.length));
    const keys = this.keys.subarray(0, n);
    for (let e = 0; e < n; e++) keys[e] = events[2 * e]! * EVENT_KEY + e;
    keys.sort();
    for (let i = 0; i < n; i++) order[i] = keys[i]! % EVENT_KEY;
    return order;
  }

  private recordChange(cur: CurrencyBook, terms: Term[], p: Value, n: Step): void {
    const table = cur.months;
    const m = n.month;
    addDifference(table, m, MRR, terms, n, p);
    table.add(m, CUSTOMERS, (isActive(n) ? 1 : 0) - (isActive(p) ? 1 : 0));
    const move = MOVEMENT_INDEX[n.movement];
    table.add(m, MOVE_CUSTOMERS + move, 1);
    if (n.movement === 'churn') addDifference(table, m, MOVE_MRR + move, terms, p, ZERO_VALUE);
    else if (n.movement === 'newBusiness' || n.movement === 'reactivation') addDifference(table, m, MOVE_MRR + move, terms, n, ZERO_VALUE);
    else if (n.movement === 'expansion') addDifference(table, m, MOVE_MRR + move, terms, n, p);
    else addDifference(table, m, MOVE_MRR + move, terms, p, n);
  }

  /** The customer's cohort is the month of their first change (their new business). */
  private recordCohort(cur: CurrencyBook, terms: Term[], steps: Step[]): void {
    if (steps.length === 0) return;
    const row = cur.cohortRow(steps[0]!.month);
    let p: Value = ZERO_VALUE;
    for (const n of steps) {
      row.add(n.month, COHORT_CUSTOMERS, (isActive(n) ? 1 : 0) - (isActive(p) ? 1 : 0));
      addDifference(row, n.month, COHORT_MRR, terms, n, p);
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
      if (nextNow !== now) addDifference(cur.months, month, RETAINED_NOW, terms, nextNow, now);
      if (nextThen !== then) addDifference(cur.months, month, RETAINED_THEN, terms, nextThen, then);
      if (nextLeast !== least) addDifference(cur.months, month, RETAINED_MIN, terms, nextLeast, least);
      [now, then, least] = [nextNow, nextThen, nextLeast];
    }
  }

  /**
   * Every currency's cells, exact (see ExactCells): the months its table holds a part in, but
   * those whose every figure is 0 (no difference: a book merged from two may hold parts there
   * that one book of every customer does not). `shown`: what each fraction is kept as, made one
   * at a time (the build keeps them in fixed point: exact, their denominators are the lcm of the
   * day counts, 1,600 digits on a realistic 10M-row file).
   */
  exactCells(shown: (f: Fraction) => Fraction = (f) => f): ExactCells {
    return this.series().map((cur) => {
      const t = cur.months;
      const nonZero = (month: number, columns: number[]) => columns.some((c) => t.exact(month, c).sign() !== 0);
      const retention = [RETAINED_NOW, RETAINED_THEN, RETAINED_MIN];
      const moves = MOVEMENTS.map((_, i) => MOVE_CUSTOMERS + i);
      return {
        currency: cur.currency,
        cells: t
          .months()
          .map((month) => ({
            month,
            customers: t.count(month, CUSTOMERS),
            mrr: shown(t.exact(month, MRR).fraction()),
            ...(nonZero(month, retention) && {
              retained: { now: shown(t.exact(month, RETAINED_NOW).fraction()), then: shown(t.exact(month, RETAINED_THEN).fraction()), min: shown(t.exact(month, RETAINED_MIN).fraction()) },
            }),
            ...(nonZero(month, moves) && {
              moves: Object.fromEntries(MOVEMENTS.map((m, i) => [m, { customers: t.count(month, MOVE_CUSTOMERS + i), mrr: shown(t.exact(month, MOVE_MRR + i).fraction()) }])) as Record<
                Movement,
                { customers: number; mrr: Fraction }
              >,
            }),
          }))
          .filter((cell) => cell.customers !== 0 || cell.mrr.n !== 0n || cell.retained !== undefined || cell.moves !== undefined),
        cohorts: [...cur.cohorts.keys()]
          .filter((cohort) => cohort <= cur.last)
          .sort((a, b) => a - b)
          .map((cohort) => {
            const row = cur.cohorts.get(cohort)!;
            return {
              cohort,
              cells: row
                .months()
                .filter((month) => month <= cur.last)
                .map((month) => ({ month, customers: row.count(month, COHORT_CUSTOMERS), mrr: shown(row.exact(month, COHORT_MRR).fraction()) }))
                .filter((cell) => cell.customers !== 0 || cell.mrr.n !== 0n),
            };
          }),
      };
    });
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
      let before: MonthFigures | undefined;
      for (let m = cur.first; m <= cur.last; m++) {
        const t = cur.months;
        if (before !== undefined && t.quiet(m)) {
          // Nothing changed at this month end: the month before's figures, no movement, and rates of nothing lost.
          const none = lastCustomers === 0 ? null : '0.0000';
          before = { ...before, month: formatMonth(m), movements: NO_MOVEMENTS, rates: { ...before.rates, customerChurn: none, grossMrrChurn: lastMrr.n === 0n ? null : '0.0000' } };
          out.push(before);
          continue;
        }
        contracts += t.count(m, CONTRACTS);
        customers += t.count(m, CUSTOMERS);
        t.addInto(mrr, m, MRR);
        t.addInto(retainedNow, m, RETAINED_NOW);
        t.addInto(retainedThen, m, RETAINED_THEN);
        t.addInto(retainedMin, m, RETAINED_MIN);
        const exact = mrr.fraction(common);
        const moveMrr = MOVEMENTS.map((_, i) => {
          const sum = new ExactSum();
          t.addInto(sum, m, MOVE_MRR + i);
          return sum;
        });
        const moveOf = (name: Movement) => ({ customers: t.count(m, MOVE_CUSTOMERS + MOVEMENT_INDEX[name]), mrr: moveMrr[MOVEMENT_INDEX[name]]! });
        const net = new ExactSum();
        for (const name of MOVEMENTS) net.add(moveOf(name).mrr, name === 'contraction' || name === 'churn' ? -1 : 1);
        const churned = moveOf('churn');
        const lost = moveOf('churn').mrr.clone().add(moveOf('contraction').mrr).fraction(common);
        const then = retainedThen.fraction(common);
        out.push((before = {
          month: formatMonth(m),
          currency: cur.currency,
          activeContracts: contracts,
          activeCustomers: customers,
          mrr: money(exact),
          arr: money({ n: exact.n * 12n, d: exact.d }),
          arpa: customers === 0 ? null : money({ n: exact.n, d: exact.d * BigInt(customers) }),
          movements: {
            ...(Object.fromEntries(MOVEMENTS.map((name) => [name, { customers: moveOf(name).customers, mrr: moveOf(name).mrr.money() }])) as Record<
              Movement,
              { customers: number; mrr: string }
            >),
            netNewMrr: net.money(),
          },
          rates: {
            customerChurn: ratio({ n: BigInt(churned.customers), d: 1n }, { n: BigInt(lastCustomers), d: 1n }),
            grossMrrChurn: ratio(lost, lastMrr),
            netRevenueRetention: ratio(retainedNow.fraction(common), then),
            grossRevenueRetention: ratio(retainedMin.fraction(common), then),
          },
        }));
        lastCustomers = customers;
        lastMrr = exact;
      }
    }
    return out.sort((a, b) => (a.month < b.month ? -1 : a.month > b.month ? 1 : byBytes(a.currency, b.currency)));
  }

  /** The cohorts of every currency, ordered by currency then cohort. */
  cohorts(): CohortFigures[] {
    return [...this.eachCohort()];
  }

  /** The cohorts one at a time, in the order of cohorts(): a book of many holds one in memory at once. */
  *eachCohort(): Generator<CohortFigures> {
    for (const cur of this.series()) {
      for (const cohort of [...cur.cohorts.keys()].sort((a, b) => a - b)) {
        if (cohort > cur.last) continue;
        const row = cur.cohorts.get(cohort)!;
        let customers = 0;
        const mrr = new ExactSum();
        const months: CohortFigures['months'] = [];
        for (let m = cohort; m <= cur.last; m++) {
          if (m > cohort && row.quiet(m)) {
            months.push({ month: formatMonth(m), customers, mrr: months.at(-1)!.mrr });
            continue;
          }
          customers += row.count(m, COHORT_CUSTOMERS);
          row.addInto(mrr, m, COHORT_MRR);
          months.push({ month: formatMonth(m), customers, mrr: mrr.money() });
        }
        yield { currency: cur.currency, cohort: formatMonth(cohort), customers: months[0]!.customers, mrr: months[0]!.mrr, months };
      }
    }
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

/**
 * a − b's sign, exact: in Numbers when their other terms are the same; else from the terms'
 * approximations when those put the difference well clear of 0 (a double's sum of a few terms is
 * off by far less than a billionth of their size), exactly when they do not.
 */
function compareValues(a: Value, b: Value, terms: Term[]): -1 | 0 | 1 {
  if (sameTerms(a.slow, b.slow)) return a.q > b.q ? 1 : a.q < b.q ? -1 : 0;
  let difference = (a.q - b.q) / QN;
  let size = Math.abs(a.q / QN) + Math.abs(b.q / QN);
  forEachDifferent(a.slow, b.slow, (k, sign) => {
    const t = approximate(terms[k]!);
    difference += sign * t;
    size += Math.abs(t);
  });
  if (Math.abs(difference) > size * 1e-9) return difference > 0 ? 1 : -1;
  return exactOf(a, terms).add(exactOf(b, terms), -1).sign();
}

const QN = Number(Q);
/** A term in cents, as the nearest double. */
const approximate = (t: Term): number => (t.fast === t.fast ? t.fast / QN : Number(t.num) / Number(t.den));

/** Calls `each` with each term in a but not b (sign 1) and in b but not a (-1): both lists ascending. */
function forEachDifferent(a: readonly number[], b: readonly number[], each: (k: number, sign: 1 | -1) => void): void {
  let i = 0;
  let j = 0;
  while (i < a.length || j < b.length) {
    const x = i < a.length ? a[i]! : Infinity;
    const y = j < b.length ? b[j]! : Infinity;
    if (x === y) {
      i++;
      j++;
    } else if (x < y) {
      each(x, 1);
      i++;
    } else {
      each(y, -1);
      j++;
    }
  }
}

/** Adds a value (sign 1) or takes it away (-1). */
function addValue(sum: ExactSum, terms: Term[], v: Value, sign: 1 | -1): void {
  sum.addNumber(sign * v.q);
  for (const k of v.slow) sum.addTerm(terms[k]!, sign);
}

/** Adds a − b (each of a and b within 2^52: their difference is exact) to a table's cell; the terms both hold cancel out unadded. */
function addDifference(table: MonthTable, month: number, column: number, terms: Term[], a: Value, b: Value): void {
  table.add(month, column, a.q - b.q);
  if (a.slow === b.slow) return;
  const x = a.slow;
  const y = b.slow;
  let i = 0;
  let j = 0;
  while (i < x.length || j < y.length) {
    const k = i < x.length ? x[i]! : Infinity;
    const l = j < y.length ? y[j]! : Infinity;
    if (k === l) {
      i++;
      j++;
    } else if (k < l) {
      table.addTerm(month, column, terms[k]!, 1);
      i++;
    } else {
      table.addTerm(month, column, terms[l]!, -1);
      j++;
    }
  }
}

/** lcm(Q, d) by d: the denominators of day counts (16 × days) are few, and met again and again. */
const lcmWithQ = new Map<bigint, bigint>();

/**
 * A change's MRR as one exact fraction, when it has terms apart: over the least common
 * denominator of Q and the terms' own (as ExactSum.fraction makes it), not reduced.
 */
function exactChange(s: Step, terms: Term[]): void {
  let d = Q;
  for (const k of s.slow) {
    const t = terms[k]!;
    if (t.fast === t.fast || t.den === Q || d % t.den === 0n) continue;
    if (d === Q) {
      let m = lcmWithQ.get(t.den);
      if (m === undefined) {
        m = lcm(Q, t.den);
        if (lcmWithQ.size < 100_000) lcmWithQ.set(t.den, m);
      }
      d = m;
    } else d = lcm(d, t.den);
  }
  const overQ = d / Q;
  let n = BigInt(s.q) * overQ;
  for (const k of s.slow) {
    const t = terms[k]!;
    n += t.fast === t.fast ? BigInt(t.fast) * overQ : t.den === Q ? t.num * overQ : t.num * (d / t.den);
  }
  s.mrr = n;
  s.den = d;
}


/** Byte order of UTF-8 text (PostgreSQL's C collation): code point order. */
export function byBytes(a: string, b: string): number {
  return Buffer.compare(Buffer.from(a, 'utf8'), Buffer.from(b, 'utf8'));
}
