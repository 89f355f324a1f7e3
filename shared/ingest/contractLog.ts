// The contributing contracts of a build, kept for the monthly figures (shared/figures/book.ts),
// which need each customer's contracts together while a file holds them in any order. Each
// contract is 24 bytes (customer, currency, start day, end day as Int32, cents as Float64), in one
// of PARTITIONS partitions by customer number. Past `inMemory` contracts, the partitions' contracts
// held are written to a temporary file (unlinked at once: it goes when the log is closed, or with
// the process), so that ten million contracts take a few MiB of memory and 240 MB of disk. At the
// end, each partition is read back whole (a 64th of the contracts) and handed over a customer at a
// time.
import { openScratchFile } from '../platform/scratchFiles.ts';
import { closeSync, readSync, writeSync } from 'node:fs';
import { freeNow, grown } from '../platform/typedArrays.ts';

export const PARTITIONS = 64;
const INTS = 4; // customer, currency, start day, end day

/** A customer's contracts in one currency, as forEachCustomer hands them over (valid until the next). */
export type CustomerContracts = { customer: number; currency: number; count: number; startDays: Int32Array; endDays: Int32Array; cents: Float64Array };

class Partition {
  ints = new Int32Array(0);
  cents = new Float64Array(0);
  length = 0;
  /** Its spilled runs in the file: where each starts, and its contracts. */
  readonly runs: { at: number; length: number }[] = [];

  add(customer: number, currency: number, startDay: number, endDay: number, cents: number): void {
    const n = this.length++;
    if (n === this.cents.length) {
      this.cents = grown(this.cents, n + 1);
      this.ints = grown(this.ints, this.cents.length * INTS);
    }
    const at = n * INTS;
    this.ints[at] = customer;
    this.ints[at + 1] = currency;
    this.ints[at + 2] = startDay;
    this.ints[at + 3] = endDay;
    this.cents[n] = cents;
  }

  free(): void {
    freeNow(this.ints, this.cents);
    this.ints = new Int32Array(0);
    this.cents = new Float64Array(0);
    this.length = 0;
  }
}

/** A partition's contracts gathered (index: which one), as a walk or a helper takes them. */
export type GatheredContracts = { index: number; ints: Int32Array; cents: Float64Array; length: number };

/**
 * One partition's customers, each customer's contracts in each currency handed over together, a
 * few at a time if asked (walk's `most`), so that a thread with other work can take turns.
 */
export class PartitionWalk {
  private readonly ints: Int32Array;
  private readonly cents: Float64Array;
  private readonly starts: Int32Array;
  private readonly order: Int32Array;
  private readonly slots: number;
  private slot = 0;
  private readonly currencies: number[] = [];
  private readonly group: CustomerContracts & { startDays: Int32Array<ArrayBuffer>; endDays: Int32Array<ArrayBuffer>; cents: Float64Array<ArrayBuffer> } = { customer: 0, currency: 0, count: 0, startDays: new Int32Array(16), endDays: new Int32Array(16), cents: new Float64Array(16) };

  constructor({ ints, cents, length }: { ints: Int32Array; cents: Float64Array; length: number }) {
    this.ints = ints;
    this.cents = cents;
    // Counting sort by customer (a partition's customers are k × PARTITIONS + its index), then
    // by currency within a customer: contracts of one customer and currency end up together.
    let maxCustomer = 0;
    for (let i = 0; i < length; i++) maxCustomer = Math.max(maxCustomer, ints[i * INTS]!);
    const slots = (this.slots = length === 0 ? 0 : Math.floor(maxCustomer / PARTITIONS) + 2);
    const starts = (this.starts = new Int32Array(slots));
    for (let i = 0; i < length; i++) starts[Math.floor(ints[i * INTS]! / PARTITIONS) + 1]!++;
    for (let s = 1; s < slots; s++) starts[s]! += starts[s - 1]!;
    const order = (this.order = new Int32Array(length));
    const next = starts.slice();
    for (let i = 0; i < length; i++) order[next[Math.floor(ints[i * INTS]! / PARTITIONS)]!++] = i;
    freeNow(next);
  }

