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
import { promisify } from 'node:util';
import { constants as zlib, zstdCompressSync, zstdDecompress } from 'node:zlib';
import { type CustomerMovement, type Movement, MOVEMENT_INDEX, MOVEMENTS } from './definitions.ts';
import type { Changes, CustomerChange, MetricsBook, SeriesBounds } from './book.ts';
import { cellsJson, fixedFraction } from './fxBasis.ts';
import { Q } from './exact.ts';
import { PackWriter } from './packing.ts';

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
export const moveCode = (month: number, movement: Movement): number => codeOf(month, MOVEMENT_INDEX[movement]);
const codeOf = (month: number, move: number) => month * 8 + move;

/** Where packChanges writes (kept for the next customer). */
const packer = new PackWriter();

/** Packs a customer's changes (at least one, in month order). */
export function packChanges(changes: Changes): Buffer {
  return Buffer.from(packInto(changes));
}

/** Packs a customer's changes as packChanges does, into bytes valid until the next call. */
function packInto(changes: Changes): Uint8Array {
  packer.reset();
  packer.byte(EXACT);
  let month = changes.month[0]!;
  for (let i = 0; i < changes.length; i++) {
    packer.varint((changes.month[i]! - month) * 8 + changes.move[i]!);
    // The numerator, doubled; odd when a denominator other than Q follows it.
    if (!changes.exact(i)) packer.varint(2 * changes.q[i]!);
    else if (changes.den[i] === Q) packer.unsigned(2n * changes.mrr[i]!);
    else {
      packer.unsigned(2n * changes.mrr[i]! + 1n);
      packer.unsigned(changes.den[i]!);
    }
    month = changes.month[i]!;
  }
  return packer.view();
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
 * The customers' changes of a version as COPY binary rows for version_customers: in memory, or,
 * past `inMemory` bytes (4 MiB by default), in a temporary file readable by the process's user only, named for whoever
 * stores them (a descriptor is the thread's that opened it): storing it, or discarding it, deletes it.
 */
export type CustomerLines = { chunks: Buffer[]; path?: undefined; bytes: number; streamed?: boolean } | { path: string; bytes: number; chunks?: undefined; streamed?: undefined };

/**
 * What a build stores of its monthly figures (see MetricsBook), as the tables keep them: each
 * month's figures per currency (version_series' months: the JSON of all but month and currency), each
 * currency's cohorts (version_cohorts: each cohort's JSON, comma-separated), the series' bounds,
 * each customer's changes as COPY lines, and the book's cells (version_fx: the start of its basis
 * for conversion, fxBasis.ts). Text, made where the book is: a tally thread hands the build a few
 * strings, not tens of thousands of objects that both threads would hold at once; the large ones
 * (the cohorts, the cells: megabytes at 10M rows) compressed (zstdBytes), which the thread
 * transfers (figuresBuffers) rather than copies, and PostgreSQL keeps as they are (sql/031).
 */
export type MonthlyFigures = {
  monthly: { month: string; currency: string; figures: string }[];
  /** Each currency's cohorts' JSON, comma-separated, compressed (zstdBytes). */
  cohorts: { currency: string; zstd: Uint8Array }[];
  bounds: SeriesBounds[];
  customers: CustomerLines;
  /** The cells' JSON (cellsJson), compressed (zstdBytes). */
  cellsZstd: Uint8Array;
};

/**
 * Text as UTF-8 bytes compressed by zstd at its fastest level, in a buffer of their own (never
 * Buffer's shared pool: it can be transferred). Megabytes of JSON in a few milliseconds, 7 to 11
 * times smaller (realistic rows: cohorts 3.8 MB to 0.36, cells 4.5 MB to 0.65, where PostgreSQL's
 * pglz made 0.8 and 1.6; sql/031).
 */
function zstdBytes(text: string): Uint8Array {
  return new Uint8Array(zstdCompressSync(Buffer.from(text), { params: { [zlib.ZSTD_c_compressionLevel]: 1 } }));
}

const zstdDecompressAsync = promisify(zstdDecompress);
/**
 * Decompressed off the event loop, in chunks about as large as the text (16 times its compressed
 * bytes, within 64 KiB and 8 MiB): zlib's default of 16 KiB made a cohorts read of 3.8 MB 235
 * callbacks and a concat, 19 ms where one of 4 MiB chunks takes 3.
 */
const zstdDecompressed = (zstd: Buffer): Promise<Buffer> => zstdDecompressAsync(zstd, { chunkSize: Math.min(Math.max(16 * zstd.length, 64 * 1024), 8 * 1024 * 1024) });

/** The text a column of the version's figures keeps: as text (versions built before sql/031), or compressed (zstdBytes). */
export async function storedText(text: string | null, zstd: Buffer | null): Promise<string | null> {
  if (text !== null) return text;
  return zstd === null ? null : (await zstdDecompressed(zstd)).toString();
}

/** storedText as UTF-8 bytes (decompressed bytes as they come: megabytes of cohorts are sent without being decoded and encoded again). */
export async function storedBytes(text: string | null, zstd: Buffer | null): Promise<Buffer | null> {
  if (text !== null) return Buffer.from(text);
  return zstd === null ? null : zstdDecompressed(zstd);
}

/** The buffers of the figures that a thread transfers with them (each its own: zstdBytes). */
export const figuresBuffers = (figures: MonthlyFigures): ArrayBuffer[] => [figures.cellsZstd, ...figures.cohorts.map((c) => c.zstd)].map((bytes) => bytes.buffer as ArrayBuffer);

/** Bytes as a Buffer, for a query's parameter (a Uint8Array once it came across threads). */
export const asBuffer = (bytes: Uint8Array): Buffer => Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);

/**
 * The book's figures once every customer is in, with the customers' lines written. `checkRoom`
 * (which throws when the thread's heap is near its limit) is called between the documents and
 * between cohorts: a book of many cohorts makes megabytes of them.
 */
export function monthlyFigures(book: MetricsBook, lines: CustomerLinesWriter, checkRoom: () => void = () => {}): MonthlyFigures {
  // The lines first: streamed, their COPY ends now, and the build indexes them while the documents are made.
  const customers = lines.done();
  checkRoom();
  book.settle(checkRoom);
  const monthly = book.monthly().map(({ month, currency, ...rest }) => ({ month, currency, figures: JSON.stringify(rest) }));
  checkRoom();
  const cohortsOf = new Map<string, string[]>();
  for (const cohort of book.eachCohort()) {
    checkRoom();
    let list = cohortsOf.get(cohort.currency);
    if (list === undefined) cohortsOf.set(cohort.currency, (list = []));
    list.push(JSON.stringify(cohort));
  }
  checkRoom();
  const cohorts = Array.from(cohortsOf, ([currency, list]) => ({ currency, zstd: zstdBytes(list.join(',')) }));
  checkRoom();
  return { monthly, cohorts, bounds: book.bounds(), customers, cellsZstd: zstdBytes(cellsJson(book.exactCells(fixedFraction))) };
}

// COPY's binary format (PostgreSQL, "COPY … (FORMAT binary)"): a signature, flags and no header
// extension; then each row as its field count and each field as its length and bytes; then -1.
// Binary, because the changes are bytes (the text format wrote them in hex, twice their size)
// and the names need no escaping: at 1M rows a third fewer bytes and no parsing.
const SIGNATURE = Buffer.from('PGCOPY\n\xff\r\n\0', 'latin1');
/** The start of a COPY binary stream: the signature, no flags, no header extension. */
export const COPY_HEADER: Readonly<Buffer> = Buffer.concat([SIGNATURE, Buffer.alloc(8)]);
const FIELDS = 7;
const INT4_OID = 23;
const CHUNK = 65_536;

/**
 * What of COPY's frame a writer's rows carry: all (the rows are the whole COPY); the trailer only
 * (whoever COPYs them writes the header first: a tally thread's, whose rows may share the COPY with
 * a helper's); none (a helper's: BookHelper, bookShare.ts).
 */
export type LinesFrame = 'whole' | 'trailer' | 'none';

/** Where streamed lines go: each buffer as it is filled, `last` with the one that ends them. */
export type LinesSink = (chunk: Buffer, last: boolean) => void;

/** Writes the rows into buffers of CHUNK bytes (a row that does not fit in one gets a buffer of its own), then to a file past `inMemory`. */
export class CustomerLinesWriter {
  private readonly versionId: Buffer;
  private chunks: Buffer[] = [];
  private chunk = Buffer.allocUnsafe(CHUNK);
  private at = 0;
  private held = 0;
  private fd: number | undefined;
  private bytes = 0;
  count = 0;

  private readonly inMemory: number;
  /** Where each full buffer goes at once, if anywhere (then nothing is held). */
  private readonly sink: LinesSink | undefined;

  private readonly frame: LinesFrame;

  /**
   * `sink`: takes each buffer as it is filled (the build COPYs it while the rest are written); else
   * they are held, then spilled. `frame`: what of COPY's header and trailer the rows carry.
   */
  constructor(versionId: string, inMemory = 4 * 1024 * 1024, sink?: LinesSink, frame: LinesFrame = 'whole') {
    this.versionId = Buffer.from(versionId);
    this.inMemory = inMemory;
    this.sink = sink;
    this.frame = frame;
    if (frame === 'whole') this.at = COPY_HEADER.copy(this.chunk, 0);
  }

  /** A customer's changes in a currency (at least one); the customer's name as a string or as its UTF-8 bytes. */
  add(currency: string, customer: string | Uint8Array, changes: Changes): void {
    const packed = packInto(changes);
    // At most: the field count, seven lengths, the version id, the currency and the name as UTF-8
    // (3 bytes a UTF-16 unit), two months, the packed bytes, and the array's header and elements.
    const most = 2 + 4 * FIELDS + this.versionId.length + 3 * (currency.length + customer.length) + 8 + packed.length + 20 + 8 * changes.length;
    if (this.at + most > this.chunk.length) this.endChunk(most);
    const b = this.chunk;
    let at = b.writeInt16BE(FIELDS, this.at);
    at = b.writeInt32BE(this.versionId.length, at);
    at += this.versionId.copy(b, at);
    at = this.text(b, at, currency);
    at = this.text(b, at, customer);
    at = b.writeInt32BE(4, at);
    at = b.writeInt32BE(changes.month[0]!, at);
    at = b.writeInt32BE(4, at);
    at = b.writeInt32BE(changes.month[changes.length - 1]!, at);
    at = b.writeInt32BE(packed.length, at);
    b.set(packed, at);
    at += packed.length;
    // int4[]: one dimension, no nulls, its length and lower bound 1, then each element.
    at = b.writeInt32BE(20 + 8 * changes.length, at);
    at = b.writeInt32BE(1, at);
    at = b.writeInt32BE(0, at);
    at = b.writeInt32BE(INT4_OID, at);
    at = b.writeInt32BE(changes.length, at);
    at = b.writeInt32BE(1, at);
    for (let i = 0; i < changes.length; i++) {
      at = b.writeInt32BE(4, at);
      at = b.writeInt32BE(codeOf(changes.month[i]!, changes.move[i]!), at);
    }
    this.at = at;
    this.count++;
  }

  /** A text field: its length, then its UTF-8 bytes. */
  private text(b: Buffer, at: number, value: string | Uint8Array): number {
    if (typeof value !== 'string') {
      b.writeInt32BE(value.length, at);
      b.set(value, at + 4);
      return at + 4 + value.length;
    }
    const length = b.write(value, at + 4, 'utf8');
    b.writeInt32BE(length, at);
    return at + 4 + length;
  }

  /** Keeps the current buffer's lines and starts another, of room for at least `room` bytes. */
  private endChunk(room = CHUNK, last = false): void {
    if (this.at > 0 && this.sink) {
      this.sink(this.chunk.subarray(0, this.at), last);
      this.bytes += this.at;
    } else if (this.at > 0) {
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

  /** The rows, once every customer is in (none: no bytes at all). */
  done(): CustomerLines {
    if (this.count === 0 && !this.sink) {
      this.close();
      return { chunks: [], bytes: 0 };
    }
    if (this.frame !== 'none') {
      if (this.at + 2 > this.chunk.length) this.endChunk(2);
      this.at = this.chunk.writeInt16BE(-1, this.at); // the end
    }
    this.endChunk(0, true);
    if (this.sink) return { chunks: [], bytes: this.bytes, streamed: true };
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
