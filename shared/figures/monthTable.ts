// A currency's sums by month, as the book (book.ts) adds into them a customer's change at a time:
// one row of columns per month, each an exact sum (exact.ts). The common part of every sum, a
// numerator over Q, is a Number in a Float64Array while it stays within 2^52 (it carries into a
// BigInt past that), so that adding a change touches no object; the parts over other
// denominators (terms of odd day counts) go to an ExactSum of the cell's, made when first needed.
import { ExactSum, Q, type Term } from './exact.ts';

/** Past this, a cell's Number part is carried into its BigInt part (two such still add exactly). */
const CARRY = 2 ** 52;
/** Loose parts are kept for denominators and cells below these (each fits a slot of an Int32Array, LooseSums). */
const CELLS = 2 ** 30;
const LOOSE_DENOMINATORS = 2 ** 30;

/** A table as it crosses to another thread (structured clone: its sums become plain objects), to be merged there. */
export type SharedMonthTable = {
  width: number;
  base: number;
  /** The Number parts that are not 0, as pairs: the cell's index (rows from `base`), then its value. */
  cells: Float64Array;
  big: Map<number, bigint> | undefined;
  rest: Map<number, ExactSum> | undefined;
  loose: SharedLooseSums | undefined;
};

/**
 * About what a shared table takes in a heap once it has come across and is merged: its cells, and
 * its sums' map entries and objects, a loose part's too (merge makes each one a sum's entry), bounded above.
 */
export function sharedTableBytes(t: SharedMonthTable): number {
  let entries = (t.big?.size ?? 0) + (t.rest?.size ?? 0);
  if (t.loose) LooseSums.forEach(t.loose, () => entries++);
  return 256 + t.cells.byteLength + SUM_ENTRY_BYTES * entries;
}

/**
 * Numerators by (denominator, cell), both below 2^30, each a safe integer: an open-addressing table
 * in typed arrays. Maps of Maps held a heap number per numerator past 2^31 (most are) and hashed
 * twice per part: the walk's most allocating step, and a seventh of its time on a realistic file.
 */
class LooseSums {
  /** Denominator per slot, 0 for an empty one (a denominator is at least 1). */
  dens: Int32Array;
  cells: Int32Array;
  values: Float64Array;
  private used = 0;
  /** Counts the parts taken, for their book (LooseCount). */
  private readonly count: LooseCount | undefined;

  constructor(count?: LooseCount, slots = 16) {
    this.count = count;
    this.dens = new Int32Array(slots);
    this.cells = new Int32Array(slots);
    this.values = new Float64Array(slots);
  }

  /**
   * Adds x to the numerator over den at cell; answers its sum. A sum past ±CARRY is taken out (the
   * slot keeps 0) for the caller to carry into a BigInt.
   */
  add(den: number, cell: number, x: number): number {
    const slot = this.slotOf(den, cell);
    const n = this.values[slot]! + x;
    this.values[slot] = n <= CARRY && n >= -CARRY ? n : 0;
    return n;
  }

  /** The slot holding (den, cell), or the empty one where it would go. */
  private probe(den: number, cell: number): number {
    const mask = this.dens.length - 1;
    let slot = LooseSums.hash(den, cell) & mask;
    for (let d = this.dens[slot]!; d !== 0 && (d !== den || this.cells[slot] !== cell); d = this.dens[slot]!) slot = (slot + 1) & mask;
    return slot;
  }

  private slotOf(den: number, cell: number): number {
    const slot = this.probe(den, cell);
    if (this.dens[slot] !== 0) return slot;
    if (2 * (this.used + 1) > this.dens.length) {
      this.grow();
      return this.slotOf(den, cell);
    }
    this.used++;
    if (this.count) this.count.parts++;
    this.dens[slot] = den;
    this.cells[slot] = cell;
    return slot;
  }

  private grow(): void {
    const { dens, cells, values, used } = this;
    this.dens = new Int32Array(2 * dens.length);
    this.cells = new Int32Array(2 * dens.length);
    this.values = new Float64Array(2 * dens.length);
    for (let i = 0; i < dens.length; i++) {
      if (dens[i] === 0) continue;
      const slot = this.probe(dens[i]!, cells[i]!);
      this.dens[slot] = dens[i]!;
      this.cells[slot] = cells[i]!;
      this.values[slot] = values[i]!;
    }
    this.used = used;
  }

  /** Denominators are multiples of 16: mixed so that their bits reach the low ones. */
  private static hash(den: number, cell: number): number {
    let h = Math.imul(den, 0x9e3779b1) ^ cell;
    h = Math.imul(h ^ (h >>> 15), 0x2c1b3c6d);
    return h ^ (h >>> 12);
  }

