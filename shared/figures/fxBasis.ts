// What a version keeps so that its figures convert to one reporting currency at read time
// (../shared/spec/contract.md, "One reporting currency"; reporting.ts converts). A customer who
// holds one currency only is converted by multiplying their MRR by a rate > 0, which changes none
// of their movements' kinds and scales every sum they add to: so their part of every figure is a
// per-(month, currency) sum, times that month's rate. A customer of several currencies is the same
// wherever no rate can change the outcome (their MRR; a new business or churn; a change up, or
// down, in every currency; min(now, then) when one vector is above the other): that money goes
// into the same sums, their counts into the months'. Only what the rates decide is kept apart: a
// change up in one currency and down in another, and a retention month with neither vector above
// the other. A build starts from its book's cells (every customer as one per currency) and takes
// out the lines of the customers of several currencies; a version built before keeps its basis
// from all its customers' changes (customerChanges.ts), read in customer order. The sums are in
// 1/FIXED of a cent (exact.ts states the precision); the records kept apart, and every decision
// on a customer's values, are exact. Pure computation, no I/O.
import type { ExactCells } from './book.ts';
import { type Movement, MOVEMENTS } from './definitions.ts';
import { FIXED, fixedOf, type Fraction, lcm } from './exact.ts';
import { PackReader, PackWriter } from './packing.ts';
import { RetentionRecords } from './retentionRecords.ts';

/** A customer's exact MRR in a currency from each change on: `n ÷ den` cents. */
export type ExactStep = { month: number; movement: Movement; n: bigint; den: bigint };

/** One month of the one-currency customers of a currency: numerators over the basis' denominator (FIXED). */
export type BasisMonth = {
  active: number;
  /**
   * Every customer with MRR in the currency at the month end, those of several currencies too: the
   * sums are rounded (exact.ts, FIXED), so whether the currency's MRR is 0, and a rate needed, is told by this count.
   */
  holders: number;
  mrr: bigint;
  moves: Record<Movement, { customers: number; mrr: bigint }>;
  /** Of those with MRR twelve month ends ago: their MRR now, then, and the smaller of the two. */
  now: bigint;
  then: bigint;
  min: bigint;
};

/** A currency's series (first, last) and its months from its first to the last month of every currency's series (its retention sums run on). */
export type CurrencyBasis = { currency: string; first: number; last: number; months: BasisMonth[] };

/** One customer's values in several currencies, exact: currency → numerator over the record's own `den`. */
export type Vector = Record<string, bigint>;

/**
 * What the customers of several currencies add beyond the currencies' sums (which hold their
 * money wherever it does not depend on the rates): per month (from `first`), how many have MRR
 * and how many had each movement whose kind no rate can change; the changes whose kind the rates
 * decide (one currency up, another down: `delta`, each currency's change); and the retention's
 * months whose min(now, then) the rates decide (neither vector above the other).
 */
export type SeveralCurrencies = {
  first: number;
  active: number[];
  moves: Record<Movement, number[]>;
  mixedChanges: { month: number; delta: Vector; den: bigint }[];
  /** A customer's retention vectors from `month` to `until` (both included), where neither is above the other. */
  mixedRetention: RetentionRecords;
};

/**
 * A cohort of the whole business (a customer's cohort is their first month end with MRR in any
 * currency): from its month to the last month of every series, how many of it have MRR, and per
 * currency their MRR (numerators over the basis' denominator; a currency none of it holds is absent).
 */
export type CohortBasis = { cohort: number; active: number[]; mrr: Record<string, bigint[]>; holders: Record<string, number[]> };

export type FxBasis = { denominator: bigint; currencies: CurrencyBasis[]; several: SeveralCurrencies; cohorts: CohortBasis[] };

/** A sum in 1/FIXED of a cent (exact.ts): each value added is rounded there once (exact when its denominator divides FIXED). */
class Sum {
  private v = 0n;
  add(n: bigint, den: bigint): void {
    if (n !== 0n) this.v += fixedOf(n, den);
  }
  get value(): bigint {
    return this.v;
  }
}

