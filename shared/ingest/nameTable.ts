// Distinct names (the tally's customers, its products), each numbered 0, 1, 2, … in order of first
// sight, looked up by their UTF-8 bytes as the tally's batches carry them (tallyBatch.ts): open
// addressing over 32-bit hashes, with the names' bytes kept end to end in pages of 1 MiB. No
// string is made for a lookup, and a lookup reads one slot, then the name's bytes only when the
// hashes agree. (A Map<string, number> read its bucket, its entry and the key string, wherever the
// heap had put it: about three cache misses a row on a file of tens of thousands of customers in
// any order.) The bytes are kept outside the V8 heap: `maxBytes` bounds them, and past it, or past
// `maxNames`, the table is full and lets everything go (whoever uses it gives the work to SQL).

import { freeNow, grown, Reservation } from '../platform/typedArrays.ts';

const EMPTY = 0;
/**
 * Bytes a page holds (1 MiB). Pages are never copied nor let go while the table lives (but the
 * first, while it grows up to a page): one array grown by copies left the freed copies (tens of
 * MiB at 10M rows) in the allocator, resident.
 */
const PAGE_BITS = 20;
const PAGE_BYTES = 1 << PAGE_BITS;
/** The first page's bytes at first (it grows up to a page): a small file's names take kilobytes. */
const FIRST_PAGE_BYTES = 4096;
const MIN_SLOTS = 1 << 10;
const MAX_LOAD = 0.6;

/** 32 bits of a name's bytes: FNV-1a, then murmur3's finaliser to spread the low bits. */
function hashOf(bytes: Uint8Array, start: number, length: number): number {
  let hash = 0x811c9dc5;
  for (let i = start, end = start + length; i < end; i++) hash = Math.imul(hash ^ bytes[i]!, 0x01000193);
  hash = Math.imul(hash ^ (hash >>> 16), 0x85ebca6b);
  hash = Math.imul(hash ^ (hash >>> 13), 0xc2b2ae35);
  return hash ^ (hash >>> 16);
}

export class NameTable {
  private readonly maxNames: number;
  private readonly maxBytes: number;
  /** Per slot: the name's hash, then its number + 1 (EMPTY: a free slot). */
  private slots = new Int32Array(2 * MIN_SLOTS);
  private slotMask = MIN_SLOTS - 1;
  /** Per number n: where its bytes start (page × PAGE_BYTES + offset), and how many (`maxNames` long, reserved). */
  private starts: Int32Array;
  private lengths: Int32Array;
  private pages: Uint8Array<ArrayBuffer>[] = [];
  /** Where the next name's bytes go. */
  private next = 0;
  /** Bytes held, for maxBytes. */
  private byteCount = 0;
  /** Room for a batch's hashes (numbersOf). */
  private scratch = new Int32Array(0);
  /** What numbersOf read of the candidates' bytes, kept so that the reads are not optimized away. */
  touched = 0;
  /** Distinct names held. */
  size = 0;
  /** A name could not be added: there are more than the limits allow. */
  full = false;

  /** `reservation`: where the per-name arrays come from (of NameTable.reserves(limits) bytes); plain arrays if none. */
  constructor(limits: { maxNames: number; maxBytes: number }, reservation?: Reservation) {
    this.maxNames = limits.maxNames;
    this.maxBytes = limits.maxBytes;
    this.starts = reservation?.int32(limits.maxNames) ?? new Int32Array(limits.maxNames);
    this.lengths = reservation?.int32(limits.maxNames) ?? new Int32Array(limits.maxNames);
  }

  /** The bytes a table of these limits takes from a Reservation. */
  static reserves(limits: { maxNames: number }): number {
    return Reservation.bytes(4 * limits.maxNames, 4 * limits.maxNames);
  }

  /** The number of the name in `bytes` [start, start + length), added if new; -1 once the table is full. */
  numberOf(bytes: Uint8Array, start: number, length: number): number {
    if (this.full) return -1;
    return this.numberOfHashed(bytes, start, length, hashOf(bytes, start, length));
  }

  /**
   * The numbers of many names at once, into `out`: name i's bytes start at `starts[i]`, and
   * `lengths[i * stride + lengthAt]` is their count (-1: no name, and -1 out). False once the
   * table is full. In passes over all the names, each light enough that the processor has many
   * rows' memory reads under way at once (a lookup's time is nearly all waiting for memory): the
   * hashes, then each name's first slot, then its bytes where the slot holds a name, then the
   * comparisons, and only names not found at their first slot take the whole way.
   */
  numbersOf(bytes: Uint8Array, starts: Int32Array, lengths: Float64Array, stride: number, lengthAt: number, count: number, out: Int32Array): boolean {
    if (this.full) return false;
    const hashes = (this.scratch = this.scratch.length >= count ? this.scratch : new Int32Array(count + (count >> 1)));
    for (let i = 0; i < count; i++) {
      const length = lengths[i * stride + lengthAt]!;
      hashes[i] = length < 0 ? 0 : hashOf(bytes, starts[i]!, length);
    }
    const slots = this.slots;
    const mask = this.slotMask;
    for (let i = 0; i < count; i++) out[i] = slots[2 * (hashes[i]! & mask) + 1]! - 1; // a candidate, or -1
    let touched = 0;
    for (let i = 0; i < count; i++) {
      const n = out[i]!;
      if (n >= 0) {
        const at = this.starts[n]!;
        touched ^= this.pages[at >>> PAGE_BITS]![at & (PAGE_BYTES - 1)]! | 0; // brings the candidate's bytes in
      }
    }
    this.touched = touched;
    for (let i = 0; i < count; i++) {
      const length = lengths[i * stride + lengthAt]!;
      if (length < 0) {
        out[i] = -1;
        continue;
      }
      const n = out[i]!;
      const hash = hashes[i]!;
      // The candidate is checked by its bytes, so a slot read before the slots grew (an earlier
      // name of the batch was added) is as good as any.
      if (n >= 0 && slots[2 * (hash & mask)] === hash && this.holds(n, bytes, starts[i]!, length)) continue;
      // Not at its first slot (or new): the whole way, which may add it.
      const found = this.numberOfHashed(bytes, starts[i]!, length, hash);
      if (found < 0) return false;
      out[i] = found;
    }
    return true;
  }

