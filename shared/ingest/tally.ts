// The rows, currencies and catalog of a version (../shared/spec/contract.md, "Metrics and catalog"
// and its fine points), counted in Node as the rows stream past on their way to COPY, so that
// PostgreSQL only stores them (the monthly figures are shared/figures/book.ts's). Everything here
// is exact (integer cents, day and month numbers) and bounded: the sets that grow
// with distinct customers, products or amounts stop at a cap, and then `complete` is
// false and the build computes the figures in SQL instead (computeReads in
// shared/domain/metricsAndCatalog.ts: the same numbers, slower).
// Likewise for contractIds: 53-bit hashes show that no two rows share one, or the build asks SQL.
// The rows come in batches (tallyBatch.ts), names as UTF-8 bytes: the tally may run on a thread
// of its own, beside the build's (tallyFeed.ts).
import { CONTRACT_FIELDS, FIELD_KINDS, type FieldName, GATING_FIELDS, type GatingFieldName } from '../contract/fields.ts';
import { formatDay } from '../figures/calendar.ts';
import { currencyCode } from './currencies.ts';
import { CENTS, CURRENCY, CUSTOMER_BYTES, END_DAY, PRODUCT_BYTES, ROW_FIELDS, START_DAY, type TallyBatch } from './tallyBatch.ts';
import { ContractLog, type GatheredContracts, PARTITIONS } from './contractLog.ts';
import { type BookShare, CustomerWalk } from './bookShare.ts';
import { byBytes, MetricsBook } from '../figures/book.ts';
import { formatScaled } from '../figures/exact.ts';
import { CustomerLinesWriter, type LinesSink, type MonthlyFigures, monthlyFigures } from '../figures/customerChanges.ts';
import { NameTable } from './nameTable.ts';
import { freeNow, Reservation } from '../platform/typedArrays.ts';
import { HashList, NumberSet } from './numberSet.ts';
import { HeapNearLimit, HeapRoom } from '../platform/heapRoom.ts';

/**
 * What the tally may hold before it hands the work to SQL. Whoever makes a Tally may give others
 * (tests give lower ones, and limitsFor() what a batch of rows needs); these are the defaults.
 * setSlots bounds the contractId hashes and the amounts of $335,544.32 and more (8 bytes each;
 * in a tally of 2^16 slots or fewer, every amount and every date): 2^20, 8 MiB, keeps a file of
 * a million contractIds in Node and a worker far under its memory budget. customers: a million
 * customers' names are the biggest part of a tally that holds them; customerBytes bounds their
 * UTF-8 bytes (outside the heap: 64 MiB, two million names of 32 Latin characters); their slots,
 * and products (the first 32 as bits) take a few bytes each. pairs counts a
 * customer's products past the 32nd only; productBytes bounds the products' bytes likewise (16 MiB).
 */
export type TallyLimits = { customers: number; customerBytes: number; products: number; productBytes: number; pairs: number; setSlots: number; contractsInMemory: number; linesInMemory: number };
export const DEFAULT_TALLY_LIMITS: Readonly<TallyLimits> = Object.freeze({
  customers: 1_000_000,
  customerBytes: 64 * 1024 * 1024,
  products: 100_000,
  productBytes: 16 * 1024 * 1024,
  pairs: 1_000_000,
  setSlots: 1 << 20,
  contractsInMemory: 1 << 18,
  linesInMemory: 4 * 1024 * 1024,
});

const MIN_DAY = -719_528; // 0000-01-01, days since 1970-01-01
const DAY_SPAN = 3_652_425 + 366; // through 9999-12-31

/** Amounts below this many cents (most: up to $335,544.31) are kept as bits (4 MiB) by a tally that may hold many. */
const AMOUNT_BITMAP_VALUES = 1 << 25;
/**
 * A tally that may hold more distinct amounts or days than this keeps them as bits (every day
 * from 0000 to 9999 in 446 KiB), and any fewer in slots: the bitmaps would cost more than the
 * slots, and a tally's arrays of a few MiB, made and let go per build, had V8 collect its heap
 * every few builds (they count as external memory until then).
 */
const BITMAPS_PAST = 1 << 16;

/** Distinct days, and the first and last. */
class DaySet {
  private readonly days: NumberSet;
  min = Infinity;
  max = -Infinity;

