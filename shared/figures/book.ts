// The monthly figures of a version, from its contributing contracts one customer at a time
// (../shared/spec/contract.md, "Metrics and catalog"; the definitions are in definitions.ts).
// A customer's MRR in a currency changes only in the months where one of their contracts starts
// or stops being active at the month end, so each customer is walked through those months only:
// what changed there goes into the currency's months as differences (MRR, active customers, the
// retention sums) or as that month's movements, and into their cohort's row. The totals are
// summed up once at the end. Exact throughout (exact.ts); rounded only in the documents it makes.
import { formatMonth } from './calendar.ts';
import { type ContractTerm, MAX_MONTHS, type Movement, MOVEMENT_INDEX, MOVEMENTS } from './definitions.ts';
import { CommonDenominator, ExactSum, type Fraction, lcm, money, Q, ratio, type Term } from './exact.ts';
import { grown } from '../platform/typedArrays.ts';
import { type LooseCount, MonthTable, type SharedMonthTable, SUM_ENTRY_BYTES, sharedTableBytes } from './monthTable.ts';

/**
 * A customer's MRR from `month` on, until their next change, and the movement that led to it:
 * exact, as a numerator over `den` (a Number while den is Q, else a BigInt).
 */
export type CustomerChange = { month: number; movement: Movement; mrr: number | bigint; den: bigint };

// A customer's MRR as the walk keeps it: the sum of its Number terms over Q (a q), and its other
// terms active (a slow: their indices, ascending; the same empty array NONE when none, as for most).
// Passed as the two, or as a change's index in Changes, never as an object: a walk of a million
// contracts made 1.7M changes, and their objects were most of the 1.3 GB it allocated.
const NONE: readonly number[] = [];

const NEW_BUSINESS = MOVEMENT_INDEX.newBusiness;
const EXPANSION = MOVEMENT_INDEX.expansion;
const CONTRACTION = MOVEMENT_INDEX.contraction;
const CHURN = MOVEMENT_INDEX.churn;
const REACTIVATION = MOVEMENT_INDEX.reactivation;

/**
 * A customer's changes of MRR in one currency as the walk leaves them (MetricsBook.walk), in
 * month order, in arrays kept from one customer to the next: each change's month, its movement
 * (index in MOVEMENTS) and the MRR from then on, as its q and slow; for a change with terms apart
 * (slow not empty), that MRR exact too, `mrr` over `den`.
 */
export class Changes {
  length = 0;
  month: Int32Array<ArrayBuffer> = new Int32Array(16);
  move: Uint8Array<ArrayBuffer> = new Uint8Array(16);
  q: Float64Array<ArrayBuffer> = new Float64Array(16);
  readonly slow: (readonly number[])[] = [];
  readonly mrr: bigint[] = [];
  readonly den: bigint[] = [];

  /** A change at the end, its MRR's q 0 until the caller writes it (a double passed to a call is a heap number made); its index. */
  add(month: number, move: number, slow: readonly number[]): number {
    const i = this.length++;
    this.month = grown(this.month, i + 1);
    this.move = grown(this.move, i + 1);
    this.q = grown(this.q, i + 1);
    this.month[i] = month;
    this.move[i] = move;
    this.q[i] = 0;
    this.slow[i] = slow;
    return i;
  }

  /** Whether change i has terms apart: its MRR is then mrr[i] over den[i], else q[i] over Q. */
  exact(i: number): boolean {
    return this.slow[i]!.length !== 0;
  }

  /** Whether change i holds any MRR. */
  active(i: number): boolean {
    return i >= 0 && (this.q[i] !== 0 || this.slow[i]!.length !== 0);
  }