type Cell = { active: number; holders: number; mrr: Sum; moves: Record<Movement, { customers: number; mrr: Sum }>; now: Sum; then: Sum; min: Sum };
const newCell = (): Cell => ({
  active: 0,
  holders: 0,
  mrr: new Sum(),
  moves: Object.fromEntries(MOVEMENTS.map((m) => [m, { customers: 0, mrr: new Sum() }])) as Cell['moves'],
  now: new Sum(),
  then: new Sum(),
  min: new Sum(),
});

/** a − b's sign, of two fractions with positive denominators. */
const compare = (an: bigint, ad: bigint, bn: bigint, bd: bigint) => {
  const x = ad === bd ? an - bn : an * bd - bn * ad;
  return x > 0n ? 1 : x < 0n ? -1 : 0;
};

/** Collects the basis customer by customer (each customer's currencies together). */
export class FxBasisBuilder {
  /** currency → month → differences of the month's sums from the month before (moves: the month's own). */
  private readonly cells = new Map<string, Map<number, Cell>>();
  /** The customers of several currencies' counts by month, and the changes and months the rates decide (values over `den`). */
  private readonly severalActive = new Map<number, number>();
  private readonly severalMoves = new Map<number, Record<Movement, number>>();
  private readonly mixedChanges: { month: number; delta: Map<string, bigint>; den: bigint }[] = [];
  private readonly mixedRetention: { month: number; until: number; now: Map<string, bigint>; then: Map<string, bigint>; den: bigint }[] = [];
  /** cohort → currency → month → the difference of the cohort's MRR in that currency from the month before. */
  private readonly cohortMoney = new Map<number, Map<string, Map<number, Sum>>>();
  /** cohort → currency → month → the difference of its customers with MRR in that currency from the month before. */
  private readonly cohortHolders = new Map<number, Map<string, Map<number, number>>>();
  /** cohort → month → the difference of its customers with MRR from the month before. */
  private readonly cohortActive = new Map<number, Map<number, number>>();
  private readonly bounds: Map<string, { first: number; last: number }>;
  /** The last month of every currency's series. */
  private readonly last: number;

  /** Whether every customer is in already (the book's cells): then only those of several currencies are added, and taken out. */
  private readonly fromCells: boolean;

  /**
   * For a version whose series run as `bounds` say (a customer's MRR in a currency is 0 outside
   * its series). With the book's `cells`, every customer is in: add those of several currencies only.
   */
  constructor(bounds: readonly { currency: string; first: number; last: number }[], cells?: ExactCells) {
    this.bounds = new Map(bounds.map((b) => [b.currency, b]));
    this.last = Math.max(...bounds.map((b) => b.last));
    this.fromCells = cells !== undefined;
    for (const { currency, cells: list, cohorts } of cells ?? []) {
      for (const c of list) {
        const cell = this.cell(currency, c.month);
        cell.active += c.customers;
        cell.holders += c.customers;
        cell.mrr.add(c.mrr.n, c.mrr.d);
        if (c.retained) for (const k of ['now', 'then', 'min'] as const) cell[k].add(c.retained[k].n, c.retained[k].d);
        if (c.moves) {
          for (const m of MOVEMENTS) {
            cell.moves[m].customers += c.moves[m].customers;
            cell.moves[m].mrr.add(c.moves[m].mrr.n, c.moves[m].mrr.d);
          }
        }
      }
      for (const { cohort, cells: months } of cohorts ?? []) {
        for (const c of months) {
          this.addCohortCount(cohort, c.month, c.customers);
          this.addCohortHolders(cohort, currency, c.month, c.customers);
          this.cohortSum(cohort, currency, c.month).add(c.mrr.n, c.mrr.d);
        }
      }
    }
  }

  private cohortSum(cohort: number, currency: string, month: number): Sum {
    let byCurrency = this.cohortMoney.get(cohort);
    if (byCurrency === undefined) this.cohortMoney.set(cohort, (byCurrency = new Map()));
    let byMonth = byCurrency.get(currency);
    if (byMonth === undefined) byCurrency.set(currency, (byMonth = new Map()));
    let sum = byMonth.get(month);
    if (sum === undefined) byMonth.set(month, (sum = new Sum()));
    return sum;
  }