  private numberOfHashed(bytes: Uint8Array, start: number, length: number, hash: number): number {
    const slots = this.slots;
    const mask = this.slotMask;
    for (let slot = hash & mask; ; slot = (slot + 1) & mask) {
      const held = slots[2 * slot + 1]!;
      if (held === EMPTY) return this.add(bytes, start, length, hash, slot);
      if (slots[2 * slot] === hash && this.holds(held - 1, bytes, start, length)) return held - 1;
    }
  }

  /** Name number n, as a string. */
  nameOf(n: number): string {
    const at = this.starts[n]!;
    const page = this.pages[at >>> PAGE_BITS]!;
    const offset = page.byteOffset + (at & (PAGE_BYTES - 1));
    return Buffer.from(page.buffer, offset, this.lengths[n]!).toString('utf8');
  }

  /** Name number n's UTF-8 bytes (a view of the table's own: valid while the table lives, not to be changed). */
  bytesOf(n: number): Uint8Array {
    const at = this.starts[n]!;
    const offset = at & (PAGE_BYTES - 1);
    return this.pages[at >>> PAGE_BITS]!.subarray(offset, offset + this.lengths[n]!);
  }

  /** Lets the arrays go now (freeNow; reserved ones go with their reservation); the table is full from now on. */
  dispose(): void {
    freeNow(this.slots, this.starts, this.lengths, this.scratch, ...this.pages);
    this.clear();
  }

  /** Lets the arrays go; the table is full from now on. */
  clear(): void {
    this.slots = new Int32Array(0);
    this.starts = new Int32Array(0);
    this.lengths = new Int32Array(0);
    this.pages = [];
    this.byteCount = 0;
    this.full = true;
  }

  private holds(n: number, bytes: Uint8Array, start: number, length: number): boolean {
    if (this.lengths[n] !== length) return false;
    const at = this.starts[n]!;
    const held = this.pages[at >>> PAGE_BITS]!;
    const offset = at & (PAGE_BYTES - 1);
    for (let i = 0; i < length; i++) if (held[offset + i] !== bytes[start + i]) return false;
    return true;
  }

  private add(bytes: Uint8Array, start: number, length: number, hash: number, slot: number): number {
    const n = this.size;
    if (n >= this.maxNames || this.byteCount + length > this.maxBytes) {
      this.clear();
      return -1;
    }
    this.byteCount += length;
    // A name does not straddle two pages: one that does not fit starts the next (longer than a
    // page, it gets a page of its own size). The first page starts small and grows.
    let at = this.next;
    let page = this.pages[at >>> PAGE_BITS];
    const end = (at & (PAGE_BYTES - 1)) + length;
    if (page === undefined || end > PAGE_BYTES) {
      at = this.pages.length * PAGE_BYTES;
      page = new Uint8Array(Math.max(this.pages.length === 0 ? FIRST_PAGE_BYTES : PAGE_BYTES, length));
      this.pages.push(page);
    } else if (end > page.length) {
      // The first page, the only one shorter than PAGE_BYTES, grows (a copy of its names' bytes).
      const old = page;
      page = this.pages[0] = grown(page, end, PAGE_BYTES);
      freeNow(old);
    }
    page.set(bytes.subarray(start, start + length), at & (PAGE_BYTES - 1));
    this.next = length >= PAGE_BYTES ? this.pages.length * PAGE_BYTES : at + length;
    this.starts[n] = at;
    this.lengths[n] = length;
    this.slots[2 * slot] = hash;
    this.slots[2 * slot + 1] = n + 1;
    this.size = n + 1;
    if (this.size > (this.slotMask + 1) * MAX_LOAD) this.rehash();
    return n;
  }

  /** Twice the slots, each name placed again by the hash it holds. */
  private rehash(): void {
    const old = this.slots;
    const count = 2 * (this.slotMask + 1);
    const mask = count - 1;
    const slots = new Int32Array(2 * count);
    for (let i = 0; i < old.length; i += 2) {
      if (old[i + 1] === EMPTY) continue;
      let slot = old[i]! & mask;
      while (slots[2 * slot + 1] !== EMPTY) slot = (slot + 1) & mask;
      slots[2 * slot] = old[i]!;
      slots[2 * slot + 1] = old[i + 1]!;
    }
    this.slots = slots;
    this.slotMask = mask;
  }
}