  /** Change i as CustomerChange has it. */
  change(i: number): CustomerChange {
    const exact = this.exact(i);
    return { month: this.month[i]!, movement: MOVEMENTS[this.move[i]!]!, mrr: exact ? this.mrr[i]! : this.q[i]!, den: exact ? this.den[i]! : Q };
  }
}
/** Events of one customer are numbered below this (2^26), inside the key that sorts them by month. */
const EVENT_KEY = 67_108_864;
/**
 * Events are counted into their months (eventOrder) when they span at most this many months more
 * than there are events (most customers: a key's sort() took a view and a copy of the scratch array
 * each time); else their keys are sorted.
 */
const COUNTED_MONTHS = 256;

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

class CurrencyBook {
  first = Infinity;
  lastActive = -Infinity;
  readonly months: MonthTable;
  /** cohort month → its table by month. */
  readonly cohorts = new Map<number, MonthTable>();

  readonly currency: string;

  private readonly looseCount: LooseCount;

  constructor(currency: string, looseCount: LooseCount) {
    this.currency = currency;
    this.looseCount = looseCount;
    this.months = new MonthTable(COLUMNS, looseCount);
  }

  /** A denominator for every sum of the currency's months and cohorts: each is then made a fraction with a few multiplications. */
  common(): CommonDenominator {
    const sums: ExactSum[] = [...this.months.restSums()];
    for (const row of this.cohorts.values()) sums.push(...row.restSums());
    return CommonDenominator.of(sums);
  }

  cohortRow(cohort: number): MonthTable {
    let row = this.cohorts.get(cohort);
    if (row === undefined) this.cohorts.set(cohort, (row = new MonthTable(2, this.looseCount)));
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
  /** The loose parts its tables took (MonthTable): the heap they take once settled is not yet taken. */
  private readonly looseCount: LooseCount = { parts: 0 };
  /** Scratch space for a customer's terms and events (valid during one walk; the terms of the largest customer yet stay referenced): the events sorted, and which terms are summed apart. */
  private keys = new Float64Array(64);
  private order = new Int32Array(64);
  private counts = new Int32Array(256);
  private slowTerms = new Uint8Array(64);
  private readonly terms: Term[] = [];
  /** [month, contract (~contract when it stops)] pairs, flattened. Arrays kept whole: a JS array's length set to 0 lets its elements go. */
  private events: Int32Array<ArrayBuffer> = new Int32Array(128);
  private readonly changes = new Changes();

  private currency(name: string): CurrencyBook {
    let c = this.currencies.get(name);
    if (c === undefined) this.currencies.set(name, (c = new CurrencyBook(name, this.looseCount)));
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
    const changes = this.walk(currencyName, contracts, contracts.length);
    return Array.from({ length: changes.length }, (_, i) => changes.change(i));
  }

  /**
   * addCustomer of the first `count` contracts, answering the customer's changes in arrays that
   * the next customer's walk reuses.
   */
  walk(currencyName: string, contracts: readonly ContractTerm[], count: number): Changes {
    const cur = this.currency(currencyName);
    const terms = this.terms; // the first `t` of them, the customer's
    const events = (this.events = grown(this.events, 4 * count));
    const steps = this.changes;
    steps.length = 0;
    let t = 0;
    let fastTotal = 0;
    let minMonth = Infinity;
    let maxMonth = -Infinity;
    for (let j = 0; j < count; j++) {
      const c = contracts[j]!;
      if (c.lastMonth < c.firstMonth) continue; // holds no month end
      if (c.firstMonth < minMonth) minMonth = c.firstMonth;
      if (c.lastMonth > maxMonth) maxMonth = c.lastMonth;
      cur.months.add(c.firstMonth, CONTRACTS, 1);
      cur.months.add(c.lastMonth + 1, CONTRACTS, -1);
      events[4 * t] = c.firstMonth;
      events[4 * t + 1] = t;
      events[4 * t + 2] = c.lastMonth + 1;
      events[4 * t + 3] = ~t;
      if (c.value.fast === c.value.fast) fastTotal += c.value.fast;
      terms[t++] = c.value;
    }
    if (t === 0) return steps;
    if (minMonth < cur.first) cur.first = minMonth;
    if (maxMonth > cur.lastActive) cur.lastActive = maxMonth;
    // A term is summed as a Number when it is one over Q and all of them together stay within
    // 2^52 (then every partial sum and difference is exact); any other is kept apart, exact.
    const allSlow = fastTotal > 2 ** 52;
    if (this.slowTerms.length < t) this.slowTerms = new Uint8Array(2 * t);
    const isSlow = this.slowTerms;
    for (let k = 0; k < t; k++) isSlow[k] = allSlow || terms[k]!.fast !== terms[k]!.fast ? 1 : 0;

    // Walk the months where a contract starts or stops, in order.
    const n = 2 * t;
    const order = this.eventOrder(n, minMonth, maxMonth + 1);
    // The customer's MRR at the last month walked (the last change's, perhaps of other terms).
    let valueQ = 0;
    let valueSlow = NONE;
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
      const cmp = slow === valueSlow || sameTerms(slow, valueSlow) ? (q > valueQ ? 1 : q < valueQ ? -1 : 0) : compareValues(q, slow, valueQ, valueSlow, terms);
      valueQ = q; // the same value when cmp is 0, perhaps of other terms
      valueSlow = slow;
      if (cmp === 0) continue; // a renewal at the same monthly value: no change
      const p = steps.length - 1; // the change before, if any
      const at = steps.add(month, !steps.active(p) ? (p < 0 ? NEW_BUSINESS : REACTIVATION) : active === 0 ? CHURN : cmp > 0 ? EXPANSION : CONTRACTION, slow);
      steps.q[at] = q;
      this.recordChange(cur, terms, steps, at);
    }
    this.recordCohort(cur, terms, steps);
    this.recordRetention(cur, terms, steps);
    for (let i = 0; i < steps.length; i++) if (steps.exact(i)) exactChange(steps, i, terms);
    return steps;
  }