  private addCohortCount(cohort: number, month: number, x: number): void {
    if (x === 0) return;
    let byMonth = this.cohortActive.get(cohort);
    if (byMonth === undefined) this.cohortActive.set(cohort, (byMonth = new Map()));
    byMonth.set(month, (byMonth.get(month) ?? 0) + x);
  }

  private addCohortHolders(cohort: number, currency: string, month: number, x: number): void {
    if (x === 0) return;
    let byCurrency = this.cohortHolders.get(cohort);
    if (byCurrency === undefined) this.cohortHolders.set(cohort, (byCurrency = new Map()));
    let byMonth = byCurrency.get(currency);
    if (byMonth === undefined) byCurrency.set(currency, (byMonth = new Map()));
    byMonth.set(month, (byMonth.get(month) ?? 0) + x);
  }

  /** A customer's line in one currency, added to a cohort's MRR and holders (sign 1) or taken out (-1), with its count when `counted`. */
  private addCohortLine(cohort: number, currency: string, steps: ExactStep[], sign: 1 | -1, counted: boolean): void {
    const k = BigInt(sign);
    let p: ExactStep | undefined;
    for (const s of steps) {
      const sum = this.cohortSum(cohort, currency, s.month);
      sum.add(k * s.n, s.den);
      if (p) sum.add(-k * p.n, p.den);
      const held = sign * ((s.n > 0n ? 1 : 0) - (p && p.n > 0n ? 1 : 0));
      this.addCohortHolders(cohort, currency, s.month, held);
      if (counted) this.addCohortCount(cohort, s.month, held);
      p = s;
    }
  }

  /** A currency's steps within its series: past its last month (at most 600 after its first), the MRR is 0. */
  private clip(currency: string, steps: ExactStep[]): ExactStep[] {
    const last = this.bounds.get(currency)?.last ?? -Infinity;
    if (steps.every((s) => s.month <= last)) return steps;
    const kept = steps.filter((s) => s.month <= last);
    const end = kept.at(-1);
    if (end && end.n > 0n) kept.push({ month: last + 1, movement: 'churn', n: 0n, den: 1n });
    return kept;
  }

  private cell(currency: string, month: number): Cell {
    let byMonth = this.cells.get(currency);
    if (byMonth === undefined) this.cells.set(currency, (byMonth = new Map()));
    let cell = byMonth.get(month);
    if (cell === undefined) byMonth.set(month, (cell = newCell()));
    return cell;
  }

  /** One customer's changes in each of their currencies (in month order each). */
  addCustomer(given: Record<string, ExactStep[]>): void {
    const byCurrency: Record<string, ExactStep[]> = {};
    for (const [c, steps] of Object.entries(given)) {
      const kept = this.clip(c, steps);
      if (kept.length > 0) byCurrency[c] = kept;
    }
    const currencies = Object.keys(byCurrency);
    if (currencies.length === 0) return;
    if (currencies.length > 1) {
      // Their lines are in the book's cells as if each were a customer of its own: out with them.
      if (this.fromCells) {
        for (const c of currencies) {
          this.addLine(c, byCurrency[c]!, -1);
          this.addCohortLine(byCurrency[c]![0]!.month, c, byCurrency[c]!, -1, true);
        }
      }
      // Their cohort is their first month end with MRR in any currency (counted in addSeveral).
      const cohort = Math.min(...currencies.map((c) => byCurrency[c]![0]!.month));
      for (const c of currencies) this.addCohortLine(cohort, c, byCurrency[c]!, 1, false);
      this.addSeveral(byCurrency);
      return;
    }
    if (!this.fromCells) {
      const [c] = currencies as [string];
      this.addLine(c, byCurrency[c]!, 1);
      this.addCohortLine(byCurrency[c]![0]!.month, c, byCurrency[c]!, 1, true);
    }
  }

