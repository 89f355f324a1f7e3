// The monthly figures of a version, from its contributing contracts one customer at a time
// (../shared/spec/contract.md, "Metrics and catalog"; the definitions are in definitions.ts).
// A customer's MRR in a currency changes only in the months where one of their contracts starts
// or stops being active at the month end, so each customer is walked through those months only:
// what changed there goes into the currency's months as differences (MRR, active customers, the
// retention sums) or as that month's movements, and into their cohort's row. The totals are
// summed up once at the end. Exact throughout (exact.ts); rounded only in the documents it makes.
import { formatMonth } from './calendar.ts';
import { type ContractTerm, MAX_MONTHS, type Movement, MOVEMENTS } from './definitions.ts';
import { ExactSum, type Fraction, lcm, money, numerator, Q, ratio, type Term, wholeCents } from './exact.ts';

/**
 * A customer's MRR from `month` on, until their next change, and the movement that led to it.
 * `mrr` is exact: its numerator over `den` (a Number while den is Q, else a BigInt).
 */
export type CustomerChange = { month: number; movement: Movement; mrr: number | bigint; den: bigint; active: readonly number[] };

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

class CurrencyBook {
  first = Infinity;
  lastActive = -Infinity;
  readonly cells = new Map<number, MonthCell>();
  /** cohort month → month → differences of the cohort's customers with MRR, and of their MRR. */
  readonly cohorts = new Map<number, Map<number, CohortCell>>();

  readonly currency: string;

  constructor(currency: string) {
    this.currency = currency;
  }

  cell(month: number): MonthCell {
    let c = this.cells.get(month);
    if (c === undefined) {
      c = { contracts: 0, customers: 0, mrr: new ExactSum(), retained: undefined, moves: undefined };
      this.cells.set(month, c);
    }
    return c;
  }

  cohortCell(cohort: number, month: number): CohortCell {
    let row = this.cohorts.get(cohort);
    if (row === undefined) this.cohorts.set(cohort, (row = new Map()));
    let c = row.get(month);
    if (c === undefined) row.set(month, (c = { customers: 0, mrr: new ExactSum() }));
    return c;
  }

  /** The series' last month: the month after the last active month end, within MAX_MONTHS of the first. */
  get last(): number {
    return Math.min(this.lastActive + 1, this.first + MAX_MONTHS - 1);
  }
}

const ZERO = new ExactSum();

export class MetricsBook {
  private readonly currencies = new Map<string, CurrencyBook>();

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
    const starts: number[] = []; // [month, contract] pairs, flattened
    for (const c of contracts) {
      if (c.lastMonth < c.firstMonth) continue; // holds no month end
      if (c.firstMonth < cur.first) cur.first = c.firstMonth;
      if (c.lastMonth > cur.lastActive) cur.lastActive = c.lastMonth;
      cur.cell(c.firstMonth).contracts++;
      cur.cell(c.lastMonth + 1).contracts--;
      starts.push(c.firstMonth, terms.length, c.lastMonth + 1, ~terms.length);
      terms.push(c.value);
    }
    if (terms.length === 0) return [];

    // The customer's values as one numerator over one denominator: Q, in Numbers, when every term
    // is a Number over Q and their sum stays within 2^52 (most customers); else the lcm, in BigInts.
    let fast = true;
    let total = 0;
    for (const t of terms) {
      fast &&= t.fast === t.fast;
      total += Math.abs(t.fast);
    }
    fast &&= total <= 2 ** 52;
    let den = Q;
    if (!fast) for (const t of terms) if (t.den !== Q) den = lcm(den, t.den);
    const nums: (number | bigint)[] = terms.map((t) => (fast ? t.fast : numerator(t) * (den / t.den)));

