// Each customer's contributing months in each currency, as disjoint runs of months (overlapping
// and adjacent contracts merged, as range_agg does), kept in typed arrays rather than objects: a
// million rows of tens of thousands of customers cost a few MiB and no garbage, and adding a
// contract touches a few neighbouring integers. Per customer, a list of (currency, runs) entries;
// per entry, its runs as a list sorted by start month. Freed run nodes are reused.

const NONE = -1;
// An entry: the customer's next entry, its currency, its first run.
const ENTRY_INTS = 3;
// A run: the entry's next run, its first month, its last month.
const RUN_INTS = 3;

/** The array, or a copy half as long again (at least `atLeast`): at 10M rows the runs take tens of MiB, and doubling would waste up to half. */
function grown(array: Int32Array<ArrayBuffer>, atLeast: number, fill?: number): Int32Array<ArrayBuffer> {
  if (atLeast <= array.length) return array;
  let length = Math.ceil(array.length * 1.5);
  while (length < atLeast) length = Math.ceil(length * 1.5);
  const bigger = new Int32Array(length);
  bigger.set(array);
  if (fill !== undefined) bigger.fill(fill, array.length);
  return bigger;
}

export class CustomerRuns {
  private heads = new Int32Array(1024).fill(NONE);
  private entries = new Int32Array(1024 * ENTRY_INTS);
  private entryCount = 0;
  private nodes = new Int32Array(4096 * RUN_INTS);
  private nodeCount = 0;
  private free = NONE;
  /** Runs held (what the tally's `runs` limit counts). */
  runCount = 0;

  /** Adds the months [start, end] to the customer's runs in the currency; true when the customer is new to the currency. */
  add(customer: number, currency: number, start: number, end: number): boolean {
    if (customer >= this.heads.length) this.heads = grown(this.heads, customer + 1, NONE);
    let entry = this.heads[customer]!;
    while (entry !== NONE && this.entries[entry + 1] !== currency) entry = this.entries[entry]!;
    if (entry === NONE) {
      entry = this.entryCount;
      this.entryCount += ENTRY_INTS;
      this.entries = grown(this.entries, this.entryCount);
      this.entries[entry] = this.heads[customer]!;
      this.entries[entry + 1] = currency;
      this.entries[entry + 2] = this.node(start, end, NONE);
      this.heads[customer] = entry;
      return true;
    }
    const nodes = this.nodes;
    let previous = NONE;
    let run = this.entries[entry + 2]!;
    // Runs wholly before this one and not touching it.
    while (run !== NONE && nodes[run + 2]! + 1 < start) {
      previous = run;
      run = nodes[run]!;
    }
    if (run === NONE || nodes[run + 1]! > end + 1) {
      const added = this.node(start, end, run);
      if (previous === NONE) this.entries[entry + 2] = added;
      else this.nodes[previous] = added;
      return false;
    }
    // It overlaps or touches `run`: widen it, and absorb the runs after it that it reaches.
    if (start < nodes[run + 1]!) nodes[run + 1] = start;
    let last = Math.max(nodes[run + 2]!, end);
    let next = nodes[run]!;
    while (next !== NONE && nodes[next + 1]! <= last + 1) {
      if (nodes[next + 2]! > last) last = nodes[next + 2]!;
      const after = nodes[next]!;
      this.release(next);
      next = after;
    }
    nodes[run + 2] = last;
    nodes[run] = next;
    return false;
  }

  /**
   * Reads, for each of `count` customers, what add() will read first (its first entry and that
   * entry's first run), in passes light enough that the processor has many of these reads under
   * way at once: add() itself, a chain of dependent reads per contract, then finds them in the cache.
   */
  touch(customers: Int32Array, count: number): void {
    const { heads, entries, nodes } = this;
    let touched = 0;
    for (let i = 0; i < count; i++) {
      const customer = customers[i]!;
      if (customer < heads.length) touched ^= heads[customer]!;
    }
    for (let i = 0; i < count; i++) {
      const customer = customers[i]!;
      const entry = customer < heads.length ? heads[customer]! : NONE;
      if (entry !== NONE) touched ^= entries[entry + 2]!;
    }
    for (let i = 0; i < count; i++) {
      const customer = customers[i]!;
      const entry = customer < heads.length ? heads[customer]! : NONE;
      if (entry !== NONE) touched ^= nodes[entries[entry + 2]! + 2]! | 0;
    }
    this.touched = touched;
  }

  /** What touch() read, kept so that the reads are not optimized away. */
  touched = 0;

  /** Every (customer, currency) entry's runs, in order: `visit(currency, start, end, first)` per run. */
  forEachRun(visit: (currency: number, start: number, end: number, first: boolean) => void): void {
    for (let entry = 0; entry < this.entryCount; entry += ENTRY_INTS) {
      const currency = this.entries[entry + 1]!;
      for (let run = this.entries[entry + 2]!, first = true; run !== NONE; run = this.nodes[run]!, first = false) {
        visit(currency, this.nodes[run + 1]!, this.nodes[run + 2]!, first);
      }
    }
  }

  /** Lets the arrays go (the tally gave up). */
  clear(): void {
    this.heads = new Int32Array(0);
    this.entries = new Int32Array(0);
    this.nodes = new Int32Array(0);
    this.entryCount = 0;
    this.nodeCount = 0;
    this.free = NONE;
    this.runCount = 0;
  }

  private node(start: number, end: number, next: number): number {
    let run = this.free;
    if (run !== NONE) this.free = this.nodes[run]!;
    else {
      run = this.nodeCount;
      this.nodeCount += RUN_INTS;
      this.nodes = grown(this.nodes, this.nodeCount);
    }
    this.nodes[run] = next;
    this.nodes[run + 1] = start;
    this.nodes[run + 2] = end;
    this.runCount++;
    return run;
  }

  private release(run: number): void {
    this.nodes[run] = this.free;
    this.free = run;
    this.runCount--;
  }
}