  /** Calls each(den, cell, numerator) for every numerator that is not 0, and `check` every CHECK_EVERY slots. */
  static forEach(t: SharedLooseSums, each: (den: number, cell: number, x: number) => void, check?: () => void): void {
    for (let i = 0; i < t.dens.length; i++) {
      if (check && i % CHECK_EVERY === CHECK_EVERY - 1) check();
      if (t.dens[i] !== 0 && t.values[i] !== 0) each(t.dens[i]!, t.cells[i]!, t.values[i]!);
    }
  }
}

/** Slots between two looks at the heap's room while loose parts become sums (each may make an object or two). */
const CHECK_EVERY = 4096;

/**
 * How many loose parts a book's tables took: each becomes a sum's entry in the heap when the
 * tables are settled (about SUM_ENTRY_BYTES), which a walk's look at the heap's room counts ahead.
 */
export type LooseCount = { parts: number };

/** About what a sum's entry takes in a heap, bounded above: an ExactSum, its map and their entries. */
export const SUM_ENTRY_BYTES = 160;

/** LooseSums as they cross to another thread (structured clone keeps the arrays). */
type SharedLooseSums = { dens: Int32Array; cells: Int32Array; values: Float64Array };

export class MonthTable {
  private readonly width: number;
  private base = 0;
  private rows = 0;
  private data = new Float64Array(0);
  /** Cells' carried parts and other denominators' parts, by cell index (rows from `base`). */
  private big: Map<number, bigint> | undefined;
  private rest: Map<number, ExactSum> | undefined;
  /**
   * Other denominators' parts as they are added: numerator by denominator and cell, while both are
   * small (most are: 16 × a term's days); folded into `rest` when the sums are read.
   */
  private loose: LooseSums | undefined;

  private readonly looseCount: LooseCount | undefined;

  /** `looseCount`: counts the loose parts it takes, for its book (the walk's look at the heap's room). */
  constructor(width: number, looseCount?: LooseCount) {
    this.width = width;
    this.looseCount = looseCount;
  }

  /** Adds x ÷ Q (a safe integer) to a cell. */
  add(month: number, column: number, x: number): void {
    const i = this.cell(month, column);
    const n = this.data[i]! + x;
    if (n > CARRY || n < -CARRY) {
      this.big ??= new Map();
      this.big.set(i, (this.big.get(i) ?? 0n) + BigInt(n));
      this.data[i] = 0;
    } else this.data[i] = n;
  }

  /** Adds values[a] − values[b] (indices; -1 for 0) as add does, reading them here: a double passed to a call is a heap number made. */
  addDifference(month: number, column: number, values: Float64Array, a: number, b: number): void {
    this.add(month, column, (a < 0 ? 0 : values[a]!) - (b < 0 ? 0 : values[b]!));
  }

  /** Adds a term (sign 1) or takes it away (-1). */
  addTerm(month: number, column: number, t: Term, sign: 1 | -1): void {
    if (t.fast === t.fast) return this.add(month, column, sign * t.fast);
    const i = this.cell(month, column);
    const den = Number(t.den);
    const num = sign * Number(t.num);
    if (den < LOOSE_DENOMINATORS && num <= CARRY && num >= -CARRY && i < CELLS) {
      const loose = (this.loose ??= new LooseSums(this.looseCount));
      const n = loose.add(den, i, num);
      if (n <= CARRY && n >= -CARRY) return;
      this.restOf(i).addTerm({ num: BigInt(n), den: t.den, fast: NaN }, 1);
      return;
    }
    this.restOf(i).addTerm(t, sign);
  }

  private restOf(i: number): ExactSum {
    this.rest ??= new Map();
    let sum = this.rest.get(i);
    if (sum === undefined) this.rest.set(i, (sum = new ExactSum()));
    return sum;
  }

  /**
   * Folds the loose parts into the cells' sums (before they are read: each read does, if not done).
   * The sums are objects in the heap, where the loose parts were not: `check` looks at its room
   * meanwhile (a thread's tally gives up in time, where one at its heap's limit may be ended).
   */
  settle(check?: () => void): void {
    if (this.loose === undefined) return;
    LooseSums.forEach(this.loose, (den, i, n) => this.restOf(i).addOver(den, n), check);
    this.loose = undefined;
  }

  /** Whether nothing was added to any cell of the month: its sums are the month before's (the movements' are 0). */
  quiet(month: number): boolean {
    this.settle();
    const r = month - this.base;
    if (r < 0 || r >= this.rows) return true;
    const from = r * this.width;
    for (let i = from; i < from + this.width; i++) if (this.data[i] !== 0 || this.big?.has(i) === true || this.rest?.has(i) === true) return false;
    return true;
  }

