// Rows for `COPY … FROM STDIN (FORMAT binary)`, written field by field into a buffer and handed
// over in batches of about 256 KiB (each becomes a CopyData message and two socket writes: 64 KiB
// batches cost the build 3-5% more, measured end to end on 1M rows). Binary spares PostgreSQL
// parsing every date, number and escape (its COPY is ~25% cheaper than text here), and spares
// Node building a string per row.
// Format: https://www.postgresql.org/docs/current/sql-copy.html#id-1.9.3.55.9.4

const SIGNATURE = Buffer.from('PGCOPY\n\xff\r\n\0', 'latin1');
const BATCH_BYTES = 256 * 1024;
/** A buffer's size: a batch plus room for the row that crosses the batch's size (longer rows get their own). */
const BUFFER_BYTES = BATCH_BYTES + 8 * 1024;
/** Released buffers kept for reuse: a few batches are in flight at once (the sink's, the socket's). */
const MAX_SPARE = 4;
/** Days from 1970-01-01 to 2000-01-01, PostgreSQL's date epoch. */
const PG_EPOCH_DAYS = 10_957;
const NUMERIC_POS = 0x0000;

export class BinaryCopyWriter {
  private buf = Buffer.allocUnsafe(BUFFER_BYTES);
  // Integers go through a DataView of the same bytes: the compiler inlines its writes, where
  // Buffer's writeInt32BE and kin check their arguments on every call (a few % of a build).
  private view = new DataView(this.buf.buffer, this.buf.byteOffset, this.buf.byteLength);
  private at = 0;
  private readonly groups = new Int32Array(8);
  private readonly batches: Buffer[] = [];
  /** Buffers of batches released, to be written again. */
  private readonly spare: Buffer<ArrayBuffer>[] = [];

  constructor() {
    SIGNATURE.copy(this.buf, 0);
    this.view.setInt32(SIGNATURE.length, 0); // flags
    this.view.setInt32(SIGNATURE.length + 4, 0); // header extension length
    this.at = SIGNATURE.length + 8;
  }

  /** The buffer the current row is written to, and where the next value goes in it: a value's bytes can be read back (the tally's names). */
  get buffer(): Buffer {
    return this.buf;
  }

  get offset(): number {
    return this.at;
  }

  /** Starts a row of `fields` fields; makes room for a row of up to `maxBytes`. */
  row(fields: number, maxBytes: number): void {
    if (this.at + maxBytes + 2 > this.buf.length) this.cut(maxBytes + 2);
    this.view.setInt16(this.at, fields);
    this.at += 2;
  }

  null(): void {
    this.view.setInt32(this.at, -1);
    this.at += 4;
  }

  /** A text value: its UTF-8 bytes `source[start, end)` (room for them was made by row()). */
  text(source: Uint8Array, start: number, end: number): void {
    const n = end - start;
    let out = this.at + 4;
    this.view.setInt32(this.at, n);
    // Cells are short: a loop copies them faster than a call to copy() would.
    if (n > 64) this.buf.set(source.subarray(start, end), out);
    else for (let i = start; i < end; i++) this.buf[out++] = source[i]!;
    this.at += 4 + n;
  }

  /** Pre-encoded bytes (a value repeated on every row). */
  bytes(value: Buffer): void {
    this.view.setInt32(this.at, value.length);
    this.buf.set(value, this.at + 4);
    this.at += 4 + value.length;
  }

  /** A bigint from 0 to 2^53. */
  int8(value: number): void {
    this.view.setInt32(this.at, 8);
    this.view.setUint32(this.at + 4, Math.floor(value / 4294967296));
    this.view.setUint32(this.at + 8, value >>> 0);
    this.at += 12;
  }

  /** A date given as days since 1970-01-01 (NaN: null). */
  date(day: number): void {
    if (day !== day) return this.null();
    this.view.setInt32(this.at, 4);
    this.view.setInt32(this.at + 4, day - PG_EPOCH_DAYS);
    this.at += 8;
  }

