// Sets of numbers for a million rows without a million heap objects: NumberSet counts distinct
// non-negative safe integers (a bitmap for small ones, open addressing in a Float64Array for the
// rest; it stops at a size, `full`, and whoever uses it falls back to SQL); HashList tells whether
// any two of many 53-bit hashes are equal, spilling sorted runs to disk past a size.
import { openScratchFile } from '../platform/scratchFiles.ts';
import { closeSync, readSync, writeSync } from 'node:fs';
import { freeNow, Reservation } from '../platform/typedArrays.ts';

const MIN_SLOTS = 1 << 12;
const MAX_LOAD = 0.7;

/** 53 bits of a byte string's hash (two 32-bit FNV-1a variants), for telling values apart cheaply: `bytes[start, end)`. */
export function hash53(bytes: Uint8Array, start: number, end: number): number {
  let a = 0x811c9dc5;
  let b = 0x9747b28c;
  for (let i = start; i < end; i++) {
    const c = bytes[i]!;
    a = Math.imul(a ^ c, 0x01000193);
    b = Math.imul(b ^ c, 0x5bd1e995);
  }
  b ^= b >>> 15;
  return (a >>> 0) * 0x200000 + (b >>> 11);
}

/** Buckets by the values' top bits, for sortHashes: 2^11 of about 500 values each at a million values. */
const BUCKET_BITS = 11;
const BUCKET_OF = 2 ** (53 - BUCKET_BITS);
/** Fewer values than this are sorted at once. */
const SORT_AT_ONCE = 1 << 16;

/**
 * Sorts 53-bit values (0 ≤ v < 2^53) in place: first into buckets by their top bits (hashes spread
 * evenly over them), moved in place, then each bucket sorted on its own, small enough to sort in
 * the cache. A million hashes: 75 ms, where sorting them at once took 105 (the end of every build
 * waits for it).
 */
export function sortHashes(values: Float64Array): Float64Array {
  const n = values.length;
  if (n < SORT_AT_ONCE) return values.sort();
  const buckets = 1 << BUCKET_BITS;
  const next = new Int32Array(buckets);
  const end = new Int32Array(buckets);
  for (let i = 0; i < n; i++) end[Math.floor(values[i]! / BUCKET_OF)]!++;
  for (let b = 0, at = 0; b < buckets; b++) {
    next[b] = at;
    at += end[b]!;
    end[b] = at;
  }
  // Each value is carried to the next free place of its bucket, displacing the one there, until
  // the value that belongs in the place being filled comes back.
  for (let b = 0; b < buckets; b++) {
    while (next[b]! < end[b]!) {
      let value = values[next[b]!]!;
      let home = Math.floor(value / BUCKET_OF);
      while (home !== b) {
        const at = next[home]!++;
        const displaced = values[at]!;
        values[at] = value;
        value = displaced;
        home = Math.floor(value / BUCKET_OF);
      }
      values[next[b]!++] = value;
    }
  }
  for (let b = 0, start = 0; b < buckets; start = end[b++]!) values.subarray(start, end[b]!).sort();
  return values;
}

/**
 * 53-bit values appended as they come, sorted at the end to find any repeat. Past `inMemory`
 * values, each full batch is sorted and written as a run to a temporary file (unlinked at once:
 * it goes when the list is closed, or with the process), and the runs are merged at the end; so
 * ten million values take 8 MiB of memory and 80 MB of disk. If the file cannot be written, the
 * list is `full` and whoever uses it asks SQL.
 */
export class HashList {
  private values: Float64Array;
  private length = 0;
  private readonly inMemory: number;
  private file: number | undefined;
  /** Where each spilled run starts in the file, and its length (in values). */
  private readonly runs: { at: number; length: number }[] = [];
  private fileBytes = 0;
  full = false;

  /** `reservation`: where the values' array comes from (of HashList.reserves bytes), a plain one if none. */
  constructor(inMemory: number, reservation?: Reservation) {
    this.inMemory = HashList.held(inMemory);
    this.values = reservation?.float64(this.inMemory) ?? new Float64Array(this.inMemory);
  }

  /** The bytes a list holding `inMemory` values takes from a Reservation. */
  static reserves(inMemory: number): number {
    return Reservation.bytes(8 * HashList.held(inMemory));
  }

  private static held(inMemory: number): number {
    return Math.max(inMemory, 2);
  }

  add(value: number): void {
    if (this.full) return;
    if (this.length === this.inMemory && !this.spill()) return;
    this.values[this.length++] = value;
  }

  /** Whether two values are equal (sorts and merges: call once, at the end). */
  hasRepeat(): boolean {
    const sorted = sortHashes(this.values.subarray(0, this.length));
    for (let i = 1; i < sorted.length; i++) if (sorted[i] === sorted[i - 1]) return true;
    if (this.runs.length === 0) return false;
    return this.mergeHasRepeat(sorted);
  }

  /** Lets the temporary file go. */
  close(): void {
    if (this.file !== undefined) closeSync(this.file);
    this.file = undefined;
  }

  /** Lets the values go now (freeNow; reserved ones go with their reservation), and the file. */
  dispose(): void {
    this.close();
    freeNow(this.values);
  }

