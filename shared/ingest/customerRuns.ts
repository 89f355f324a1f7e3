// Each customer's contributing months in each currency, as disjoint runs of months (overlapping
// and adjacent contracts merged, as range_agg does), kept in typed arrays rather than objects: a
// million rows of tens of thousands of customers cost a few MiB and no garbage, and adding a
// contract touches a few neighbouring integers. Per customer, a list of (currency, runs) entries;
// per entry, its runs as a list sorted by start month. Freed run nodes are reused.
//
// Entries and runs are items of three integers, numbered, in pages of 2^16 items (768 KiB) that
// are never copied nor let go while the runs live: at 10M rows they take tens of MiB, and arrays
// grown by copies left their freed copies resident in the allocator (a worker 65 MiB larger).
// Only the first page grows, by doubling from 12 KiB, for the many small files.

import { freeNow, Reservation } from './typedArrays.ts';

const NONE = -1;
// An entry: the customer's next entry, its currency, its first run.
// A run: the entry's next run, its first month, its last month.
const ITEM_INTS = 3;
const PAGE_BITS = 16;
const PAGE_ITEMS = 1 << PAGE_BITS;
const ITEM_MASK = PAGE_ITEMS - 1;

/** Items the first page starts with: it doubles up to a whole page, so that a small file's runs take kilobytes. */
const FIRST_PAGE_ITEMS = 1 << 10;

/** Numbered items of three integers, in pages: item k is at (k & ITEM_MASK) × 3 of page k >> PAGE_BITS. */
class Items {
  pages: Int32Array[] = [];
  count = 0;

  /** A new item's number. */
  add(a: number, b: number, c: number): number {
    const k = this.count++;
    const at = (k & ITEM_MASK) * ITEM_INTS;
    let page = this.pages[k >>> PAGE_BITS];
    if (page === undefined || at >= page.length) page = this.grow(k >>> PAGE_BITS);
    page[at] = a;
    page[at + 1] = b;
    page[at + 2] = c;
    return k;
  }

  /** Page `p`, made or made larger: the first by doubling (a copy of at most half a page), the rest whole. */
  private grow(p: number): Int32Array {
    const old = this.pages[p];
    const items = p === 0 ? Math.min(PAGE_ITEMS, old ? 2 * (old.length / ITEM_INTS) : FIRST_PAGE_ITEMS) : PAGE_ITEMS;
    const page = new Int32Array(items * ITEM_INTS);
    if (old) {
      page.set(old);
      freeNow(old);
    }
    this.pages[p] = page;
    return page;
  }
}

export class CustomerRuns {
  /** Per customer: its first entry + 1, 0 for none (zero as reserved: never filled). `customers` long. */
  private heads: Int32Array;
  private entries = new Items();
  private nodes = new Items();
  private free = NONE;
  /** Runs held (what the tally's `runs` limit counts). */
  runCount = 0;
  /** What touch() read, kept so that the reads are not optimized away. */
  touched = 0;

  /** Customers numbered 0 to `customers` - 1; `reservation`: where the per-customer array comes from (of CustomerRuns.reserves bytes), a plain one if none. */
  constructor(customers: number, reservation?: Reservation) {
    this.heads = reservation?.int32(customers) ?? new Int32Array(customers);
  }

  /** The bytes runs of this many customers take from a Reservation. */
  static reserves(customers: number): number {
    return Reservation.bytes(4 * customers);
  }

  /** Adds the months [start, end] to the customer's runs in the currency; true when the customer is new to the currency. */
  add(customer: number, currency: number, start: number, end: number): boolean {
    const entryPages = this.entries.pages;
    let entry = this.heads[customer]! - 1;
    let ep: Int32Array | undefined;
    let eo = 0;
    while (entry !== NONE) {
      ep = entryPages[entry >>> PAGE_BITS]!;
      eo = (entry & ITEM_MASK) * ITEM_INTS;
      if (ep[eo + 1] === currency) break;
      entry = ep[eo]!;
    }
    if (entry === NONE) {
      this.heads[customer] = this.entries.add(this.heads[customer]! - 1, currency, this.node(start, end, NONE)) + 1;
      return true;
    }
    const nodePages = this.nodes.pages;
    let previous = NONE;
    let run = ep![eo + 2]!;
    // Runs wholly before this one and not touching it.
    while (run !== NONE) {
      const rp = nodePages[run >>> PAGE_BITS]!;
      const ro = (run & ITEM_MASK) * ITEM_INTS;
      if (rp[ro + 2]! + 1 >= start) break;
      previous = run;
      run = rp[ro]!;
    }
    if (run === NONE || this.first(run) > end + 1) {
      const added = this.node(start, end, run);
      if (previous === NONE) ep![eo + 2] = added;
      else this.setNext(previous, added);
      return false;
    }
    // It overlaps or touches `run`: widen it, and absorb the runs after it that it reaches.
    const rp = nodePages[run >>> PAGE_BITS]!;
    const ro = (run & ITEM_MASK) * ITEM_INTS;
    if (start < rp[ro + 1]!) rp[ro + 1] = start;
    let last = Math.max(rp[ro + 2]!, end);
    let next = rp[ro]!;
    while (next !== NONE) {
      const np = nodePages[next >>> PAGE_BITS]!;
      const no = (next & ITEM_MASK) * ITEM_INTS;
      if (np[no + 1]! > last + 1) break;
      if (np[no + 2]! > last) last = np[no + 2]!;
      const after = np[no]!;
      this.release(next);
      next = after;
    }
    rp[ro + 2] = last;
    rp[ro] = next;
    return false;
  }