  /** Hands over the next customers (at most `most` of them); true once every one is, and then lets the partition's arrays go. */
  walk(take: (contracts: CustomerContracts) => void, most = Infinity): boolean {
    const { ints, cents, starts, order, currencies, group } = this;
    let taken = 0;
    for (; this.slot + 1 < this.slots && taken < most; this.slot++) {
      const from = starts[this.slot]!;
      const to = starts[this.slot + 1]!;
      if (from === to) continue;
      taken++;
      // One customer's contracts, a currency at a time (few, most often one), in the order of
      // the currencies' numbers: their list first, then a pass over the contracts for each.
      currencies.length = 0;
      for (let i = from; i < to; i++) {
        const currency = ints[order[i]! * INTS + 1]!;
        if (currencies.includes(currency)) continue;
        // Into its place: sort() took a copy of the list for each customer of two currencies or more.
        let j = currencies.length;
        currencies.push(currency);
        for (; j > 0 && currencies[j - 1]! > currency; j--) currencies[j] = currencies[j - 1]!;
        currencies[j] = currency;
      }
      for (const currency of currencies) {
        group.customer = ints[order[from]! * INTS]!;
        group.currency = currency;
        group.count = 0;
        for (let i = from; i < to; i++) {
          const c = order[i]!;
          if (ints[c * INTS + 1] !== currency) continue;
          if (group.count === group.cents.length) {
            group.startDays = grown(group.startDays, group.count + 1);
            group.endDays = grown(group.endDays, group.count + 1);
            group.cents = grown(group.cents, group.count + 1);
          }
          group.startDays[group.count] = ints[c * INTS + 2]!;
          group.endDays[group.count] = ints[c * INTS + 3]!;
          group.cents[group.count++] = cents[c]!;
        }
        take(group);
      }
    }
    if (this.slot + 1 < this.slots) return false;
    // A partition's arrays are megabytes at 10M rows (gathered from the file, and its order):
    // let go now, not at the heap's next full collection, which came after several of them.
    freeNow(ints, cents, order, starts);
    return true;
  }
}

export class ContractLog {
  private readonly partitions = Array.from({ length: PARTITIONS }, () => new Partition());
  private readonly inMemory: number;
  private held = 0;
  private file: number | undefined;
  private fileBytes = 0;
  count = 0;

  constructor(inMemory: number) {
    this.inMemory = inMemory;
  }

  add(customer: number, currency: number, startDay: number, endDay: number, cents: number): void {
    this.partitions[customer % PARTITIONS]!.add(customer, currency, startDay, endDay, cents);
    this.count++;
    if (++this.held >= this.inMemory) this.spill();
  }

  /** Writes every partition's contracts held to the file (throws if it cannot: the caller gives up). */
  private spill(): void {
    if (this.file === undefined) {
      this.file = openScratchFile('contracts');
    }
    for (const p of this.partitions) {
      if (p.length === 0) continue;
      const ints = new Uint8Array(p.ints.buffer, 0, p.length * INTS * 4);
      const cents = new Uint8Array(p.cents.buffer, 0, p.length * 8);
      writeSync(this.file, ints, 0, ints.byteLength, this.fileBytes);
      writeSync(this.file, cents, 0, cents.byteLength, this.fileBytes + ints.byteLength);
      p.runs.push({ at: this.fileBytes, length: p.length });
      this.fileBytes += ints.byteLength + cents.byteLength;
      p.length = 0;
    }
    this.held = 0;
  }

  /**
   * Hands over each customer's contracts in each currency, a partition at a time (customers in no
   * particular order; each customer and currency once). Call once, at the end. With `share`, the
   * partitions from the last one down go to a helper whenever it wants one (between two of this
   * walk's partitions), gathered, for it to walk (PartitionWalk) while this walk goes on.
   */
  forEachCustomer(take: (contracts: CustomerContracts) => void, share?: { wants(): boolean; give(part: GatheredContracts): void }): void {
    let front = 0;
    let back = PARTITIONS - 1;
    while (front <= back) {
      while (share && front < back && share.wants()) {
        const p = this.partitions[back]!;
        const { ints, cents, length } = this.gather(p);
        if (length > 0) share.give({ index: back, ints, cents, length });
        back--;
        p.free(); // what was given is transferred: detached, nothing to free
      }
      const p = this.partitions[front]!;
      new PartitionWalk(this.gather(p)).walk(take);
      p.free();
      front++;
    }
  }

  /** A partition's contracts, those spilled read back first. */
  private gather(p: Partition): { ints: Int32Array; cents: Float64Array; length: number } {
    if (p.runs.length === 0) return p;
    const total = p.runs.reduce((n, r) => n + r.length, 0) + p.length;
    const ints = new Int32Array(total * INTS);
    const cents = new Float64Array(total);
    let n = 0;
    for (const run of p.runs) {
      readSync(this.file!, new Uint8Array(ints.buffer, n * INTS * 4, run.length * INTS * 4), 0, run.length * INTS * 4, run.at);
      readSync(this.file!, new Uint8Array(cents.buffer, n * 8, run.length * 8), 0, run.length * 8, run.at + run.length * INTS * 4);
      n += run.length;
    }
    ints.set(p.ints.subarray(0, p.length * INTS), n * INTS);
    cents.set(p.cents.subarray(0, p.length), n);
    p.free();
    return { ints, cents, length: total };
  }

  /** Lets go of the contracts and the file. */
  close(): void {
    for (const p of this.partitions) p.free();
    if (this.file !== undefined) closeSync(this.file);
    this.file = undefined;
  }
}