  /**
   * A non-negative decimal given as the ASCII digits `source[start, end)`, with an optional `.` and
   * one or two decimals (as the validator accepts it), as numeric: base-10000 digits, weight,
   * sign, display scale 2.
   */
  numeric(source: Uint8Array, start: number, end: number): void {
    let dot = start;
    while (dot < end && source[dot] !== 46) dot++;
    const intEnd = dot;
    let first = start;
    while (first < intEnd - 1 && source[first] === 48) first++; // leading zeros
    const intDigits = intEnd - first;
    const groups = intDigits === 1 && source[first] === 48 ? 0 : Math.ceil(intDigits / 4);
    let fraction = 0;
    if (dot < end) fraction = (source[dot + 1]! - 48) * 1000 + (dot + 2 < end ? (source[dot + 2]! - 48) * 100 : 0);
    let out = this.numericHead(groups, fraction);
    // Integer groups, most significant first; the first may have fewer than 4 digits.
    let i = first;
    let width = intDigits - (groups - 1) * 4;
    for (let g = 0; g < groups; g++) {
      let group = 0;
      for (const groupEnd = i + width; i < groupEnd; i++) group = group * 10 + (source[i]! - 48);
      this.view.setInt16(out, group);
      out += 2;
      width = 4;
    }
    if (fraction !== 0) {
      this.view.setInt16(out, fraction);
      out += 2;
    }
    this.at = out;
  }

  /** A non-negative amount given in cents (an integer up to 2^53), as numeric with display scale 2 (as numeric() writes it). */
  numericCents(cents: number): void {
    let whole = Math.floor(cents / 100);
    const fraction = (cents - whole * 100) * 100; // the first base-10000 digit after the point
    // The whole part's base-10000 digits, least significant first (at most four below 2^53 ÷ 100).
    const groups = this.groups;
    let count = 0;
    while (whole > 0) {
      const next = Math.floor(whole / 10000);
      groups[count++] = whole - next * 10000;
      whole = next;
    }
    let out = this.numericHead(count, fraction);
    for (let g = count - 1; g >= 0; g--) {
      this.view.setInt16(out, groups[g]!);
      out += 2;
    }
    if (fraction !== 0) {
      this.view.setInt16(out, fraction);
      out += 2;
    }
    this.at = out;
  }

  /**
   * A numeric's head, for `groups` base-10000 digits before the point and the first after it
   * (`fraction`, written only when not 0): length, digit count, weight, sign, display scale 2.
   * Returns where the digits go.
   */
  private numericHead(groups: number, fraction: number): number {
    const digits = groups + (fraction === 0 ? 0 : 1);
    const at = this.at;
    this.view.setInt32(at, 8 + digits * 2);
    this.view.setInt16(at + 4, digits);
    this.view.setInt16(at + 6, groups === 0 ? (fraction === 0 ? 0 : -1) : groups - 1); // weight
    this.view.setInt16(at + 8, NUMERIC_POS);
    this.view.setInt16(at + 10, 2); // display scale
    return at + 12;
  }

  /** Batches of at least BATCH_BYTES written so far. */
  take(): Buffer[] {
    if (this.at >= BATCH_BYTES) this.cut(0);
    return this.batches.splice(0);
  }

  /** Everything left, with the end-of-data marker. */
  finish(): Buffer[] {
    this.row(-1, 0);
    this.cut(0);
    return this.batches.splice(0);
  }

  /**
   * A batch handed over by take() whose bytes were sent (its sink called back): its buffer is
   * written again. A build that let its batches go left them to the collector, which, with
   * little else allocated on the heap, freed them tens of MiB late (a 10M-row build's worker
   * grew by 20 MiB).
   */
  release(batch: Buffer): void {
    const { buffer } = batch;
    if (!(buffer instanceof ArrayBuffer) || batch.byteOffset !== 0 || buffer.byteLength !== BUFFER_BYTES || this.spare.length >= MAX_SPARE || buffer === this.buf.buffer) return;
    this.spare.push(Buffer.from(buffer, 0, BUFFER_BYTES));
  }

  /** Hands over what is written and starts a new buffer with room for `need` more bytes. */
  private cut(need: number): void {
    if (this.at > 0) this.batches.push(this.buf.subarray(0, this.at));
    this.buf = (need <= BUFFER_BYTES ? this.spare.pop() : undefined) ?? Buffer.allocUnsafe(Math.max(BUFFER_BYTES, need));
    this.view = new DataView(this.buf.buffer, this.buf.byteOffset, this.buf.byteLength);
    this.at = 0;
  }
}