    // Walk the months where a contract starts or stops, in order (at one month, starts before stops).
    const order = Array.from({ length: starts.length / 2 }, (_, i) => i).sort((a, b) => starts[2 * a]! - starts[2 * b]! || starts[2 * b + 1]! - starts[2 * a + 1]!);
    const active = new Set<number>();
    const changes: CustomerChange[] = [];
    let value: number | bigint = fast ? 0 : 0n;
    let previous: CustomerChange | undefined;
    for (let i = 0; i < order.length; ) {
      const month = starts[2 * order[i]!]!;
      let next = value;
      for (; i < order.length && starts[2 * order[i]!] === month; i++) {
        const c = starts[2 * order[i]! + 1]!;
        if (c >= 0) {
          active.add(c);
          next = fast ? (next as number) + (nums[c] as number) : (next as bigint) + (nums[c] as bigint);
        } else {
          active.delete(~c);
          next = fast ? (next as number) - (nums[~c] as number) : (next as bigint) - (nums[~c] as bigint);
        }
      }
      if (active.size === 0) next = fast ? 0 : 0n; // exactly 0 (it is, but a Number sum may say -0)
      if (next === value) continue; // a renewal at the same monthly value: no change
      const before = value > 0;
      const after = next > 0;
      const movement: Movement = !before ? (changes.length === 0 ? 'newBusiness' : 'reactivation') : !after ? 'churn' : next > value ? 'expansion' : 'contraction';
      const change: CustomerChange = { month, movement, mrr: next, den, active: [...active] };
      this.recordChange(cur, terms, previous, change);
      changes.push(change);
      previous = change;
      value = next;
    }
    this.recordCohort(cur, terms, changes);
    this.recordRetention(cur, terms, changes);
    return changes;
  }

  private recordChange(cur: CurrencyBook, terms: Term[], p: CustomerChange | undefined, q: CustomerChange): void {
    const cell = cur.cell(q.month);
    addAll(cell.mrr, terms, q.active, 1);
    if (p) addAll(cell.mrr, terms, p.active, -1);
    cell.customers += (q.active.length > 0 ? 1 : 0) - (p && p.active.length > 0 ? 1 : 0);
    cell.moves ??= Object.fromEntries(MOVEMENTS.map((m) => [m, { customers: 0, mrr: new ExactSum() }])) as NonNullable<MonthCell['moves']>;
    const move = cell.moves[q.movement];
    move.customers++;
    if (q.movement === 'churn') addAll(move.mrr, terms, p!.active, 1);
    else if (q.movement === 'newBusiness' || q.movement === 'reactivation') addAll(move.mrr, terms, q.active, 1);
    else {
      const sign = q.movement === 'expansion' ? 1 : -1;
      addAll(move.mrr, terms, q.active, sign);
      addAll(move.mrr, terms, p!.active, -sign as 1 | -1);
    }
  }

  /** The customer's cohort is the month of their first change (their new business). */
  private recordCohort(cur: CurrencyBook, terms: Term[], changes: CustomerChange[]): void {
    if (changes.length === 0) return;
    const cohort = changes[0]!.month;
    let p: CustomerChange | undefined;
    for (const q of changes) {
      const cell = cur.cohortCell(cohort, q.month);
      cell.customers += (q.active.length > 0 ? 1 : 0) - (p && p.active.length > 0 ? 1 : 0);
      addAll(cell.mrr, terms, q.active, 1);
      if (p) addAll(cell.mrr, terms, p.active, -1);
      p = q;
    }
  }

  /**
   * The retention sums: at month M, a customer with MRR at M − 12 adds their MRR now, then, and
   * the smaller of the two. That changes only at the customer's change months and twelve after.
   */
  private recordRetention(cur: CurrencyBook, terms: Term[], changes: CustomerChange[]): void {
    const none: readonly number[] = [];
    /** The contracts active at a month, and the customer's exact value then. */
    const at = (month: number): CustomerChange | undefined => {
      let found: CustomerChange | undefined;
      for (const c of changes) {
        if (c.month > month) break;
        found = c;
      }
      return found;
    };
    const months = [...new Set(changes.flatMap((c) => [c.month, c.month + 12]))].sort((a, b) => a - b);
    let now = none;
    let then = none;
    let least = none;
    for (const month of months) {
      const previously = at(month - 12);
      const counted = previously !== undefined && previously.active.length > 0;
      const current = at(month)!;
      const nextNow = counted ? current.active : none;
      const nextThen = counted ? previously.active : none;
      const nextLeast = counted ? (current.mrr < previously.mrr ? current.active : previously.active) : none;
      if (nextNow !== now || nextThen !== then || nextLeast !== least) {
        const cell = cur.cell(month);
        const sums = (cell.retained ??= { now: new ExactSum(), then: new ExactSum(), min: new ExactSum() });
        if (nextNow !== now) {
          addAll(sums.now, terms, nextNow, 1);
          addAll(sums.now, terms, now, -1);
        }
        if (nextThen !== then) {
          addAll(sums.then, terms, nextThen, 1);
          addAll(sums.then, terms, then, -1);
        }
        if (nextLeast !== least) {
          addAll(sums.min, terms, nextLeast, 1);
          addAll(sums.min, terms, least, -1);
        }
      }
      [now, then, least] = [nextNow, nextThen, nextLeast];
    }
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
        const exact = mrr.fraction();
        const moveOf = (name: Movement) => cell?.moves?.[name] ?? { customers: 0, mrr: ZERO };
        const net = new ExactSum();
        for (const name of MOVEMENTS) net.add(moveOf(name).mrr, name === 'contraction' || name === 'churn' ? -1 : 1);
        const churned = moveOf('churn');
        const lost = moveOf('churn').mrr.clone().add(moveOf('contraction').mrr).fraction();
        const then = retainedThen.fraction();
        out.push({
          month: formatMonth(m),
          currency: cur.currency,
          activeContracts: contracts,
          activeCustomers: customers,
          mrr: money(exact),
          arr: money({ n: exact.n * 12n, d: exact.d }),
          arpa: customers === 0 ? null : money({ n: exact.n, d: exact.d * BigInt(customers) }),
          movements: {
            ...(Object.fromEntries(MOVEMENTS.map((name) => [name, { customers: moveOf(name).customers, mrr: money(moveOf(name).mrr.fraction()) }])) as Record<
              Movement,
              { customers: number; mrr: string }
            >),
            netNewMrr: money(net.fraction()),
          },
          rates: {
            customerChurn: ratio({ n: BigInt(churned.customers), d: 1n }, { n: BigInt(lastCustomers), d: 1n }),
            grossMrrChurn: ratio(lost, lastMrr),
            netRevenueRetention: ratio(retainedNow.fraction(), then),
            grossRevenueRetention: ratio(retainedMin.fraction(), then),
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
          months.push({ month: formatMonth(m), customers, mrr: money(mrr.fraction()) });
        }
        out.push({ currency: cur.currency, cohort: formatMonth(cohort), customers: months[0]!.customers, mrr: months[0]!.mrr, months });
      }
    }
    return out;
  }
}

/** Adds (or takes away) the terms of the given contracts to a sum. */
function addAll(sum: ExactSum, terms: Term[], contracts: readonly number[], sign: 1 | -1): void {
  for (const c of contracts) sum.addTerm(terms[c]!, sign);
}

/** A customer's change as stored: its month, its MRR rounded to whole cents, its movement. */
export const storedChange = (c: CustomerChange) => ({ month: c.month, cents: wholeCents({ n: BigInt(c.mrr), d: c.den }), movement: c.movement });

/** Byte order of UTF-8 text (PostgreSQL's C collation): code point order. */
export function byBytes(a: string, b: string): number {
  return Buffer.compare(Buffer.from(a, 'utf8'), Buffer.from(b, 'utf8'));
}