  /**
   * A customer of several currencies (their values as numerators over the lcm of theirs): the
   * money whose place no rate changes goes into the currencies' sums, the counts into the months',
   * and what the rates decide is kept apart. Only the months where something can change are
   * visited: a change of theirs, and twelve months after one (retention compares with then).
   */
  private addSeveral(byCurrency: Record<string, ExactStep[]>): void {
    const currencies = Object.keys(byCurrency);
    const lines = currencies.map((c) => byCurrency[c]!);
    let den = 1n;
    for (const steps of lines) for (const s of steps) den = lcm(den, s.den);
    const from = Math.min(...lines.map((steps) => steps[0]!.month));
    const to = Math.min(this.last, Math.max(...lines.map((steps) => steps.at(-1)!.month)) + 12);
    const zero = currencies.map(() => 0n);
    // Their values over `den`, each scaled once, read at months that only grow (the events' m, m - 1 and m - 12).
    const scaled = lines.map((steps) => steps.map((s) => s.n * (den / s.den)));
    const reader = () => {
      const next = lines.map(() => 0);
      const values = currencies.map(() => 0n);
      return (m: number): bigint[] => {
        lines.forEach((steps, l) => {
          while (next[l]! < steps.length && steps[next[l]!]!.month <= m) values[l] = scaled[l]![next[l]!++]!;
        });
        return [...values];
      };
    };
    const [at, before, yearBefore] = [reader(), reader(), reader()];
    const events = [...new Set(lines.flatMap((steps) => steps.flatMap((s) => [s.month, s.month + 12])))].filter((m) => m <= to).sort((a, b) => a - b);
    const vector = (v: bigint[]) => new Map(currencies.map((c, i) => [c, v[i]!]));
    let had = false; // MRR at an earlier month end
    let lastRetention = { now: zero, then: zero, min: zero };
    for (let e = 0; e < events.length; e++) {
      const m = events[e]!;
      const q = at(m);
      const p = before(m - 1);
      const then = yearBefore(m - 12);
      const qActive = q.some((x) => x > 0n);
      const pActive = p.some((x) => x > 0n);
      if (!this.fromCells) {
        // Their holding of each currency (from the cells, the book counted it already).
        currencies.forEach((c, i) => {
          const held = (q[i]! > 0n ? 1 : 0) - (p[i]! > 0n ? 1 : 0);
          if (held !== 0) this.cell(c, m).holders += held;
        });
      }
      if (qActive !== pActive) {
        this.severalActive.set(m, (this.severalActive.get(m) ?? 0) + (qActive ? 1 : -1));
        this.addCohortCount(from, m, qActive ? 1 : -1);
      }
      if (q.some((x, i) => x !== p[i])) {
        currencies.forEach((c, i) => this.cell(c, m).mrr.add(q[i]! - p[i]!, den));
        const delta = q.map((x, i) => x - p[i]!);
        const move: Movement | undefined = !pActive ? (had ? 'reactivation' : 'newBusiness') : !qActive ? 'churn' : delta.every((x) => x >= 0n) ? 'expansion' : delta.every((x) => x <= 0n) ? 'contraction' : undefined;
        if (move === undefined) this.mixedChanges.push({ month: m, delta: vector(delta), den });
        else {
          const counts = this.severalMoves.get(m) ?? (Object.fromEntries(MOVEMENTS.map((k) => [k, 0])) as Record<Movement, number>);
          this.severalMoves.set(m, counts);
          counts[move]++;
          const amount = move === 'churn' ? p : move === 'contraction' ? delta.map((x) => -x) : move === 'expansion' ? delta : q;
          currencies.forEach((c, i) => this.cell(c, m).moves[move].mrr.add(amount[i]!, den));
        }
      }
      if (qActive) had = true;
      // Retention: counted when they had MRR twelve month ends ago, in any currency; it holds until the next such month.
      const counted = then.some((x) => x > 0n);
      const nowV = counted ? q : zero;
      const thenV = counted ? then : zero;
      const above = nowV.every((x, i) => x >= thenV[i]!);
      const below = nowV.every((x, i) => x <= thenV[i]!);
      const minV = above ? thenV : below ? nowV : zero;
      if (counted && !above && !below) {
        const until = Math.min(to, (events[e + 1] ?? to + 1) - 1);
        this.mixedRetention.push({ month: m, until, now: vector(nowV), then: vector(thenV), den });
      }
      const next = { now: nowV, then: thenV, min: minV };
      for (const k of ['now', 'then', 'min'] as const) {
        currencies.forEach((c, i) => {
          const diff = next[k][i]! - lastRetention[k][i]!;
          if (diff !== 0n) this.cell(c, m)[k].add(diff, den);
        });
      }
      lastRetention = next;
    }
  }

