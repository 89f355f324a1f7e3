// Integers of any size packed end to end into bytes, and read back in the same order: for figures
// kept as binary (a version's basis for conversion, fxBasis.ts), where JSON's decimal strings were
// several times the size and their parse most of a read. A number is a varint of its zigzag form
// (safe integers only); a BigInt within ±2^50 is one too, doubled, and a larger one is a varint
// header (odd) of its sign and byte count, then its magnitude's bytes, big-endian.

const TWO_50 = 2n ** 50n;
const MAX_SAFE = BigInt(Number.MAX_SAFE_INTEGER);
const LOW_49 = (1n << 49n) - 1n;
const LIMB = 2 ** 32;
/** A 32-bit limb's place. */
const LIMB_PLACE = Array.from({ length: 64 }, (_, k) => 2 ** (32 * k));

/** A signed number as a non-negative one (0, -1, 1, -2, … as 0, 1, 2, 3, …), and back. */
const zigzag = (v: number): number => (v < 0 ? -2 * v - 1 : 2 * v);
const unzigzag = (z: number): number => (z % 2 === 0 ? z / 2 : -(z + 1) / 2);

export class PackWriter {
  private bytes = new Uint8Array(1 << 16);
  private at = 0;

  private room(n: number): void {
    if (this.at + n <= this.bytes.length) return;
    const grown = new Uint8Array(Math.max(this.bytes.length * 2, this.at + n));
    grown.set(this.bytes.subarray(0, this.at));
    this.bytes = grown;
  }

  byte(b: number): void {
    this.room(1);
    this.bytes[this.at++] = b;
  }

  /** A non-negative integer up to 2^53, 7 bits a byte, least significant first (LEB128). */
  varint(v: number): void {
    this.room(8);
    // Divisions by 2^7 and floors are exact in doubles, and far cheaper than a remainder of one.
    while (v >= 0x80) {
      const next = Math.floor(v / 0x80);
      this.bytes[this.at++] = (v - next * 0x80) | 0x80;
      v = next;
    }
    this.bytes[this.at++] = v;
  }

  /** A non-negative BigInt as varint() writes a number: 49 bits at a time from the BigInt, each group's bytes from a Number. */
  unsigned(v: bigint): void {
    let b = v;
    while (b > MAX_SAFE) {
      this.room(7);
      let low = Number(b & LOW_49);
      for (let i = 0; i < 7; i++) {
        this.bytes[this.at++] = (low & 0x7f) | 0x80;
        low = Math.floor(low / 0x80);
      }
      b >>= 49n;
    }
    this.varint(Number(b));
  }

  /** Empties it, to write again into the same buffer. */
  reset(): void {
    this.at = 0;
  }

  /** The bytes written so far, not copied: valid until the next write. */
  view(): Uint8Array {
    return this.bytes.subarray(0, this.at);
  }

  /** A safe integer (a count, a month, a customer count). */
  int(v: number): void {
    if (!Number.isSafeInteger(v) || Math.abs(v) >= 2 ** 52) throw new RangeError(`not a packable integer: ${v}`);
    this.varint(zigzag(v));
  }

  ints(list: readonly number[]): void {
    this.int(list.length);
    for (const v of list) this.int(v);
  }

  big(v: bigint): void {
    if (v > -TWO_50 && v < TWO_50) {
      const n = Number(v);
      this.varint(2 * zigzag(n));
      return;
    }
    const negative = v < 0n;
    let hex = (negative ? -v : v).toString(16);
    if (hex.length % 2 === 1) hex = `0${hex}`;
    const length = hex.length / 2;
    this.varint(4 * length + (negative ? 2 : 0) + 1);
    this.room(length);
    this.at += Buffer.from(this.bytes.buffer, this.bytes.byteOffset + this.at, length).write(hex, 'hex');
  }

  bigs(list: readonly bigint[]): void {
    this.int(list.length);
    for (const v of list) this.big(v);
  }