  /** Writes the values held as a sorted run; false (and full) when the file cannot be written. */
  private spill(): boolean {
    try {
      if (this.file === undefined) {
        this.file = openScratchFile('hashes');
      }
      const sorted = sortHashes(this.values.subarray(0, this.length));
      writeSync(this.file, new Uint8Array(sorted.buffer, sorted.byteOffset, sorted.byteLength), 0, sorted.byteLength, this.fileBytes);
      this.runs.push({ at: this.fileBytes, length: this.length });
      this.fileBytes += sorted.byteLength;
      this.length = 0;
      return true;
    } catch {
      this.full = true;
      this.values = new Float64Array(0);
      this.length = 0;
      this.close();
      return false;
    }
  }

  /** Merges the spilled runs and the values held (each sorted), looking for two equal neighbours. */
  private mergeHasRepeat(held: Float64Array): boolean {
    const file = this.file!;
    const BLOCK = 8192;
    const sources = [
      ...this.runs.map((run) => {
        const block = new Float64Array(BLOCK);
        let read = 0; // values of the run read into blocks so far
        let i = 0;
        let n = 0;
        return {
          next(): number | undefined {
            if (i === n) {
              if (read === run.length) return undefined;
              n = Math.min(BLOCK, run.length - read);
              readSync(file, new Uint8Array(block.buffer, 0, n * 8), 0, n * 8, run.at + read * 8);
              read += n;
              i = 0;
            }
            return block[i++];
          },
        };
      }),
      (() => {
        let i = 0;
        return { next: () => (i < held.length ? held[i++] : undefined) };
      })(),
    ];
    // A binary heap of the sources by their current value.
    const heads: number[] = [];
    const heap: number[] = [];
    const less = (a: number, b: number) => heads[heap[a]!]! < heads[heap[b]!]!;
    const down = (k: number) => {
      for (;;) {
        const l = 2 * k + 1;
        const r = l + 1;
        let m = k;
        if (l < heap.length && less(l, m)) m = l;
        if (r < heap.length && less(r, m)) m = r;
        if (m === k) return;
        [heap[k], heap[m]] = [heap[m]!, heap[k]!];
        k = m;
      }
    };
    sources.forEach((source, s) => {
      const head = source.next();
      if (head === undefined) return;
      heads[s] = head;
      heap.push(s);
    });
    for (let k = (heap.length >> 1) - 1; k >= 0; k--) down(k);
    let previous = NaN;
    while (heap.length > 0) {
      const s = heap[0]!;
      const value = heads[s]!;
      if (value === previous) return true;
      previous = value;
      const next = sources[s]!.next();
      if (next === undefined) {
        heap[0] = heap[heap.length - 1]!;
        heap.pop();
      } else heads[s] = next;
      down(0);
    }
    return false;
  }
}

export class NumberSet {
  /** Values below `bitmapValues` are bits here; the rest take slots. */
  private readonly bitmap: Int32Array;
  private readonly bitmapValues: number;
  private slots: Float64Array;
  private mask: number;
  private readonly maxSlots: number;
  size = 0;
  private large = 0;
  /** The set outgrew `maxSlots` and no longer knows its members. */
  full = false;

  /**
   * `maxSlots`: a power of two. `bitmap`: values below `bitmap.values` are kept as bits, in an
   * array from `bitmap.reservation` (of NumberSet.reserves(values) bytes; its pages cost only once
   * written). Without one every value takes a slot: for a set that can hold only a few.
   */
  constructor(maxSlots: number, bitmap?: { values: number; reservation: Reservation }) {
    this.maxSlots = maxSlots;
    this.slots = new Float64Array(Math.min(MIN_SLOTS, maxSlots));
    this.mask = this.slots.length - 1;
    this.bitmapValues = bitmap?.values ?? 0;
    this.bitmap = bitmap ? bitmap.reservation.int32(Math.ceil(bitmap.values / 32)) : new Int32Array(0);
  }

  /** The bytes a bitmap of `values` bits takes from a Reservation. */
  static reserves(values: number): number {
    return Reservation.bytes(4 * Math.ceil(values / 32));
  }

  /**
   * Reads the bitmap words of `count` values (`values[i * stride + at]`; NaN and large ones are
   * skipped) in a pass of their own, so that the processor has many of these reads under way at
   * once and add() then finds them in the cache.
   */
  touch(values: Float64Array, stride: number, at: number, count: number): void {
    const { bitmap, bitmapValues } = this;
    let touched = 0;
    for (let i = 0; i < count; i++) {
      const value = values[i * stride + at]!;
      if (value >= 0 && value < bitmapValues) touched ^= bitmap[value >>> 5]!;
    }
    this.touched = touched;
  }

  /** What touch() read, kept so that the reads are not optimized away. */
  touched = 0;

  /** Adds `value` (0 ≤ value < 2^53); false when it was already there (or the set is full). */
  add(value: number): boolean {
    if (value < this.bitmapValues) {
      const bitmap = this.bitmap;
      const bit = 1 << (value & 31);
      if ((bitmap[value >>> 5]! & bit) !== 0) return false;
      bitmap[value >>> 5]! |= bit;
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

  /** Lets the slots go now (freeNow). */
  dispose(): void {
    freeNow(this.slots); // the bitmap goes with its reservation
    this.full = true;
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