  /** A customer's line in one currency, added to the currency's sums (sign 1) or taken out (-1). */
  private addLine(currency: string, steps: ExactStep[], sign: 1 | -1): void {
    const k = BigInt(sign);
    let p: ExactStep | undefined;
    for (const s of steps) {
      const cell = this.cell(currency, s.month);
      cell.mrr.add(k * s.n, s.den);
      if (p) cell.mrr.add(-k * p.n, p.den);
      const held = (s.n > 0n ? 1 : 0) - (p && p.n > 0n ? 1 : 0);
      cell.active += sign * held;
      if (sign === 1) cell.holders += held; // a customer of several currencies taken out (-1) still holds the currency
      const move = cell.moves[s.movement];
      move.customers += sign;
      if (s.movement === 'churn') move.mrr.add(k * p!.n, p!.den);
      else if (s.movement === 'newBusiness' || s.movement === 'reactivation') move.mrr.add(k * s.n, s.den);
      else {
        const direction = s.movement === 'expansion' ? k : -k;
        move.mrr.add(direction * s.n, s.den);
        move.mrr.add(-direction * p!.n, p!.den);
      }
      p = s;
    }
    this.addRetention(currency, steps, k);
  }

  /** The retention sums change only at the customer's change months and twelve months after each. */
  private addRetention(currency: string, steps: ExactStep[], sign: bigint): void {
    const ZERO: [bigint, bigint] = [0n, 1n];
    let last = { now: ZERO, then: ZERO, min: ZERO };
    let i = 0; // the next step
    let j = 0; // the next step twelve months on
    let now: ExactStep | undefined;
    let then: ExactStep | undefined;
    while (i < steps.length || j < steps.length) {
      const m = Math.min(i < steps.length ? steps[i]!.month : Infinity, j < steps.length ? steps[j]!.month + 12 : Infinity);
      while (i < steps.length && steps[i]!.month <= m) now = steps[i++];
      while (j < steps.length && steps[j]!.month + 12 <= m) then = steps[j++];
      const counted = then !== undefined && then.n > 0n;
      const nowV: [bigint, bigint] = counted && now ? [now.n, now.den] : ZERO;
      const thenV: [bigint, bigint] = counted ? [then!.n, then!.den] : ZERO;
      const minV = compare(nowV[0], nowV[1], thenV[0], thenV[1]) < 0 ? nowV : thenV;
      const next = { now: nowV, then: thenV, min: minV };
      if (next.now === last.now && next.then === last.then && next.min === last.min) continue;
      const cell = this.cell(currency, m);
      for (const k of ['now', 'then', 'min'] as const) {
        if (next[k] === last[k]) continue;
        cell[k].add(sign * next[k][0], next[k][1]);
        cell[k].add(-sign * last[k][0], last[k][1]);
      }
      last = next;
    }
  }

