// Exact arithmetic for the figures (../shared/spec/contract.md, "Metrics and catalog": "every
// figure keeps full precision until it is shown"). A monthly value is a rational number of cents
// (amount ÷ 12, amount × 487 ÷ (16 × days)): no decimal fixed point holds 1/12 or 1/3, and a sum of
// them rounded at the last digit can land on the wrong side of half a cent. So values are kept as
// fractions, and sums of them as one numerator over a common denominator Q (which every usual term
// length divides) plus, for the other denominators, a numerator per denominator. Rounding happens
// once, when a figure is shown, half away from zero.

/**
 * The common denominator: 2^5 · 3^2 · 5 · 7 · 11 · 13. A term of m whole months puts cents ÷ m over
 * it exactly for m in 1–16, 18, 20, 21, 22, 24, 26, 28, 30, 32, 33, 35, 36, 39, 40, 42, 44, 45, 48,
 * 52, 55, 56, 60, 63, 65, 66, 70, 72, 78, 80, 84, 88, 90, 96, 99, 104, 105, 110, 112, 117, 120, …
 */
export const Q = 1_441_440n;

/** A fraction n ÷ d (d > 0), not necessarily reduced. */
export type Fraction = { n: bigint; d: bigint };

/**
 * One value added to a sum: `num ÷ den` cents, with den = Q when Q is a multiple of its own. `fast`
 * is the numerator as a Number when den = Q and it is within 2^52 (most terms), else NaN; `num` is
 * the numerator when fast is NaN.
 */
export type Term = { num: bigint; den: bigint; fast: number };

const QN = Number(Q);

/** cents ÷ den's numerator over Q as a Number (a term's `fast`), when den divides Q and it stays within 2^52; else NaN. */
export function fastOverQ(cents: number, den: number): number {
  if (QN % den !== 0) return NaN;
  const fast = cents * (QN / den);
  return fast <= CARRY ? fast : NaN;
}

/** Past this, a Number sum is carried into its BigInt part (two such still add exactly). */
const CARRY = 2 ** 52;

function gcd(a: bigint, b: bigint): bigint {
  if (a < 0n) a = -a;
  if (b < 0n) b = -b;
  while (b !== 0n) [a, b] = [b, a % b];
  return a;
}

export const lcm = (a: bigint, b: bigint): bigint => (a / gcd(a, b)) * b;

const overQ = (num: bigint): Term => (num <= BigInt(CARRY) && num >= -BigInt(CARRY) ? { num: 0n, den: Q, fast: Number(num) } : { num, den: Q, fast: NaN });

/**
 * num ÷ den as a term: over Q when den divides it (reduced first), else over den as it is: the
 * denominators of day counts (16 × days) stay few, where reduced ones would vary with the amounts.
 */
export function term(num: bigint, den: bigint): Term {
  if (Q % den === 0n) return overQ(num * (Q / den));
  const g = gcd(num, den);
  const d = den / g;
  if (Q % d === 0n) return overQ((num / g) * (Q / d));
  return { num, den, fast: NaN };
}

/**
 * A sum of terms, exact: a numerator over Q, and one per other denominator. Each numerator is a
 * Number while it stays within 2^52, and carries into a BigInt past that, so that most sums never
 * touch a BigInt.
 */
export class ExactSum {
  n = 0;
  big = 0n;
  /** Other denominators (below 2^53): numerator's Number part, and BigInt part when it carried. */
  rest: Map<number, number> | undefined;
  restBig: Map<number, bigint> | undefined;

  static of(t: Term): ExactSum {
    return new ExactSum().addTerm(t, 1);
  }

  /** Adds x ÷ Q (x a safe integer within 2^53). */
  addNumber(x: number): void {
    const n = this.n + x;
    if (n > CARRY || n < -CARRY) {
      this.big += BigInt(n);
      this.n = 0;
    } else this.n = n;
  }

  addTerm(t: Term, sign: 1 | -1): this {
    if (t.fast === t.fast) this.addNumber(sign * t.fast);
    else if (t.den === Q) this.big += sign === 1 ? t.num : -t.num;
    else if (t.den > BigInt(CARRY)) throw new RangeError('a denominator too large');
    else if (t.num <= BigInt(CARRY) && t.num >= -BigInt(CARRY)) this.addOver(Number(t.den), sign * Number(t.num));
    else this.addRestBig(Number(t.den), sign === 1 ? t.num : -t.num);
    return this;
  }

  /** Adds x ÷ den: den a safe integer other than Q, |x| ≤ 2^52 (a term's parts as numbers: no BigInt made on the way). */
  addOver(den: number, x: number): void {
    const rest = (this.rest ??= new Map());
    const n = (rest.get(den) ?? 0) + x;
    if (n > CARRY || n < -CARRY) {
      rest.set(den, 0);
      this.addRestBig(den, BigInt(n));
    } else rest.set(den, n);
  }

  private addRestBig(den: number, x: bigint): void {
    const big = (this.restBig ??= new Map());
    big.set(den, (big.get(den) ?? 0n) + x);
  }