  string(s: string): void {
    const encoded = Buffer.from(s, 'utf8');
    this.int(encoded.length);
    this.room(encoded.length);
    this.bytes.set(encoded, this.at);
    this.at += encoded.length;
  }

  done(): Buffer {
    return Buffer.from(this.bytes.buffer, this.bytes.byteOffset, this.at);
  }
}

export class PackReader {
  private readonly bytes: Buffer;
  private at = 0;

  constructor(bytes: Buffer) {
    this.bytes = bytes;
  }

  byte(): number {
    if (this.at >= this.bytes.length) throw new RangeError('packed figures end early');
    return this.bytes[this.at++]!;
  }

  private varint(): number {
    let v = 0;
    let scale = 1;
    for (;;) {
      const b = this.byte();
      v += (b & 0x7f) * scale;
      if (b < 0x80) return v;
      scale *= 0x80;
    }
  }

  int(): number {
    return unzigzag(this.varint());
  }

  ints(): number[] {
    const out = new Array<number>(this.int());
    for (let i = 0; i < out.length; i++) out[i] = this.int();
    return out;
  }

  big(): bigint {
    const head = this.varint();
    if (head % 2 === 0) return BigInt(unzigzag(head / 2));
    const length = Math.floor(head / 4);
    if (this.at + length > this.bytes.length) throw new RangeError('packed figures end early');
    const magnitude = BigInt(`0x${this.bytes.toString('hex', this.at, this.at + length)}`);
    this.at += length;
    return head % 4 === 3 ? -magnitude : magnitude;
  }

  /**
   * `n` non-negative big()s, value i as `width` 32-bit limbs into `limbs` from i × width (least
   * significant first; `limbs` all 0 there) and as a double into `approx[i]` (within a few units in
   * its 15th digit), with no BigInt made; a RangeError if one is negative or wider.
   */
  magnitudesInto(n: number, width: number, limbs: Uint32Array, approx: Float64Array): void {
    if (width > LIMB_PLACE.length) throw new RangeError('magnitudes too wide');
    const bytes = this.bytes;
    for (let i = 0; i < n; i++) {
      // The head's low bits are its first byte's: bit 0 tells a small value (0) from a long one, bit 1 the sign.
      const tag = bytes[this.at]! & 3;
      const head = this.varint();
      const at = this.at;
      const base = i * width;
      if ((tag & 1) === 0) {
        const v = (head - tag) / 4;
        if (tag !== 0 || (width < 2 && v >= LIMB)) throw new RangeError('a magnitude out of range');
        const high = Math.floor(v / LIMB);
        limbs[base] = v - high * LIMB;
        if (width > 1) limbs[base + 1] = high;
        approx[i] = v;
        continue;
      }
      const length = (head - tag) / 4;
      if (tag === 3 || length > 4 * width || at + length > bytes.length) throw new RangeError('a magnitude out of range');
      // Big-endian bytes: the least significant limb is the last four, and so on; the top one may be short.
      let x = 0;
      let end = at + length;
      for (let k = 0; end > at; k++) {
        const from = Math.max(at, end - 4);
        let limb = 0;
        for (let j = from; j < end; j++) limb = limb * 256 + bytes[j]!;
        limbs[base + k] = limb;
        x += limb * LIMB_PLACE[k]!;
        end = from;
      }
      this.at += length;
      approx[i] = x;
    }
  }

  bigs(): bigint[] {
    const out = new Array<bigint>(this.int());
    for (let i = 0; i < out.length; i++) out[i] = this.big();
    return out;
  }

  string(): string {
    const length = this.int();
    if (this.at + length > this.bytes.length) throw new RangeError('packed figures end early');
    const s = this.bytes.toString('utf8', this.at, this.at + length);
    this.at += length;
    return s;
  }

  get ended(): boolean {
    return this.at === this.bytes.length;
  }
}
