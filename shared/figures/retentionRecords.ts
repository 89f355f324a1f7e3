// The retention records of a basis for conversion (fxBasis.ts): a customer of several currencies'
// MRR now and twelve month ends before, over the months where neither vector is above the other,
// so that min(now, then) is decided by the rates (reporting.ts). At 10M rows there are some 190,000
// of them, read at every first reporting read: kept as columns, each value as 32-bit limbs and as a
// double, not as objects of BigInts (whose unpacking and conversion were most of that read).
import { FIXED, fixedOf } from './exact.ts';
import type { PackReader, PackWriter } from './packing.ts';

/** A record as the basis' builder makes it: values are numerators over `den` (cents), never negative. */
export type RetentionRecord = { month: number; until: number; now: Record<string, bigint>; then: Record<string, bigint>; den: bigint };

const LIMB_BITS = 32n;
/** Records whose limbs one sum adds before it is carried into BigInts: each limb < 2^32, so a sum stays under 2^53. */
const SUMMED_AT_ONCE = 2 ** 20;

export class RetentionRecords {
  readonly count: number;
  readonly currencies: readonly string[];
  readonly month: Int32Array;
  readonly until: Int32Array;
  /** Per record, the index of its denominator in `dens`. */
  private readonly denOf: Int32Array;
  private readonly dens: bigint[];
  private readonly factors: (bigint | undefined)[] = [];
  /** minAt's sums per denominator (C × L limbs each), kept for its next call (all 0 between calls). */
  private limbSums: Float64Array | undefined;
  /** 32-bit limbs per value, least significant first. */
  private readonly limbs: number;
  /** Record r's value of side s (0 now, 1 then) in currency c: limbs at ((2r + s) × C + c) × limbs. */
  private readonly values: Uint32Array;
  /** The same values as doubles (each within a few units in its 15th digit), at (2r + s) × C + c. */
  private readonly approx: Float64Array;

  private constructor(currencies: readonly string[], count: number, limbs: number, dens: bigint[]) {
    this.count = count;
    this.currencies = currencies;
    this.limbs = limbs;
    this.dens = dens;
    this.month = new Int32Array(count);
    this.until = new Int32Array(count);
    this.denOf = new Int32Array(count);
    this.values = new Uint32Array(2 * count * currencies.length * limbs);
    this.approx = new Float64Array(2 * count * currencies.length);
  }

  /** The records in month order: those a month converts lie together (read in customer order, at 10M rows a month's were spread over 30 MB). */
  static of(given: readonly RetentionRecord[]): RetentionRecords {
    const records = [...given].sort((x, y) => x.month - y.month);
    const currencies = [...new Set(records.flatMap((x) => [...Object.keys(x.now), ...Object.keys(x.then)]))];
    let widest = 0n;
    for (const x of records) for (const v of [...Object.values(x.now), ...Object.values(x.then)]) if (v > widest) widest = v;
    const limbs = Math.max(1, Math.ceil(widest.toString(2).length / 32));
    const dens = [...new Set(records.map((x) => x.den))];
    const out = new RetentionRecords(currencies, records.length, limbs, dens);
    const denIndex = new Map(dens.map((d, i) => [d, i]));
    const index = new Map(currencies.map((c, i) => [c, i]));
    records.forEach((x, r) => {
      out.month[r] = x.month;
      out.until[r] = x.until;
      out.denOf[r] = denIndex.get(x.den)!;
      for (const [side, vector] of [x.now, x.then].entries()) {
        for (const [c, v] of Object.entries(vector)) {
          if (v < 0n) throw new RangeError('a retention record holds MRR, never negative');
          out.set((2 * r + side) * currencies.length + index.get(c)!, v);
        }
      }
    });
    return out;
  }

  private set(value: number, v: bigint): void {
    let rest = v;
    for (let k = 0; k < this.limbs; k++) {
      this.values[value * this.limbs + k] = Number(rest & 0xffffffffn);
      rest >>= LIMB_BITS;
    }
    this.approx[value] = Number(v);
  }

  /** The exact value at `value` ((2r + s) × C + c). */
  private exact(value: number): bigint {
    let v = 0n;
    for (let k = this.limbs - 1; k >= 0; k--) v = (v << LIMB_BITS) + BigInt(this.values[value * this.limbs + k]!);
    return v;
  }

  /** The records as each basis keeps them (packing.ts): currencies by `number`, then the records as columns. */
  packInto(out: PackWriter, number: ReadonlyMap<string, number>): void {
    const C = this.currencies.length;
    out.int(this.count);
    out.int(C);
    for (const c of this.currencies) out.int(number.get(c)!);
    out.int(this.limbs);
    out.int(this.dens.length);
    for (const d of this.dens) out.big(d);
    for (let r = 0; r < this.count; r++) {
      out.int(this.month[r]!);
      out.int(this.until[r]! - this.month[r]!);
      out.int(this.denOf[r]!);
    }
    for (let value = 0; value < 2 * this.count * C; value++) out.big(this.exact(value));
  }

  static unpackFrom(r: PackReader, names: readonly string[]): RetentionRecords {
    const count = r.int();
    const currencies = Array.from({ length: r.int() }, () => names[r.int()]!);
    const limbs = r.int();
    const dens = Array.from({ length: r.int() }, () => r.big());
    const out = new RetentionRecords(currencies, count, limbs, dens);
    for (let k = 0; k < count; k++) {
      out.month[k] = r.int();
      out.until[k] = out.month[k]! + r.int();
      out.denOf[k] = r.int();
    }
    r.magnitudesInto(2 * count * currencies.length, limbs, out.values, out.approx);
    return out;
  }