  /**
   * The customer's `n` events (in this.events, their months from `first` to `last`) in month
   * order, each month's in their numbers' order, as their numbers (in a scratch array kept for the
   * next customer). Most customers' are counted into their months (COUNTED_MONTHS); the events of
   * the rare one whose months are many more than its events go in keys that sort as numbers
   * (month × 2^26 + event).
   */
  private eventOrder(n: number, first: number, last: number): Int32Array {
    const events = this.events;
    if (this.order.length < n) this.order = new Int32Array(Math.max(n, 2 * this.order.length));
    const order = this.order;
    const months = last - first + 1;
    if (months <= COUNTED_MONTHS + n) {
      // A counting sort by month: events of a month in their numbers' order, as the keys sort.
      if (this.counts.length < months) this.counts = new Int32Array(Math.max(months, 2 * this.counts.length));
      const counts = this.counts;
      counts.fill(0, 0, months);
      for (let e = 0; e < n; e++) {
        const m = events[2 * e]! - first;
        counts[m] = counts[m]! + 1;
      }
      for (let m = 0, at = 0; m < months; m++) {
        const count = counts[m]!;
        counts[m] = at;
        at += count;
      }
      for (let e = 0; e < n; e++) {
        const m = events[2 * e]! - first;
        const at = counts[m]!;
        counts[m] = at + 1;
        order[at] = e;
      }
      return order;
    }
    if (this.keys.length < n) this.keys = new Float64Array(Math.max(n, 2 * this.keys.length));
    const keys = this.keys.subarray(0, n);
    for (let e = 0; e < n; e++) keys[e] = events[2 * e]! * EVENT_KEY + e;
    keys.sort();
    for (let i = 0; i < n; i++) order[i] = keys[i]! % EVENT_KEY;
    return order;
  }

