// Sets of numbers for a million rows without a million heap objects: NumberSet counts distinct
// non-negative safe integers (a bitmap for small ones, open addressing in a Float64Array for the
// rest); HashList tells whether any two of many 53-bit hashes are equal. Both stop at a size
// (`full`), and whoever uses them falls back to SQL.

const MIN_SLOTS = 1 << 12;
const MAX_LOAD = 0.7;

/** 53 bits of a string's hash (two 32-bit FNV-1a variants), for telling strings apart cheaply. */
export function hash53(value: string): number {
  let a = 0x811c9dc5;
  let b = 0x9747b28c;
  for (let i = 0; i < value.length; i++) {
    const c = value.charCodeAt(i);
    a = Math.imul(a ^ c, 0x01000193);
    b = Math.imul(b ^ c, 0x5bd1e995);
  }
  b ^= b >>> 15;
  return (a >>> 0) * 0x200000 + (b >>> 11);
}

/** 53-bit values appended as they come, sorted once at the end to find any repeat. */
export class HashList {
  private values = new Float64Array(MIN_SLOTS);
  private length = 0;
  private readonly max: number;
  full = false;

  constructor(max: number) {
    this.max = max;
  }

  add(value: number): void {
    if (this.full) return;
    if (this.length === this.values.length) {
      if (this.length * 2 > this.max) {
        this.full = true;
        this.values = new Float64Array(0);
        return;
      }
      const grown = new Float64Array(this.length * 2);
      grown.set(this.values);
      this.values = grown;
    }
    this.values[this.length++] = value;
  }

  /** Whether two values are equal (sorts the list: call once, at the end). */
  hasRepeat(): boolean {
    const sorted = this.values.subarray(0, this.length).sort();
    for (let i = 1; i < sorted.length; i++) if (sorted[i] === sorted[i - 1]) return true;
    return false;
  }
}

/** Values below this are kept in a bitmap (4 MiB): most amounts, in cents, are (up to $335,544.31). */
const BITMAP_VALUES = 1 << 25;

export class NumberSet {
  private small: Uint32Array | undefined;
  private slots: Float64Array;
  private mask: number;
  private readonly maxSlots: number;
  size = 0;
  private large = 0;
  /** The set outgrew `maxSlots` and no longer knows its members. */
  full = false;

  constructor(maxSlots: number) {
    this.maxSlots = maxSlots;
    this.slots = new Float64Array(Math.min(MIN_SLOTS, maxSlots));
    this.mask = this.slots.length - 1;
  }

  /** Adds `value` (0 ≤ value < 2^53); false when it was already there (or the set is full). */
  add(value: number): boolean {
    if (value < BITMAP_VALUES) {
      const small = (this.small ??= new Uint32Array(BITMAP_VALUES / 32));
      const bit = 1 << (value & 31);
      if ((small[value >>> 5]! & bit) !== 0) return false;
      small[value >>> 5]! |= bit;
      this.size++;
      return true;
    }
    if (this.full) return false;
    const stored = value + 1; // 0 marks an empty slot
    let i = this.slotOf(stored);
    for (;;) {
      const at = this.slots[i]!;
      if (at === 0) break;
      if (at === stored) return false;
      i = (i + 1) & this.mask;
    }
    this.slots[i] = stored;
    this.size++;
    if (++this.large > this.slots.length * MAX_LOAD) this.grow();
    return true;
  }

  private slotOf(stored: number): number {
    const low = stored | 0;
    const high = (stored / 4294967296) | 0;
    return (Math.imul(low ^ Math.imul(high, 0x85ebca6b), 0x9e3779b1) >>> 0) & this.mask;
  }

  private grow(): void {
    if (this.slots.length * 2 > this.maxSlots) {
      this.full = true;
      this.slots = new Float64Array(0);
      return;
    }
    const old = this.slots;
    this.slots = new Float64Array(old.length * 2);
    this.mask = this.slots.length - 1;
    for (const stored of old) {
      if (stored === 0) continue;
      let i = this.slotOf(stored);
      while (this.slots[i] !== 0) i = (i + 1) & this.mask;
      this.slots[i] = stored;
    }
  }
}
