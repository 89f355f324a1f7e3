// A customer's changes of MRR in one currency, stored with the version for the customers read
// (`GET …/customers?month=`) and the reporting currency (reporting.ts): each change's month, its
// movement and the MRR from then on, exact (a numerator over Q, or over a denominator of its own),
// packed as variable-length integers after a format byte (EXACT). A month between two changes has
// the earlier change's MRR, and `retained` as its movement. Versions built before the format byte
// hold whole cents instead (each rounded on its own, as the read shows it); they still read.
import { randomUUID } from 'node:crypto';
import { closeSync, createReadStream, openSync, rmSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { type CustomerMovement, type Movement, MOVEMENTS } from './definitions.ts';
import type { CohortFigures, CustomerChange, ExactCells, MetricsBook, MonthFigures, SeriesBounds } from './book.ts';
import { Q } from './exact.ts';

/** A stored change: its MRR in whole cents as the read shows it, and exact (`mrr` cents over `den`). */
export type StoredChange = { month: number; movement: Movement; cents: bigint; mrr: bigint; den: bigint };

/**
 * The first byte of the exact format. The older format (whole cents) starts with its first
 * change's head, 0: a customer's first change is always new business in its first month.
 */
const EXACT = 1;

const QN = Number(Q);

/** A change's MRR in whole cents, rounded half away from zero (MRR is never negative): a Number when it is one over Q. */
function cents(c: CustomerChange): number | bigint {
  if (typeof c.mrr === 'number') {
    let k = Math.floor(c.mrr / QN);
    let r = c.mrr - k * QN;
    if (r < 0) {
      k--;
      r += QN;
    } else if (r >= QN) {
      k++;
      r -= QN;
    }
    return 2 * r >= QN ? k + 1 : k;
  }
  return (2n * c.mrr + c.den) / (2n * c.den);
}

export const changeCents = (c: CustomerChange): bigint => BigInt(cents(c));

/** A change's month and movement as one integer (version_customers.moves). */
export const moveCode = (month: number, movement: Movement): number => month * 8 + MOVEMENTS.indexOf(movement);

/** Packs a customer's changes (at least one, in month order). */
export function packChanges(changes: readonly CustomerChange[]): Buffer {
  const bytes: number[] = [];
  const varint = (v: number | bigint) => {
    if (typeof v === 'number' && v <= Number.MAX_SAFE_INTEGER) {
      while (v >= 0x80) {
        bytes.push((v % 0x80) | 0x80);
        v = Math.floor(v / 0x80);
      }
      bytes.push(v);
      return;
    }
    let b = BigInt(v);
    while (b >= 0x80n) {
      bytes.push(Number(b & 0x7fn) | 0x80);
      b >>= 7n;
    }
    bytes.push(Number(b));
  };
  bytes.push(EXACT);
  let month = changes[0]!.month;
  for (const c of changes) {
    varint((c.month - month) * 8 + MOVEMENTS.indexOf(c.movement));
    // The numerator, doubled; odd when a denominator other than Q follows it.
    if (c.den === Q) varint(typeof c.mrr === 'number' ? 2 * c.mrr : 2n * c.mrr);
    else {
      varint(2n * BigInt(c.mrr) + 1n);
      varint(c.den);
    }
    month = c.month;
  }
  return Buffer.from(bytes);
}

/** The changes packed by packChanges, the first at `firstMonth`. */
export function unpackChanges(firstMonth: number, packed: Uint8Array): StoredChange[] {
  const out: StoredChange[] = [];
  let at = 0;
  const varint = (): bigint => {
    let v = 0n;
    let shift = 0n;
    for (;;) {
      const b = packed[at++]!;
      v |= BigInt(b & 0x7f) << shift;
      if (b < 0x80) return v;
      shift += 7n;
    }
  };
  let month = firstMonth;
  const exact = packed[0] === EXACT;
  if (exact) at = 1;
  while (at < packed.length) {
    const head = Number(varint());
    month += Math.floor(head / 8);
    const movement = MOVEMENTS[head % 8]!;
    if (!exact) {
      const cents = varint();
      out.push({ month, movement, cents, mrr: cents, den: 1n });
      continue;
    }
    const twice = varint();
    const den = twice % 2n === 0n ? Q : varint();
    const mrr = twice / 2n;
    out.push({ month, movement, cents: (2n * mrr + den) / (2n * den), mrr, den });
  }
  return out;
}

/** A customer's line for a month: MRR at the end of the month before and at this one, and the movement; undefined when both are 0. */
export function customerMonth(changes: readonly StoredChange[], month: number): { previousCents: bigint; cents: bigint; movement: CustomerMovement } | undefined {
  let previousCents = 0n;
  let cents = 0n;
  let movement: CustomerMovement = 'retained';
  for (const c of changes) {
    if (c.month > month) break;
    if (c.month < month) previousCents = c.cents;
    cents = c.cents;
    movement = c.month === month ? c.movement : 'retained';
  }
  if (movement === 'retained') previousCents = cents;
  if (previousCents === 0n && cents === 0n && movement === 'retained') return undefined;
  return { previousCents, cents, movement };
}

/**
 * The customers' changes of a version as COPY text lines for version_customers: in memory, or,
 * past `inMemory` bytes (4 MiB by default), in a temporary file readable by the process's user only, named for whoever
 * stores them (a descriptor is the thread's that opened it): storing it, or discarding it, deletes it.
 */
export type CustomerLines = { chunks: Buffer[]; path?: undefined; bytes: number } | { path: string; bytes: number; chunks?: undefined };

/**
 * What a build stores of its monthly figures (see MetricsBook), with each customer's changes as
 * COPY lines, and the book's exact cells (the start of its basis for conversion, fxBasis.ts).
 */
export type MonthlyFigures = { monthly: MonthFigures[]; cohorts: CohortFigures[]; bounds: SeriesBounds[]; customers: CustomerLines; cells: ExactCells };

/** The book's figures once every customer is in, with the customers' lines written. */
export function monthlyFigures(book: MetricsBook, lines: CustomerLinesWriter): MonthlyFigures {
  return { monthly: book.monthly(), cohorts: book.cohorts(), bounds: book.bounds(), customers: lines.done(), cells: book.exactCells() };
}

// COPY's text format: backslash, and the characters it would read as delimiters.
const needsEscape = /[\\\n\r\t]/;
const escapeCopy = (text: string) => text.replace(/[\\\n\r\t]/g, (c) => (c === '\\' ? '\\\\' : c === '\n' ? '\\n' : c === '\r' ? '\\r' : '\\t'));

const HEX = Buffer.from('0123456789abcdef');
const CHUNK = 65_536;

/** Writes the lines into buffers of CHUNK bytes (a line that does not fit in one gets a buffer of its own), then to a file past `inMemory`. */
export class CustomerLinesWriter {
  private readonly prefix: Buffer;
  private chunks: Buffer[] = [];
  private chunk = Buffer.allocUnsafe(CHUNK);
  private at = 0;
  private held = 0;
  private fd: number | undefined;
  private bytes = 0;
  count = 0;

  private readonly inMemory: number;

  constructor(versionId: string, inMemory = 4 * 1024 * 1024) {
    this.prefix = Buffer.from(`${versionId}\t`);
    this.inMemory = inMemory;
  }

  /** A customer's changes in a currency (at least one). */
  add(currency: string, customer: string, changes: readonly CustomerChange[]): void {
    const packed = packChanges(changes);
    const name = needsEscape.test(customer) ? escapeCopy(customer) : customer;
    // At most: the prefix, the currency and the name as UTF-8 (3 bytes a UTF-16 unit), two months
    // and a month and movement code per change (12 digits and a comma each), the packed bytes in hex.
    const most = this.prefix.length + 3 * (currency.length + name.length) + 2 * packed.length + 13 * changes.length + 40;
    if (this.at + most > this.chunk.length) this.endChunk(most);
    const b = this.chunk;
    let at = this.at + this.prefix.copy(b, this.at);
    at += b.write(currency, at, 'utf8');
    b[at++] = 9;
    at += b.write(name, at, 'utf8');
    b[at++] = 9;
    at += b.write(`${changes[0]!.month}\t${changes.at(-1)!.month}\t`, at, 'latin1');
    b[at++] = 0x5c; // \\x: the bytea's hex form, its backslash escaped for COPY
    b[at++] = 0x5c;
    b[at++] = 0x78;
    for (const byte of packed) {
      b[at++] = HEX[byte >> 4]!;
      b[at++] = HEX[byte & 15]!;
    }
    b[at++] = 9;
    b[at++] = 0x7b; // {
    for (let i = 0; i < changes.length; i++) {
      if (i > 0) b[at++] = 0x2c;
      at += b.write(String(moveCode(changes[i]!.month, changes[i]!.movement)), at, 'latin1');
    }
    b[at++] = 0x7d; // }
    b[at++] = 10;
    this.at = at;
    this.count++;
  }

  /** Keeps the current buffer's lines and starts another, of room for at least `room` bytes. */
  private endChunk(room = CHUNK): void {
    if (this.at > 0) {
      this.chunks.push(this.chunk.subarray(0, this.at));
      this.held += this.at;
    }
    this.chunk = Buffer.allocUnsafe(Math.max(CHUNK, room));
    this.at = 0;
    if (this.held >= this.inMemory) this.spill();
  }

  private path: string | undefined;

  private spill(): void {
    if (this.fd === undefined) {
      this.path = join(tmpdir(), `dataset-service-customers-${process.pid}-${randomUUID()}`);
      this.fd = openSync(this.path, 'wx', 0o600);
    }
    for (const chunk of this.chunks) {
      writeSync(this.fd, chunk, 0, chunk.length, this.bytes);
      this.bytes += chunk.length;
    }
    this.chunks = [];
    this.held = 0;
  }

  /** The lines, once every customer is in. */
  done(): CustomerLines {
    this.endChunk(0);
    if (this.fd === undefined) return { chunks: this.chunks, bytes: this.held };
    this.spill();
    closeSync(this.fd);
    this.fd = undefined;
    return { path: this.path!, bytes: this.bytes };
  }

  /** Lets the file go (when done() was not called). */
  close(): void {
    if (this.fd !== undefined) closeSync(this.fd);
    this.fd = undefined;
    if (this.path !== undefined) rmSync(this.path, { force: true });
  }
}

/** Opens the lines to be read once: their file is deleted as it is opened (it goes when closed). */
export function readCustomerLines(lines: CustomerLines): Readable {
  if (lines.path === undefined) return Readable.from(lines.chunks);
  const fd = openSync(lines.path, 'r');
  discardCustomerLines(lines);
  return createReadStream('', { fd, autoClose: true });
}

/** Deletes the lines' file, if they have one (when they will not be stored). */
export function discardCustomerLines(lines: CustomerLines | undefined): void {
  if (lines?.path === undefined) return;
  rmSync(lines.path, { force: true });
  (lines as { path?: string }).path = undefined;
  (lines as { chunks?: string[] }).chunks = [];
}