  add(s: ExactSum, sign: 1 | -1 = 1): this {
    this.addNumber(sign * s.n);
    if (s.big !== 0n) this.big += sign === 1 ? s.big : -s.big;
    if (s.rest) for (const [den, x] of s.rest) if (x !== 0) this.addOver(den, sign * x);
    if (s.restBig) for (const [den, x] of s.restBig) this.addRestBig(den, sign === 1 ? x : -x);
    return this;
  }

  /** A sum as it came across threads (structured clone keeps its fields, not its class). */
  static from(plain: ExactSum): ExactSum {
    const s = new ExactSum();
    s.n = plain.n;
    s.big = plain.big;
    if (plain.rest) s.rest = new Map(plain.rest);
    if (plain.restBig) s.restBig = new Map(plain.restBig);
    return s;
  }

  clone(): ExactSum {
    return ExactSum.from(this);
  }

  /** Whether every part is over Q and a Number: then n is the numerator. */
  private get simple(): boolean {
    return this.rest === undefined && this.restBig === undefined && this.big === 0n;
  }

  /** The exact value as one fraction (over `common`'s denominator when given: it must hold every one of the sum's). */
  fraction(common?: CommonDenominator): Fraction {
    const q = this.big + BigInt(this.n);
    if (this.rest === undefined && this.restBig === undefined) return common ? { n: q * common.over(Q), d: common.d } : { n: q, d: Q };
    const c = common ?? CommonDenominator.of([this]);
    let n = q * c.over(Q);
    for (const [den, x] of this.rest ?? []) if (x !== 0) n += BigInt(x) * c.over(BigInt(den));
    for (const [den, x] of this.restBig ?? []) n += x * c.over(BigInt(den));
    return { n, d: c.d };
  }

  /**
   * The sum shown as money (as money(this.fraction()) shows it: rounded half away from zero to
   * whole cents), from doubles where they decide the rounding, else exactly. Each part as a double
   * is within 2 × 2^-53 of itself relative (a BigInt's part is rounded twice), and their sum within
   * about (k + 1) × 2^-53 of Σ|part| for k parts; where the double lies further than four times that
   * from a half cent, the exact sum is on
   * the same side of it. Past 2^50 cents, or nearer, the exact way: a fraction over the least
   * common denominator of the sum's own parts (the figures of a whole currency, over one of all of
   * them, run to hundreds of digits).
   */
  money(): string {
    let value = this.n / QN;
    let size = Math.abs(value);
    let parts = 1;
    if (this.big !== 0n) {
      const part = Number(this.big) / QN;
      value += part;
      size += Math.abs(part);
      parts++;
    }
    if (this.rest) {
      for (const [den, x] of this.rest) {
        if (x === 0) continue;
        const part = x / den;
        value += part;
        size += Math.abs(part);
        parts++;
      }
    }
    if (this.restBig) {
      for (const [den, x] of this.restBig) {
        const part = Number(x) / den;
        value += part;
        size += Math.abs(part);
        parts++;
      }
    }
    const bound = 4 * (parts + 1) * 2 ** -53 * size + Number.MIN_VALUE;
    const magnitude = Math.abs(value);
    if (size < 2 ** 50) {
      const whole = Math.floor(magnitude);
      const fraction = magnitude - whole; // exact (Sterbenz)
      if (Math.abs(fraction - 0.5) > bound) {
        const cents = fraction > 0.5 ? whole + 1 : whole;
        return formatScaled(BigInt(value < 0 ? -cents : cents), 2);
      }
    }
    return money(this.fraction());
  }

  /** The denominators of its parts besides Q. */
  denominators(): number[] {
    return [...(this.rest?.keys() ?? []), ...(this.restBig?.keys() ?? [])];
  }

  sign(): -1 | 0 | 1 {
    if (this.simple) return this.n > 0 ? 1 : this.n < 0 ? -1 : 0;
    const { n } = this.fraction();
    return n > 0n ? 1 : n < 0n ? -1 : 0;
  }

  /** a − b's sign. */
  static compare(a: ExactSum, b: ExactSum): -1 | 0 | 1 {
    if (a.simple && b.simple) return a.n > b.n ? 1 : a.n < b.n ? -1 : 0;
    return a.clone().add(b, -1).sign();
  }
}

/** A denominator that all of some sums' denominators divide, with the factor for each. */
export class CommonDenominator {
  readonly d: bigint;
  private readonly factors = new Map<bigint, bigint>();

  private constructor(d: bigint) {
    this.d = d;
  }

  /** The least common denominator of these sums (and Q). */
  static of(sums: Iterable<ExactSum>): CommonDenominator {
    const dens = new Set<number>();
    for (const s of sums) for (const den of s.denominators()) dens.add(den);
    let d = Q;
    for (const den of dens) d = lcm(d, BigInt(den));
    return new CommonDenominator(d);
  }

  /** d ÷ den. */
  over(den: bigint): bigint {
    let f = this.factors.get(den);
    if (f === undefined) this.factors.set(den, (f = this.d / den));
    return f;
  }
}