  /** A cell as a Number: for the columns that count (never past 2^52). */
  count(month: number, column: number): number {
    const r = month - this.base;
    return r < 0 || r >= this.rows ? 0 : this.data[r * this.width + column]!;
  }

  /** Adds a cell's exact sum into `into`. */
  addInto(into: ExactSum, month: number, column: number): void {
    this.settle();
    const r = month - this.base;
    if (r < 0 || r >= this.rows) return;
    const i = r * this.width + column;
    into.addNumber(this.data[i]!);
    const big = this.big?.get(i);
    if (big !== undefined) into.addTerm({ num: big, den: Q, fast: NaN }, 1);
    const rest = this.rest?.get(i);
    if (rest !== undefined) into.add(rest);
  }

  /**
   * The months with a part added to any of their cells, in order: each holds a sum that is not 0,
   * or had a part (a sum may have come back to 0; a table merged from two (merge) may list such
   * months that one that took every part does not: whoever reads them skips the sums of 0).
   */
  months(): number[] {
    this.settle();
    const touched = new Set<number>();
    for (let r = 0; r < this.rows; r++) {
      for (let c = 0; c < this.width; c++) {
        if (this.data[r * this.width + c] !== 0) {
          touched.add(r);
          break;
        }
      }
    }
    for (const i of [...(this.big?.keys() ?? []), ...(this.rest?.keys() ?? [])]) touched.add(Math.floor(i / this.width));
    return [...touched].sort((a, b) => a - b).map((r) => this.base + r);
  }

  /** The table, to be merged into another in another thread (structured clone): its cells that are not 0, and its other parts. */
  shared(): SharedMonthTable {
    const data = this.data;
    const end = this.rows * this.width;
    let count = 0;
    for (let i = 0; i < end; i++) if (data[i] !== 0) count++;
    const cells = new Float64Array(2 * count);
    for (let i = 0, at = 0; i < end; i++) {
      if (data[i] === 0) continue;
      cells[at++] = i;
      cells[at++] = data[i]!;
    }
    return { width: this.width, base: this.base, cells, big: this.big, rest: this.rest, loose: this.loose };
  }

  /** Adds every sum of a table (its shared() as it came across) into this one's, exactly. */
  merge(other: SharedMonthTable): void {
    if (other.width !== this.width) throw new Error('tables of other columns');
    const month = (i: number) => other.base + Math.floor(i / other.width);
    const cells = other.cells;
    for (let at = 0; at < cells.length; at += 2) this.add(month(cells[at]!), cells[at]! % other.width, cells[at + 1]!);
    for (const [i, x] of other.big ?? []) this.restOf(this.cell(month(i), i % other.width)).addTerm({ num: x, den: Q, fast: NaN }, 1);
    for (const [i, sum] of other.rest ?? []) this.restOf(this.cell(month(i), i % other.width)).add(ExactSum.from(sum));
    if (other.loose) LooseSums.forEach(other.loose, (den, i, n) => this.restOf(this.cell(month(i), i % other.width)).addOver(den, n));
  }

  /** A cell's exact sum. */
  exact(month: number, column: number): ExactSum {
    const sum = new ExactSum();
    this.addInto(sum, month, column);
    return sum;
  }

  /** The sums over other denominators than Q (for a common denominator of the figures). */
  restSums(): Iterable<ExactSum> {
    this.settle();
    return this.rest?.values() ?? [];
  }

  private cell(month: number, column: number): number {
    let r = month - this.base;
    if (r < 0 || r >= this.rows) r = this.grow(month);
    return r * this.width + column;
  }

  /** Makes room for `month` and as much again beyond it (growing that way soon again costs no copy); its row. */
  private grow(month: number): number {
    if (this.rows === 0) {
      this.base = month;
      this.rows = 32;
      this.data = new Float64Array(32 * this.width);
      return 0;
    }
    const r = month - this.base;
    const more = Math.max(r < 0 ? -r : r - this.rows + 1, this.rows);
    const data = new Float64Array((this.rows + more) * this.width);
    const shift = r < 0 ? more : 0;
    data.set(this.data, shift * this.width);
    if (shift > 0) {
      this.settle();
      const moved = (m: Map<number, unknown> | undefined) => m && new Map([...m].map(([i, v]) => [i + shift * this.width, v]));
      this.big = moved(this.big) as Map<number, bigint> | undefined;
      this.rest = moved(this.rest) as Map<number, ExactSum> | undefined;
    }
    this.data = data;
    this.rows += more;
    this.base -= shift;
    return r + shift;
  }
}