  /** The basis, for each currency from its series' first month to the last of all. */
  done(): FxBasis {
    const last = this.last;
    const currencies: CurrencyBasis[] = [...this.bounds].map(([currency, { first, last: own }]) => {
      const byMonth = this.cells.get(currency);
      const months: BasisMonth[] = [];
      const running = { active: 0, holders: 0, mrr: 0n, now: 0n, then: 0n, min: 0n };
      // Differences before the series' first month (there are none: every change is in it) are summed in.
      const earlier = [...(byMonth?.keys() ?? [])].filter((m) => m < first);
      for (const m of earlier) addInto(running, byMonth!.get(m)!);
      for (let m = first; m <= last; m++) {
        const cell = byMonth?.get(m);
        if (cell) addInto(running, cell);
        months.push({
          ...running,
          moves: Object.fromEntries(MOVEMENTS.map((name) => [name, { customers: cell?.moves[name].customers ?? 0, mrr: cell?.moves[name].mrr.value ?? 0n }])) as BasisMonth['moves'],
        });
      }
      return { currency, first, last: own, months };
    });
    // A version with no series (no contributing rows) has no months: its several-currency lists start anywhere (0).
    const first = this.bounds.size === 0 ? 0 : Math.min(...[...this.bounds.values()].map((b) => b.first));
    const span = Math.max(0, last - first + 1);
    const active: number[] = [];
    let running = 0;
    for (let m = first; m <= last; m++) active.push((running += this.severalActive.get(m) ?? 0));
    const moves = Object.fromEntries(MOVEMENTS.map((k) => [k, Array.from({ length: span }, (_, i) => this.severalMoves.get(first + i)?.[k] ?? 0)])) as Record<Movement, number[]>;
    const vector = (v: Map<string, bigint>): Vector => Object.fromEntries(v);
    const several: SeveralCurrencies = {
      first,
      active,
      moves,
      mixedChanges: this.mixedChanges.filter((x) => x.month <= last).map((x) => ({ month: x.month, delta: vector(x.delta), den: x.den })),
      mixedRetention: RetentionRecords.of(
        this.mixedRetention.filter((x) => x.month <= last).map((x) => ({ month: x.month, until: Math.min(x.until, last), now: vector(x.now), then: vector(x.then), den: x.den })),
      ),
    };
    return { denominator: FIXED, currencies, several, cohorts: this.cohorts() };
  }

  /** The cohorts from their month to the last of every series (a cohort whose customers all moved to an earlier one is gone). */
  private cohorts(): CohortBasis[] {
    const out: CohortBasis[] = [];
    for (const cohort of [...this.cohortActive.keys()].sort((a, b) => a - b)) {
      if (cohort > this.last) continue;
      const counts = this.cohortActive.get(cohort)!;
      const active: number[] = [];
      let n = 0;
      for (let m = cohort; m <= this.last; m++) active.push((n += counts.get(m) ?? 0));
      if (active[0] === 0) continue;
      const mrr: Record<string, bigint[]> = {};
      const holders: Record<string, number[]> = {};
      for (const [currency, byMonth] of this.cohortHolders.get(cohort) ?? []) {
        const counted: number[] = [];
        let k = 0;
        for (let m = cohort; m <= this.last; m++) counted.push((k += byMonth.get(m) ?? 0));
        if (counted.every((x) => x === 0)) continue;
        const money = this.cohortMoney.get(cohort)?.get(currency);
        const values: bigint[] = [];
        let x = 0n;
        for (let m = cohort; m <= this.last; m++) values.push((x += money?.get(m)?.value ?? 0n));
        mrr[currency] = values;
        holders[currency] = counted;
      }
      out.push({ cohort, active, mrr, holders });
    }
    return out;
  }
}

function addInto(running: { active: number; holders: number; mrr: bigint; now: bigint; then: bigint; min: bigint }, cell: Cell): void {
  running.active += cell.active;
  running.holders += cell.holders;
  running.mrr += cell.mrr.value;
  running.now += cell.now.value;
  running.then += cell.then.value;
  running.min += cell.min.value;
}

/**
 * The basis' layout (its first byte): 4 since it is packed (packing.ts); 3 was JSON with decimal
 * strings (33.8 MB at 10M rows, most of a first reporting read to fetch and parse).
 */
export const BASIS_FORMAT = 4;

/** Whether a stored basis is of this release's layout: an older one is made again. */
export const basisIsCurrent = (packed: Buffer): boolean => packed[0] === BASIS_FORMAT;

/**
 * The basis packed (packing.ts): its currencies' names once, then its members in the order of
 * FxBasis, each list after its length; a month as [active, holders, mrr, now, then, min, each
 * movement's customers and mrr], a vector as its currencies' numbers and values.
 */