  constructor(maxSlots: number, reservation: Reservation | undefined) {
    this.days = new NumberSet(maxSlots, reservation && { values: DAY_SPAN, reservation });
  }

  static reserves(): number {
    return NumberSet.reserves(DAY_SPAN);
  }

  get size(): number {
    return this.days.size;
  }

  /** It outgrew its slots (and no longer knows its size). */
  get full(): boolean {
    return this.days.full;
  }

  add(day: number): void {
    this.days.add(day - MIN_DAY);
    if (day < this.min) this.min = day;
    if (day > this.max) this.max = day;
  }

  dispose(): void {
    this.days.dispose();
  }
}

/**
 * The limits a tally of these rows needs at most (none above `limits`): a build whose rows are
 * all at hand (one batch) sizes its tally to them, so that a small file's tally takes kilobytes.
 * `ids`: the stored rows (valid or not); `rows`: the valid ones; `nameBytes`: their customers'
 * and products' bytes in all.
 */
export function limitsFor(ids: number, rows: number, nameBytes: number, limits: TallyLimits = DEFAULT_TALLY_LIMITS): TallyLimits {
  // A row brings at most one name of each kind and one customer-product pair; twice as many slots as values keep a set below its load.
  const slots = 2 ** Math.ceil(Math.log2(2 * Math.max(ids, rows, 2)));
  return {
    customers: Math.min(limits.customers, rows),
    customerBytes: Math.min(limits.customerBytes, nameBytes),
    products: Math.min(limits.products, rows),
    productBytes: Math.min(limits.productBytes, nameBytes),
    pairs: Math.min(limits.pairs, rows),
    setSlots: Math.min(limits.setSlots, slots),
    contractsInMemory: Math.min(limits.contractsInMemory, Math.max(rows, 1)),
    linesInMemory: limits.linesInMemory,
  };
}

/**
 * The limits a tally of a file of `bytes` bytes needs at most (none above `limits`): a row takes two
 * bytes at least (a character and its line end), and its names are some of the file's bytes.
 * Undefined when the size is not known (the defaults apply). A small file's tally takes kilobytes
 * then: in an express build thread's small heap, one of the default limits (~32 MiB outside the
 * heap, made and let go at every build) had V8 collect the heap each time, 8 ms of a 10-row build's
 * 14 ms start. Too low a size only costs speed: past its limits a tally gives up and SQL counts.
 */
export function limitsForFile(bytes: number | null, limits: TallyLimits = DEFAULT_TALLY_LIMITS): TallyLimits | undefined {
  if (bytes === null || !Number.isSafeInteger(bytes) || bytes < 0) return undefined;
  const rows = Math.ceil(bytes / 2) + 1;
  return limitsFor(rows, rows, bytes, limits);
}

type CurrencyTally = {
  name: string;
  index: number;
  contracts: number;
  cents: number;
  customers: number;
};

export class Tally {
  private readonly limits: TallyLimits;
  /** What outgrew its limit when the tally gave up (for the build's log line); undefined while it holds everything. */
  gaveUpOn: string | undefined;
  private total = 0;
  private contributing = 0;
  private excluded = { startDate: 0, endDate: 0, amount: 0, currency: 0 } satisfies Record<GatingFieldName, number>;
  private present = { contractId: 0, product: 0, amount: 0, currency: 0 };
  private readonly startDays: DaySet;
  private readonly endDays: DaySet;
  private minCents = Infinity;
  private maxCents = -Infinity;
  private readonly amounts: NumberSet;
  private readonly customers: NameTable;
  private readonly products: NameTable;
  /**
   * Arrays as long as the limits allow, written only as far as they are used (typedArrays.ts): the
   * names' and products' arrays, kept until the figures are made; and the sets (the contractIds'
   * hashes, the distinct amounts and days), let go once every row is in (end()), before the book
   * is walked (realistic 10M rows: 13 MiB written of them).
   */
  private readonly reservation: Reservation;
  private readonly sets: Reservation;
  /** Per product (by number): its rows, and its customers. */
  private productContracts: Int32Array;
  private productCustomers: Int32Array;
  /** Per row of the batch being added: where its customer's and product's bytes start, and their numbers. */
  private customerAt = new Int32Array(0);
  private productAt = new Int32Array(0);
  private customerOf = new Int32Array(0);
  private productOf = new Int32Array(0);
  /** Per customer: the first 32 products (by index) it has rows of, as bits. */
  private productBits: Int32Array;
  /** Per customer: the products past the 32nd it has rows of. */
  private readonly moreProductsOf = new Map<number, number[]>();
  private pairs = 0;
  /** Every currency present, contributing or not, in the order met. */
  private readonly currencies: CurrencyTally[] = [];
  /**
   * Per currency code (currencyIndex, below 2^15): its place in `currencies` + 1, 0 for none. An
   * array of tallies indexed by the code was sparse, so V8 kept it as a dictionary: a hash lookup
   * per row, and 1.4 ms to list the few present (half of what a 10-row file's tally cost).
   */
  private readonly currencyAt = new Uint16Array(1 << 15);
  /** The contributing contracts, for the monthly figures. */
  private readonly contracts: ContractLog;