  /** Change n (the one before it, n − 1, if any: from its MRR to n's). */
  private recordChange(cur: CurrencyBook, terms: Term[], steps: Changes, n: number): void {
    const table = cur.months;
    const m = steps.month[n]!;
    const move = steps.move[n]!;
    const p = n - 1;
    addDifference(table, m, MRR, terms, steps, n, p);
    table.add(m, CUSTOMERS, (steps.active(n) ? 1 : 0) - (steps.active(p) ? 1 : 0));
    table.add(m, MOVE_CUSTOMERS + move, 1);
    if (move === CHURN) addDifference(table, m, MOVE_MRR + move, terms, steps, p, -1);
    else if (move === NEW_BUSINESS || move === REACTIVATION) addDifference(table, m, MOVE_MRR + move, terms, steps, n, -1);
    else if (move === EXPANSION) addDifference(table, m, MOVE_MRR + move, terms, steps, n, p);
    else addDifference(table, m, MOVE_MRR + move, terms, steps, p, n);
  }

  /** The customer's cohort is the month of their first change (their new business). */
  private recordCohort(cur: CurrencyBook, terms: Term[], steps: Changes): void {
    if (steps.length === 0) return;
    const row = cur.cohortRow(steps.month[0]!);
    for (let i = 0; i < steps.length; i++) {
      const m = steps.month[i]!;
      row.add(m, COHORT_CUSTOMERS, (steps.active(i) ? 1 : 0) - (steps.active(i - 1) ? 1 : 0));
      addDifference(row, m, COHORT_MRR, terms, steps, i, i - 1);
    }
  }