  /**
   * Reads, for each of `count` customers, what add() will read first (its first entry and that
   * entry's first run), in passes light enough that the processor has many of these reads under
   * way at once: add() itself, a chain of dependent reads per contract, then finds them in the cache.
   */
  touch(customers: Int32Array, count: number): void {
    const heads = this.heads;
    const entryPages = this.entries.pages;
    const nodePages = this.nodes.pages;
    let touched = 0;
    for (let i = 0; i < count; i++) touched ^= heads[customers[i]!]!;
    for (let i = 0; i < count; i++) {
      const entry = heads[customers[i]!]! - 1;
      if (entry !== NONE) touched ^= entryPages[entry >>> PAGE_BITS]![(entry & ITEM_MASK) * ITEM_INTS + 2]!;
    }
    for (let i = 0; i < count; i++) {
      const entry = heads[customers[i]!]! - 1;
      if (entry === NONE) continue;
      const run = entryPages[entry >>> PAGE_BITS]![(entry & ITEM_MASK) * ITEM_INTS + 2]!;
      if (run !== NONE) touched ^= nodePages[run >>> PAGE_BITS]![(run & ITEM_MASK) * ITEM_INTS + 2]!;
    }
    this.touched = touched;
  }

  /** Every (customer, currency) entry's runs, in order: `visit(currency, start, end, first)` per run. */
  forEachRun(visit: (currency: number, start: number, end: number, first: boolean) => void): void {
    const entryPages = this.entries.pages;
    const nodePages = this.nodes.pages;
    for (let entry = 0; entry < this.entries.count; entry++) {
      const ep = entryPages[entry >>> PAGE_BITS]!;
      const eo = (entry & ITEM_MASK) * ITEM_INTS;
      const currency = ep[eo + 1]!;
      for (let run = ep[eo + 2]!, first = true; run !== NONE; first = false) {
        const rp = nodePages[run >>> PAGE_BITS]!;
        const ro = (run & ITEM_MASK) * ITEM_INTS;
        visit(currency, rp[ro + 1]!, rp[ro + 2]!, first);
        run = rp[ro]!;
      }
    }
  }

  /** Lets the arrays go now (freeNow; a reserved one goes with its reservation). */
  dispose(): void {
    freeNow(this.heads, ...this.entries.pages, ...this.nodes.pages);
    this.clear();
  }

  /** Lets the arrays go (the tally gave up). */
  clear(): void {
    this.heads = new Int32Array(0);
    this.entries = new Items();
    this.nodes = new Items();
    this.free = NONE;
    this.runCount = 0;
  }

  private first(run: number): number {
    return this.nodes.pages[run >>> PAGE_BITS]![(run & ITEM_MASK) * ITEM_INTS + 1]!;
  }

  private setNext(run: number, next: number): void {
    this.nodes.pages[run >>> PAGE_BITS]![(run & ITEM_MASK) * ITEM_INTS] = next;
  }

  private node(start: number, end: number, next: number): number {
    this.runCount++;
    const run = this.free;
    if (run === NONE) return this.nodes.add(next, start, end);
    const page = this.nodes.pages[run >>> PAGE_BITS]!;
    const at = (run & ITEM_MASK) * ITEM_INTS;
    this.free = page[at]!;
    page[at] = next;
    page[at + 1] = start;
    page[at + 2] = end;
    return run;
  }

  private release(run: number): void {
    this.setNext(run, this.free);
    this.free = run;
    this.runCount--;
  }
}