  // contractIds: no two equal hashes means no duplicate.
  private readonly ids: HashList;
  private idCount = 0;
  /** Partitions of the contract log a helper walked (bookShare.ts). */
  private partitionsShared = 0;
  /** Room in the thread's heap: the tally gives up while it still has some (heapRoom.ts). */
  private readonly room = new HeapRoom();

  constructor(limits: TallyLimits = DEFAULT_TALLY_LIMITS) {
    this.limits = { ...limits };
    const customerNames = { maxNames: limits.customers, maxBytes: limits.customerBytes };
    const productNames = { maxNames: limits.products, maxBytes: limits.productBytes };
    const bitmaps = limits.setSlots > BITMAPS_PAST;
    const reservation = (this.reservation = new Reservation(
      NameTable.reserves(customerNames) + NameTable.reserves(productNames) + Reservation.bytes(4 * limits.customers, 4 * limits.products, 4 * limits.products),
    ));
    const sets = (this.sets = new Reservation(HashList.reserves(limits.setSlots) + (bitmaps ? NumberSet.reserves(AMOUNT_BITMAP_VALUES) + 2 * DaySet.reserves() : 0)));
    this.customers = new NameTable(customerNames, reservation);
    this.products = new NameTable(productNames, reservation);
    this.contracts = new ContractLog(limits.contractsInMemory);
    this.ids = new HashList(limits.setSlots, sets);
    this.productBits = reservation.int32(limits.customers);
    this.productContracts = reservation.int32(limits.products);
    this.productCustomers = reservation.int32(limits.products);
    this.amounts = new NumberSet(limits.setSlots, bitmaps ? { values: AMOUNT_BITMAP_VALUES, reservation: sets } : undefined);
    this.startDays = new DaySet(limits.setSlots, bitmaps ? sets : undefined);
    this.endDays = new DaySet(limits.setSlots, bitmaps ? sets : undefined);
  }

  /** A batch of rows: the contractId hashes of every stored row, valid or not (for the duplicate check), and the valid rows. */
  addBatch(batch: TallyBatch): void {
    const { ids, rows, bytes, rowCount } = batch;
    for (let i = 0; i < batch.idCount; i++) this.ids.add(ids[i]!);
    this.idCount += batch.idCount;
    this.total += rowCount;
    if (!this.complete || rowCount === 0) return;
    if (this.room.nearLimit()) return this.giveUp(new HeapNearLimit('the tally', this.room).message);
    // Where each row's customer's and product's bytes start; then their numbers, for the whole batch at once.
    if (this.customerAt.length < rowCount) this.scratch(rowCount + (rowCount >> 1));
    const { customerAt, productAt, customerOf, productOf } = this;
    for (let i = 0, at = 0; i < rowCount; i++) {
      const customerBytes = rows[i * ROW_FIELDS + CUSTOMER_BYTES]!;
      customerAt[i] = at;
      productAt[i] = at + customerBytes;
      at += customerBytes + Math.max(rows[i * ROW_FIELDS + PRODUCT_BYTES]!, 0);
    }
    if (!this.customers.numbersOf(bytes, customerAt, rows, ROW_FIELDS, CUSTOMER_BYTES, rowCount, customerOf)) return this.giveUp('customers');
    if (!this.products.numbersOf(bytes, productAt, rows, ROW_FIELDS, PRODUCT_BYTES, rowCount, productOf)) return this.giveUp('products');
    this.amounts.touch(rows, ROW_FIELDS, CENTS, rowCount);
    for (let i = 0; i < rowCount && this.complete; i++) this.add(rows, i * ROW_FIELDS, customerOf[i]!, productOf[i]!);
  }