export function packBasis(b: FxBasis): Buffer {
  const out = new PackWriter();
  const names = [...new Set([...b.currencies.map((c) => c.currency), ...b.cohorts.flatMap((c) => Object.keys(c.mrr)), ...b.several.mixedChanges.flatMap((x) => Object.keys(x.delta)), ...b.several.mixedRetention.currencies])];
  const number = new Map(names.map((name, i) => [name, i]));
  const vector = (v: Vector) => {
    const entries = Object.entries(v);
    out.int(entries.length);
    for (const [c, x] of entries) {
      out.int(number.get(c)!);
      out.big(x);
    }
  };
  out.byte(BASIS_FORMAT);
  out.int(names.length);
  for (const name of names) out.string(name);
  out.big(b.denominator);
  out.int(b.currencies.length);
  for (const c of b.currencies) {
    out.int(number.get(c.currency)!);
    out.int(c.first);
    out.int(c.last);
    out.int(c.months.length);
    for (const m of c.months) {
      out.int(m.active);
      out.int(m.holders);
      for (const x of [m.mrr, m.now, m.then, m.min]) out.big(x);
      for (const name of MOVEMENTS) {
        out.int(m.moves[name].customers);
        out.big(m.moves[name].mrr);
      }
    }
  }
  const s = b.several;
  out.int(s.first);
  out.ints(s.active);
  for (const name of MOVEMENTS) out.ints(s.moves[name]);
  out.int(s.mixedChanges.length);
  for (const x of s.mixedChanges) {
    out.int(x.month);
    out.big(x.den);
    vector(x.delta);
  }
  s.mixedRetention.packInto(out, number);
  out.int(b.cohorts.length);
  for (const c of b.cohorts) {
    out.int(c.cohort);
    out.ints(c.active);
    const currencies = Object.keys(c.mrr);
    out.int(currencies.length);
    for (const currency of currencies) {
      out.int(number.get(currency)!);
      out.bigs(c.mrr[currency]!);
      out.ints(c.holders[currency]!);
    }
  }
  return out.done();
}

/** The basis packBasis packed. */
export function unpackBasis(packed: Buffer): FxBasis {
  const r = new PackReader(packed);
  if (r.byte() !== BASIS_FORMAT) throw new Error('not a basis of this layout');
  const names = Array.from({ length: r.int() }, () => r.string());
  const vector = (): Vector => {
    const v: Vector = {};
    for (let k = r.int(); k > 0; k--) v[names[r.int()]!] = r.big();
    return v;
  };
  const denominator = r.big();
  const currencies: CurrencyBasis[] = Array.from({ length: r.int() }, () => {
    const currency = names[r.int()]!;
    const first = r.int();
    const last = r.int();
    const months: BasisMonth[] = Array.from({ length: r.int() }, () => {
      const active = r.int();
      const holders = r.int();
      const [mrr, now, then, min] = [r.big(), r.big(), r.big(), r.big()];
      const moves = {} as BasisMonth['moves'];
      for (const name of MOVEMENTS) moves[name] = { customers: r.int(), mrr: r.big() };
      return { active, holders, mrr, now, then, min, moves };
    });
    return { currency, first, last, months };
  });
  const first = r.int();
  const active = r.ints();
  const moves = {} as SeveralCurrencies['moves'];
  for (const name of MOVEMENTS) moves[name] = r.ints();
  const mixedChanges = Array.from({ length: r.int() }, () => ({ month: r.int(), den: r.big(), delta: vector() }));
  const mixedRetention = RetentionRecords.unpackFrom(r, names);
  const cohorts: CohortBasis[] = Array.from({ length: r.int() }, () => {
    const cohort = r.int();
    const active = r.ints();
    const mrr: Record<string, bigint[]> = {};
    const holders: Record<string, number[]> = {};
    for (let k = r.int(); k > 0; k--) {
      const currency = names[r.int()]!;
      mrr[currency] = r.bigs();
      holders[currency] = r.ints();
    }
    return { cohort, active, mrr, holders };
  });
  if (!r.ended) throw new Error('a basis with bytes past its end');
  return { denominator, currencies, several: { first, active, moves, mixedChanges, mixedRetention }, cohorts };
}

/** The JSON layout of a basis (version_fx.basis_json) before BASIS_FORMAT 4. */
export type BasisDoc = {
  /** BASIS_JSON_FORMAT; absent in a basis of exact sums over their least common denominator (made before the fixed point). */
  format?: number;
  denominator: string;
  currencies: { currency: string; first: number; last: number; months: (number | string)[][] }[];
  several: {
    first: number;
    active: number[];
    moves: Record<Movement, number[]>;
    mixedChanges: [number, Record<string, string>, string][];
    mixedRetention: [number, Record<string, string>, Record<string, string>, string, number][];
  };
  /** Absent in a basis made before cohorts were converted: then it is made again. */
  cohorts?: [number, number[], Record<string, string[]>, Record<string, number[]>][];
};