  /** Record r as the builder made it (a currency the customer holds none of is absent). */
  record(r: number): RetentionRecord {
    const C = this.currencies.length;
    const vector = (side: number) => {
      const v: Record<string, bigint> = {};
      this.currencies.forEach((c, i) => {
        const value = (2 * r + side) * C + i;
        if (this.approx[value] !== 0) v[c] = this.exact(value);
      });
      return v;
    };
    return { month: this.month[r]!, until: this.until[r]!, now: vector(0), then: vector(1), den: this.dens[this.denOf[r]!]! };
  }

  /**
   * The sum of the `records`' min(now, then) at the rates `A` (per currency), in 1/FIXED of a cent
   * times the rates. The smaller side of most records is told by the doubles (each sum within a
   * few units in the 15th digit of its exact value, and the two far further apart); the others are
   * compared exactly. The smaller sides are added up exactly per denominator (limb by limb), and
   * each denominator's sum is rounded to 1/FIXED of a cent once (fixedOf), within the bound exact.ts
   * states for a sum of rounded values.
   */
  minAt(records: ArrayLike<number>, A: (currency: string) => bigint): bigint {
    const C = this.currencies.length;
    const L = this.limbs;
    const a = this.currencies.map(A);
    const af = Float64Array.from(a, Number);
    const limbSums = (this.limbSums ??= new Float64Array(this.dens.length * C * L));
    const touched = new Uint8Array(this.dens.length);
    const carried = new Map<number, bigint[]>();
    const carry = () => {
      for (let d = 0; d < this.dens.length; d++) {
        if (touched[d] === 0) continue;
        let sum = carried.get(d);
        if (sum === undefined) carried.set(d, (sum = new Array<bigint>(C).fill(0n)));
        this.carry(d, sum);
      }
    };
    // In runs short enough that no limb sum passes 2^53 (a run is all of a month's records but at 10^6 and more).
    for (let start = 0; start < records.length; start += SUMMED_AT_ONCE) {
      const end = Math.min(records.length, start + SUMMED_AT_ONCE);
      const close = addSmallerSides(records, start, end, C * L, this.approx, this.values, this.denOf, af, limbSums, touched);
      for (const r of close) {
        const from = (2 * r + this.smallerSide(r, a)) * C * L;
        const to = this.denOf[r]! * C * L;
        for (let k = 0; k < C * L; k++) limbSums[to + k] = limbSums[to + k]! + this.values[from + k]!;
      }
      carry();
    }
    let total = 0n;
    for (const [d, sum] of carried) {
      let v = 0n;
      for (let c = 0; c < C; c++) if (sum[c] !== 0n) v += sum[c]! * a[c]!;
      if (v !== 0n) total += this.fixed(v, d);
    }
    return total;
  }

  /** Record r's smaller side at the rates `a`, compared exactly: 0 now, 1 then (when equal, either is the min). */
  private smallerSide(r: number, a: readonly bigint[]): number {
    const C = this.currencies.length;
    let q = 0n;
    let t = 0n;
    for (let c = 0; c < C; c++) {
      q += this.exact(2 * r * C + c) * a[c]!;
      t += this.exact((2 * r + 1) * C + c) * a[c]!;
    }
    return q < t ? 0 : 1;
  }

  /** Denominator d's limb sums added into its BigInts per currency, and its limbs back to 0. */
  private carry(d: number, into: bigint[]): void {
    const L = this.limbs;
    const C = this.currencies.length;
    const limbSums = this.limbSums!;
    for (let c = 0; c < C; c++) {
      const at = (d * C + c) * L;
      let top = L - 1;
      while (top >= 0 && limbSums[at + top] === 0) top--;
      if (top < 0) continue;
      let v = BigInt(limbSums[at + top]!);
      for (let k = top - 1; k >= 0; k--) {
        v <<= LIMB_BITS;
        if (limbSums[at + k] !== 0) v += BigInt(limbSums[at + k]!);
      }
      into[c] = into[c]! + v;
    }
    limbSums.fill(0, d * C * L, (d + 1) * C * L);
  }

  /** fixedOf(v, denominator d), with d's factor (FIXED ÷ d, or 0n when d does not divide FIXED) found once per basis. */
  private fixed(v: bigint, d: number): bigint {
    const factor = (this.factors[d] ??= FIXED % this.dens[d]! === 0n ? FIXED / this.dens[d]! : 0n);
    return factor !== 0n ? v * factor : fixedOf(v, this.dens[d]!);
  }
}

/**
 * minAt's loop, on plain arrays (records[start, end)): each record's smaller side by the doubles,
 * its limbs added to its denominator's sums (`width` = C × L each), its denominator marked
 * touched; the records the doubles cannot tell apart are returned, to be compared exactly.
 */
function addSmallerSides(
  records: ArrayLike<number>,
  start: number,
  end: number,
  width: number,
  approx: Float64Array,
  values: Uint32Array,
  denOf: Int32Array,
  af: Float64Array,
  limbSums: Float64Array,
  touched: Uint8Array,
): number[] {
  const C = af.length;
  const close: number[] = [];
  for (let i = start; i < end; i++) {
    const r = records[i]!;
    let q = 0;
    let t = 0;
    for (let c = 0; c < C; c++) {
      q += approx[2 * r * C + c]! * af[c]!;
      t += approx[(2 * r + 1) * C + c]! * af[c]!;
    }
    const d = denOf[r]!;
    touched[d] = 1;
    if (!(Math.abs(q - t) > 1e-9 * Math.max(q, t))) {
      close.push(r);
      continue;
    }
    const from = (q < t ? 2 * r : 2 * r + 1) * width;
    const to = d * width;
    for (let k = 0; k < width; k++) limbSums[to + k] = limbSums[to + k]! + values[from + k]!;
  }
  return close;
}