  private scratch(rows: number): void {
    this.customerAt = new Int32Array(rows);
    this.productAt = new Int32Array(rows);
    this.customerOf = new Int32Array(rows);
    this.productOf = new Int32Array(rows);
  }

  /** What the build needs to know once every row is in (call once). The sets go then: their sizes, minima and maxima stay. */
  end(): TallyEnd {
    const end = {
      complete: this.complete,
      ...(this.gaveUpOn !== undefined && { gaveUpOn: this.gaveUpOn }),
      presentContractIds: this.idCount,
      contractIdsDistinct: this.contractIdsDistinct(),
    };
    this.disposeSets();
    return end;
  }

  private disposeSets(): void {
    this.ids.dispose();
    this.amounts.dispose();
    this.startDays.dispose();
    this.endDays.dispose();
    this.sets.free();
  }

  /** Whether the rows' contractIds are known to be distinct (else SQL has to look). Call once. */
  private contractIdsDistinct(): boolean {
    try {
      return !this.ids.full && !this.ids.hasRepeat();
    } catch {
      return false; // the spilled hashes could not be read back: SQL looks
    } finally {
      this.ids.close();
    }
  }

  /** Lets go of what the tally holds outside the heap, now (its arrays, the contractId hashes' temporary file). Call once, at the end. */
  close(): void {
    this.disposeSets();
    this.customers.dispose();
    this.products.dispose();
    this.contracts.close();
    freeNow(this.customerAt, this.productAt, this.customerOf, this.productOf);
    this.reservation.free();
  }

  /** The valid row at `at` of `rows` (ROW_FIELDS numbers), of customer number `customer` and product number `product` (-1: none). */
  private add(rows: Float64Array, at: number, customer: number, product: number): void {
    if (rows[at] === 1) this.present.contractId++;
    if (product >= 0) {
      this.present.product++;
      this.addProduct(product, customer);
    }
    const startDay = rows[at + START_DAY]!;
    const endDay = rows[at + END_DAY]!;
    const cents = rows[at + CENTS]!;
    const hasStart = startDay === startDay;
    const hasEnd = endDay === endDay;
    const hasAmount = cents === cents;
    if (hasStart) this.startDays.add(startDay);
    else this.excluded.startDate++;
    if (hasEnd) this.endDays.add(endDay);
    else this.excluded.endDate++;
    if (this.startDays.full || this.endDays.full) return this.giveUp('distinct dates');
    if (hasAmount) {
      this.present.amount++;
      // Past 2^53 cents integers are no longer exact.
      if (cents > Number.MAX_SAFE_INTEGER) return this.giveUp('an amount too large for exact sums');
      this.amounts.add(cents);
      if (this.amounts.full) return this.giveUp('distinct amounts');
      if (cents < this.minCents) this.minCents = cents;
      if (cents > this.maxCents) this.maxCents = cents;
    }
    if (!hasAmount || cents === 0) this.excluded.amount++;
    const code = rows[at + CURRENCY]!;
    if (code < 0) {
      this.excluded.currency++;
      return;
    }
    this.present.currency++;
    const currency = this.currency(code);
    if (hasStart && hasEnd && hasAmount && cents > 0 && this.complete) this.addContract(currency, customer, startDay, endDay, cents);
  }

  /** Whether the tally holds every figure (else SQL computes them). */
  get complete(): boolean {
    return this.gaveUpOn === undefined;
  }

  private giveUp(reason: string): void {
    this.gaveUpOn = reason;
    // Let the collections go (reserved arrays keep their pages until close()); SQL computes the figures.
    this.customers.clear();
    this.products.clear();
    this.productContracts = new Int32Array(0);
    this.productCustomers = new Int32Array(0);
    this.productBits = new Int32Array(0);
    this.moreProductsOf.clear();
    this.currencies.length = 0;
    this.currencyAt.fill(0);
    this.contracts.close();
  }