  /**
   * The retention sums: at month M, a customer with MRR at M − 12 adds their MRR now, then, and
   * the smaller of the two. That changes only at the customer's change months and twelve after.
   */
  private recordRetention(cur: CurrencyBook, terms: Term[], steps: Changes): void {
    // Each of now, then and least is a change's index, or -1 for no MRR.
    let now = -1;
    let then = -1;
    let least = -1;
    let atNow = -1; // the last step at or before the month
    let atThen = -1; // the last step at or before the month − 12
    let i = 0; // next step month
    let j = 0; // next step month + 12
    const n = steps.length;
    while (i < n || j < n) {
      const month = Math.min(i < n ? steps.month[i]! : Infinity, j < n ? steps.month[j]! + 12 : Infinity);
      while (i < n && steps.month[i]! <= month) atNow = i++;
      while (j < n && steps.month[j]! + 12 <= month) atThen = j++;
      const counted = steps.active(atThen);
      const nextNow = counted ? atNow : -1;
      const nextThen = counted ? atThen : -1;
      const nextLeast = counted ? (compareChanges(steps, nextNow, nextThen, terms) < 0 ? nextNow : nextThen) : -1;
      if (nextNow !== now) addDifference(cur.months, month, RETAINED_NOW, terms, steps, nextNow, now);
      if (nextThen !== then) addDifference(cur.months, month, RETAINED_THEN, terms, steps, nextThen, then);
      if (nextLeast !== least) addDifference(cur.months, month, RETAINED_MIN, terms, steps, nextLeast, least);
      now = nextNow;
      then = nextThen;
      least = nextLeast;
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

  /** About the heap its tables' loose parts will take once settled (a walk counts it with the heap's used size). */
  get unsettledBytes(): number {
    return SUM_ENTRY_BYTES * this.looseCount.parts;
  }

  /** Folds every table's loose parts into its sums before the documents read them (MonthTable.settle), with `check` meanwhile. */
  settle(check: () => void): void {
    for (const cur of this.currencies.values()) {
      cur.months.settle(check);
      for (const row of cur.cohorts.values()) row.settle(check);
      check();
    }
    this.looseCount.parts = 0;
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

function insertSorted(list: readonly number[], k: number): number[] {
  const out: number[] = [];
  let i = 0;
  for (; i < list.length && list[i]! < k; i++) out.push(list[i]!);
  out.push(k);
  for (; i < list.length; i++) out.push(list[i]!);
  return out;
}

function sameTerms(a: readonly number[], b: readonly number[]): boolean {
  if (a === b) return true;
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

/** A value's exact sum. */
function exactOf(q: number, slow: readonly number[], terms: Term[]): ExactSum {
  const sum = new ExactSum();
  sum.addNumber(q);
  for (const k of slow) sum.addTerm(terms[k]!, 1);
  return sum;
}

/**
 * a − b's sign, exact: in Numbers when their other terms are the same; else from the terms'
 * approximations when those put the difference well clear of 0 (a double's sum of a few terms is
 * off by far less than a billionth of their size), exactly when they do not.
 */
function compareValues(aq: number, aSlow: readonly number[], bq: number, bSlow: readonly number[], terms: Term[]): -1 | 0 | 1 {
  if (sameTerms(aSlow, bSlow)) return aq > bq ? 1 : aq < bq ? -1 : 0;
  let difference = (aq - bq) / QN;
  let size = Math.abs(aq / QN) + Math.abs(bq / QN);
  // Each term in a but not b, and in b but not a (both lists ascending).
  let i = 0;
  let j = 0;
  while (i < aSlow.length || j < bSlow.length) {
    const x = i < aSlow.length ? aSlow[i]! : Infinity;
    const y = j < bSlow.length ? bSlow[j]! : Infinity;
    if (x === y) {
      i++;
      j++;
      continue;
    }
    const t = approximate(terms[x < y ? x : y]!);
    difference += x < y ? t : -t;
    size += Math.abs(t);
    if (x < y) i++;
    else j++;
  }
  if (Math.abs(difference) > size * 1e-9) return difference > 0 ? 1 : -1;
  return exactOf(aq, aSlow, terms).add(exactOf(bq, bSlow, terms), -1).sign();
}

/** compareValues of two changes (indices into steps, -1 for no MRR), their MRRs read here: a double passed to a call is a heap number made. */
function compareChanges(steps: Changes, a: number, b: number, terms: Term[]): -1 | 0 | 1 {
  const aSlow = a < 0 ? NONE : steps.slow[a]!;
  const bSlow = b < 0 ? NONE : steps.slow[b]!;
  const aq = a < 0 ? 0 : steps.q[a]!;
  const bq = b < 0 ? 0 : steps.q[b]!;
  if (aSlow === bSlow || sameTerms(aSlow, bSlow)) return aq > bq ? 1 : aq < bq ? -1 : 0;
  return compareValues(aq, aSlow, bq, bSlow, terms);
}

const QN = Number(Q);
/** A term in cents, as the nearest double. */
const approximate = (t: Term): number => (t.fast === t.fast ? t.fast / QN : Number(t.num) / Number(t.den));

/**
 * Adds a's MRR − b's (changes, their indices into steps, -1 for none; each within 2^52: their
 * difference is exact) to a table's cell; the terms both hold cancel out unadded.
 */
function addDifference(table: MonthTable, month: number, column: number, terms: Term[], steps: Changes, a: number, b: number): void {
  table.addDifference(month, column, steps.q, a, b);
  const x = a < 0 ? NONE : steps.slow[a]!;
  const y = b < 0 ? NONE : steps.slow[b]!;
  if (x === y) return;
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
function exactChange(steps: Changes, i: number, terms: Term[]): void {
  const slow = steps.slow[i]!;
  let d = Q;
  for (const k of slow) {
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
  let n = BigInt(steps.q[i]!) * overQ;
  for (const k of slow) {
    const t = terms[k]!;
    n += t.fast === t.fast ? BigInt(t.fast) * overQ : t.den === Q ? t.num * overQ : t.num * (d / t.den);
  }
  steps.mrr[i] = n;
  steps.den[i] = d;
}

/** Byte order of UTF-8 text (PostgreSQL's C collation): code point order. */
export function byBytes(a: string, b: string): number {
  return Buffer.compare(Buffer.from(a, 'utf8'), Buffer.from(b, 'utf8'));
}