/** The last JSON layout, read as it is; an older one is made again. */
export const BASIS_JSON_FORMAT = 3;

const vectorOf = (v: Record<string, string>): Vector => Object.fromEntries(Object.entries(v).map(([c, x]) => [c, BigInt(x)]));

/** A basis of the JSON layout (format 3) an earlier release kept: its version's customers may be purged since, so it is read, not made again. */
export function parseBasisJson(doc: BasisDoc): FxBasis {
  return {
    denominator: BigInt(doc.denominator),
    currencies: doc.currencies.map((c) => ({
      currency: c.currency,
      first: c.first,
      last: c.last,
      months: c.months.map((m) => ({
        active: m[0] as number,
        mrr: BigInt(m[1]!),
        now: BigInt(m[2]!),
        then: BigInt(m[3]!),
        min: BigInt(m[4]!),
        moves: Object.fromEntries(MOVEMENTS.map((name, i) => [name, { customers: m[5 + 2 * i] as number, mrr: BigInt(m[6 + 2 * i]!) }])) as BasisMonth['moves'],
        holders: m[5 + 2 * MOVEMENTS.length] as number,
      })),
    })),
    several: {
      first: doc.several.first,
      active: doc.several.active,
      moves: doc.several.moves,
      mixedChanges: doc.several.mixedChanges.map(([month, delta, den]) => ({ month, delta: vectorOf(delta), den: BigInt(den) })),
      mixedRetention: RetentionRecords.of(doc.several.mixedRetention.map(([month, now, then, den, until]) => ({ month, until, now: vectorOf(now), then: vectorOf(then), den: BigInt(den) }))),
    },
    cohorts: (doc.cohorts ?? []).map(([cohort, active, mrr, holders]) => ({
      cohort,
      active,
      holders,
      mrr: Object.fromEntries(Object.entries(mrr).map(([currency, v]) => [currency, v.map((x) => BigInt(x))])),
    })),
  };
}

/**
 * A book's cells as JSON (BigInts as "123n"), to keep until a basis is made from them: each value
 * rounded to its fixed point already, as the basis adds it (over FIXED, which fixedOf takes as it
 * is). Exact, a value's denominator is the lcm of its day counts: some 1,600 digits on a realistic
 * 10M-row file, twice per value, which made the cells some 100 MB to read back and parse. In fixed
 * point a value is its numerator alone, `{"n": …}`: FIXED written beside each (52 digits) was half
 * of the text (cells kept before say it, and still read).
 */
export const cellsJson = (cells: ExactCells): string =>
  JSON.stringify(cells, (_, v: unknown) => {
    if (typeof v === 'bigint') return `${v}n`;
    if (isFraction(v)) return { n: v.d === FIXED ? v.n : fixedOf(v.n, v.d) };
    return v;
  });

/** A fraction as cellsJson keeps it: in fixed point (for MetricsBook.exactCells, which then holds no exact one for long). */
export const fixedFraction = (f: Fraction): Fraction => (f.d === FIXED ? f : { n: fixedOf(f.n, f.d), d: FIXED });

const isFraction = (v: unknown): v is { n: bigint; d: bigint } =>
  typeof v === 'object' && v !== null && typeof (v as { n?: unknown }).n === 'bigint' && typeof (v as { d?: unknown }).d === 'bigint';

/** The cells cellsJson wrote (as text); a value without its denominator is over FIXED. */
export const parseCells = (text: string): ExactCells =>
  JSON.parse(text, (_, v: unknown) => {
    if (typeof v === 'string' && /^-?\d+n$/.test(v)) return BigInt(v.slice(0, -1));
    if (typeof v === 'object' && v !== null && typeof (v as { n?: unknown }).n === 'bigint' && (v as { d?: unknown }).d === undefined) return { n: (v as { n: bigint }).n, d: FIXED };
    return v;
  }) as ExactCells;