  private addProduct(index: number, customer: number): void {
    this.productContracts[index]!++;
    if (index < 32) {
      const bit = 1 << index;
      if ((this.productBits[customer]! & bit) === 0) {
        this.productBits[customer]! |= bit;
        this.productCustomers[index]!++;
      }
      return;
    }
    let more = this.moreProductsOf.get(customer);
    if (more === undefined) this.moreProductsOf.set(customer, (more = []));
    if (!more.includes(index)) {
      more.push(index);
      this.productCustomers[index]!++;
      if (++this.pairs > this.limits.pairs) this.giveUp('customer products');
    }
  }

  private currency(index: number): CurrencyTally {
    const at = this.currencyAt[index]!;
    if (at !== 0) return this.currencies[at - 1]!;
    const c: CurrencyTally = { name: currencyCode(index), index, contracts: 0, cents: 0, customers: 0 };
    this.currencyAt[index] = this.currencies.push(c);
    return c;
  }

  private addContract(c: CurrencyTally, customer: number, startDay: number, endDay: number, cents: number): void {
    this.contributing++;
    try {
      this.contracts.add(customer, c.index, startDay, endDay, cents);
    } catch (error) {
      return this.giveUp(`the contracts' file: ${(error as Error).message}`);
    }
    c.contracts++;
    c.cents += cents;
    if (!Number.isSafeInteger(c.cents)) return this.giveUp('a currency total too large for exact sums');
  }

  /** The figures: those version_reads stores, and the monthly ones (call once); `sink` takes the customers' rows as they are written (CustomerLinesWriter). */
  result(distinctContractIds: number, versionId: string, sink?: LinesSink, share?: BookShare) {
    const cents = (n: number) => formatScaled(BigInt(n), 2);
    const day = (d: number) => (d === Infinity || d === -Infinity ? null : formatDay(d));
    const excluded = Object.fromEntries(GATING_FIELDS.map((f) => [f.name, this.excluded[f.name]]));
    const rows = { total: this.total, contributing: this.contributing, excluded };

    // First the monthly figures: their walk over each customer's contracts counts each currency's customers.
    const monthly = this.monthlyFigures(versionId, sink, share);
    const contributing = this.currencies.filter((c) => c.contracts > 0).sort((a, b) => byBytes(a.name, b.name));
    const currencies = contributing.map((c) => ({ currency: c.name, contracts: c.contracts, customers: c.customers, totalValue: cents(c.cents) }));
    const products = Array.from({ length: this.products.size }, (_, n) => ({ product: this.products.nameOf(n), contracts: this.productContracts[n]!, customers: this.productCustomers[n]! }))
      .sort((a, b) => byBytes(a.product, b.product));

    // Each field's figures; min and max are shown for the kinds that have them (dates, decimals).
    const figures: Record<FieldName, { present: number; distinct: number; min?: string | null; max?: string | null }> = {
      contractId: { present: this.present.contractId, distinct: distinctContractIds },
      customer: { present: this.total, distinct: this.customers.size },
      product: { present: this.present.product, distinct: this.products.size },
      startDate: { present: this.total - this.excluded.startDate, distinct: this.startDays.size, min: day(this.startDays.min), max: day(this.startDays.max) },
      endDate: { present: this.total - this.excluded.endDate, distinct: this.endDays.size, min: day(this.endDays.min), max: day(this.endDays.max) },
      amount: {
        present: this.present.amount,
        distinct: this.amounts.size,
        min: this.present.amount ? cents(this.minCents) : null,
        max: this.present.amount ? cents(this.maxCents) : null,
      },
      currency: { present: this.present.currency, distinct: this.currencies.length },
    };
    const catalog = {
      rowCount: this.total,
      fields: CONTRACT_FIELDS.map((f) => {
        const { present, distinct, min = null, max = null } = figures[f.name];
        const minMax = FIELD_KINDS[f.kind].minMax;
        return { name: f.name, type: f.kind, gating: f.gating, present, distinct, min: minMax ? min : null, max: minMax ? max : null };
      }),
      products,
    };
    return { rows, currencies, catalog, figures: monthly, partitionsShared: this.partitionsShared };
  }