/**
 * The fixed point of the basis for a reporting currency (fxBasis.ts): its sums are integers of
 * 1/FIXED of a cent. FIXED = Q × 10^45, so a value over Q (every term of a whole number of months
 * that divides Q: see Q) or over any other divisor of FIXED is held exactly; any other is rounded
 * half away from zero, within 1/(2 × FIXED) of a cent (under 3.5 × 10^-52). Converted, a sum of up
 * to 10^12 such values is within 7 × 10^-40 of a cent times the rates' ratio (reporting.ts; a ratio
 * of two rates the service accepts is below 10^30), and roundWithin rounds every exact tie as the
 * exact value: a shown figure differs from the exact rounding only when the exact value lies that
 * close to a half cent without being on it (docs/metrics.md, "Precision"). Its one
 * common denominator keeps the basis small: the exact one, the lcm of every day count's 16 × days,
 * runs to some 1,600 digits on a realistic 10M-row file.
 */
export const FIXED = Q * 10n ** 45n;

const fixedFactors = new Map<bigint, bigint>();

/** n ÷ d cents as an integer of 1/FIXED of a cent (d > 0): exact when d divides FIXED, else rounded half away from zero. */
export function fixedOf(n: bigint, d: bigint): bigint {
  if (d === FIXED) return n;
  let factor = fixedFactors.get(d);
  if (factor === undefined) {
    factor = FIXED % d === 0n ? FIXED / d : 0n;
    if (d <= 1_000_000n) fixedFactors.set(d, factor); // day counts and their kin: few, and met often
  }
  if (factor !== 0n) return n * factor;
  return roundHalfAway({ n: n * FIXED, d }, 0);
}

/** n ÷ d × 10^decimals rounded half away from zero, as an integer (d > 0). */
export function roundHalfAway(f: Fraction, decimals: number): bigint {
  const scale = 10n ** BigInt(decimals);
  const n = f.n * scale;
  const neg = n < 0n;
  const abs = neg ? -n : n;
  const q = (2n * abs + f.d) / (2n * f.d); // floor(abs/d + 1/2)
  return neg ? -q : q;
}

/** An integer of 10^-decimals units as a decimal string ("-50.01"). */
export function formatScaled(value: bigint, decimals: number): string {
  const neg = value < 0n;
  const digits = (neg ? -value : value).toString().padStart(decimals + 1, '0');
  return `${neg ? '-' : ''}${digits.slice(0, -decimals)}.${digits.slice(-decimals)}`;
}

/** A value in cents, shown as money: two decimals of the currency's unit. */
export const money = (cents: Fraction): string => formatScaled(roundHalfAway({ n: cents.n, d: cents.d * 100n }, 2), 2);


/** A ratio a ÷ b shown with four decimals; null when b is 0. */
export function ratio(a: Fraction, b: Fraction): string | null {
  if (b.n === 0n) return null;
  // (a.n / a.d) ÷ (b.n / b.d) = (a.n · b.d) ÷ (a.d · b.n), with a positive denominator.
  let n = a.n * b.d;
  let d = a.d * b.n;
  if (d < 0n) [n, d] = [-n, -d];
  return formatScaled(roundHalfAway({ n, d }, 4), 4);
}

/**
 * A value known within a bound: the exact value lies within e ÷ d of n ÷ d (d > 0, e ≥ 0). The
 * figures in a reporting currency are such (see FIXED).
 */
export type Approximate = { n: bigint; d: bigint; e: bigint };

/**
 * An approximate value rounded as its exact one is: where its interval holds a rounding boundary
 * (half a unit of the last decimal), the exact value is taken to be on it and is rounded half away
 * from zero. Exact at every tie; wrong only for an exact value within the bound of a boundary and
 * not on it.
 */
export function roundWithin(x: Approximate, decimals: number): bigint {
  const lo = roundHalfAway({ n: x.n - x.e, d: x.d }, decimals);
  const hi = roundHalfAway({ n: x.n + x.e, d: x.d }, decimals);
  return lo === hi || x.n >= 0n ? hi : lo;
}

/** An approximate value in cents, shown as money (see money). */
export const moneyWithin = (cents: Approximate): string => formatScaled(roundWithin({ n: cents.n, d: cents.d * 100n, e: cents.e }, 2), 2);

/** The ratio a ÷ b of two approximate values ≥ 0 with four decimals (see ratio); null when b is 0, which its caller tells. */
export function ratioWithin(a: Approximate, b: Approximate): string | null {
  if (b.n - b.e <= 0n) return null;
  // The ratio lies between (a − ea) ÷ (b + eb) and (a + ea) ÷ (b − eb): that interval as one Approximate over a common denominator.
  const lo = { n: (a.n - a.e) * b.d, d: a.d * (b.n + b.e) };
  const hi = { n: (a.n + a.e) * b.d, d: a.d * (b.n - b.e) };
  const d = lo.d * hi.d;
  const [ln, hn] = [lo.n * hi.d, hi.n * lo.d];
  return formatScaled(roundWithin({ n: (ln + hn) / 2n, d, e: (hn - ln + 1n) / 2n + 1n }, 4), 4);
}