  /**
   * The monthly figures, from each customer's contracts (shared/figures/book.ts). With `share`, a
   * helper walks some of the partitions (bookShare.ts), and its book is merged into this one.
   */
  private monthlyFigures(versionId: string, sink?: LinesSink, share?: BookShare): MonthlyFigures {
    const book = new MetricsBook();
    // Streamed, the rows carry COPY's trailer, not its header: the build writes that first, as a helper's rows may come before these.
    const lines = new CustomerLinesWriter(versionId, this.limits.linesInMemory, sink, sink ? 'trailer' : 'whole');
    try {
      const customerWalk = new CustomerWalk(book, lines, this.room, 'the tally', (currency) => this.currency(currency).customers++);
      const helper = share && {
        wants: () => share.wants(),
        give: (part: GatheredContracts) => {
          this.partitionsShared++;
          share.give({ ...part, ...this.namesOf(part.index) });
        },
      };
      this.contracts.forEachCustomer((group) => customerWalk.take(group, this.customers.bytesOf(group.customer)), helper);
      if (share) {
        const helped = share.finish(this.room, 'the tally');
        book.merge(helped.book);
        for (const [currency, customers] of helped.customers) this.currency(currency).customers += customers;
      }
      // The names were for the customers' rows: their pages and slots go before the documents are made (size stays).
      this.customers.dispose();
      return monthlyFigures(book, lines, () => this.room.check('the tally'));
    } catch (error) {
      share?.close();
      lines.close();
      throw error;
    }
  }

  /** The names of partition `index`'s customers (k × PARTITIONS + index), for a helper (SharedPartition). */
  private namesOf(index: number): { nameStarts: Int32Array; nameBytes: Uint8Array } {
    const size = this.customers.size;
    const count = index < size ? Math.floor((size - 1 - index) / PARTITIONS) + 1 : 0;
    const nameStarts = new Int32Array(count + 1);
    for (let k = 0; k < count; k++) nameStarts[k + 1] = nameStarts[k]! + this.customers.bytesOf(k * PARTITIONS + index).length;
    const nameBytes = new Uint8Array(nameStarts[count]!);
    for (let k = 0; k < count; k++) nameBytes.set(this.customers.bytesOf(k * PARTITIONS + index), nameStarts[k]!);
    return { nameStarts, nameBytes };
  }
}

export type TallyResult = ReturnType<Tally['result']>;

/**
 * The tally once every row is in: whether it holds every figure (else SQL computes them, and
 * gaveUpOn says what outgrew its limit), the stored rows with a contractId, and whether their
 * hashes show them distinct (else SQL looks for duplicates).
 */
export type TallyEnd = { complete: boolean; gaveUpOn?: string; presentContractIds: number; contractIdsDistinct: boolean };

/**
 * A tally for a build that must not fail for it: an error in counting (a bug, or no memory for its
 * arrays) ends the counting, and the build computes the figures in SQL, as when a limit is passed.
 * The tally thread counts its builds so, and so does a build counted in its own thread.
 */
export class GuardedTally {
  private tally: Tally | undefined;
  /** Why counting stopped, when an error stopped it. */
  private failed: string | undefined;

  constructor(limits?: TallyLimits) {
    this.guard(() => (this.tally = new Tally(limits)));
  }

  addBatch(batch: TallyBatch): void {
    this.guard(() => this.tally?.addBatch(batch));
  }

  end(): TallyEnd {
    const end = this.guard(() => this.tally?.end());
    return end ?? { complete: false, gaveUpOn: this.failed!, presentContractIds: 0, contractIdsDistinct: false };
  }

  /** The figures; undefined if they could not be had (SQL computes them). */
  result(distinctContractIds: number, versionId: string, sink?: LinesSink, share?: BookShare): TallyResult | undefined {
    return this.guard(() => this.tally?.result(distinctContractIds, versionId, sink, share));
  }

  close(): void {
    this.tally?.close();
    this.tally = undefined;
  }

  /** Why the counting stopped, once an error or the heap's room stopped it (result() is then undefined). */
  get stoppedBy(): string | undefined {
    return this.failed;
  }

  private guard<T>(count: () => T): T | undefined {
    if (this.failed !== undefined) return undefined;
    try {
      return count();
    } catch (error) {
      this.failed = error instanceof HeapNearLimit ? error.message : `an error in the tally: ${(error as Error).message}`;
      this.close();
      return undefined;
    }
  }
}
