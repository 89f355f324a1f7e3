// CSV records from a file's bytes, fed chunk by chunk: each record's cells are spans of bytes
// (Cells), never strings, so that a build copies a name's UTF-8 bytes straight from the file into
// its COPY row instead of decoding the file to text and encoding each cell again (reading 1M rows
// shaped like exports took half the time it took as text). Every character that matters to CSV (quote,
// delimiter, CR, LF) is one ASCII byte, which no multi-byte UTF-8 character holds: the bytes are
// read as csv-parse reads the text.
//
// A line without a quote (nearly every line of a real file) is split at its delimiters in place,
// its cells spans of the chunk; any other record goes through a small state machine that copies
// its cells' bytes, unquoted, into a buffer of its own, reading RFC 4180 quoting exactly as
// csv-parse does with the options the ingest used before (relax_quotes, relax_column_count,
// skip_records_with_error, no trimming):
//   - a quote opens a quoted field only at the start of a field; elsewhere it is a plain char;
//   - inside quotes, `""` is one quote; a quote followed by the delimiter, the record delimiter
//     or the end of the file closes the field; followed by anything else it closes the field too,
//     and the field keeps both quotes around its text (csv-parse's relax_quotes behaviour);
//   - a file that ends inside quotes ends with one malformed record (nothing more is read).
// The record delimiter is the first of CRLF, LF or CR met outside quotes, then fixed: in a CRLF
// file a lone LF is data, as in csv-parse. test/csvRecords.test.ts checks all of it against
// csv-parse itself.
//
// Whatever the input's shape, it is read in time linear in its size and memory bounded by the
// record cap: the state machine keeps its state between chunks, so a record spanning many chunks
// is never read again from its start, and a record longer than the cap (its bytes, without its
// record delimiter) is dropped as soon as it is known to be, its quoting still followed so that
// the next record starts where it should. It is then reported once, in its place.

import { isUtf8 } from 'node:buffer';
import { grown } from '../platform/typedArrays.ts';

const QUOTE = 34;
const LF = 10;
const CR = 13;

/** The contract's record cap: a record longer than this many bytes is not read. */
export const MAX_RECORD_BYTES = 1024 * 1024;

// The record delimiter.
const UNDECIDED = 0;
const RD_LF = 1;
const RD_CRLF = 2;
const RD_CR = 3;

// Where the state machine stands, between two bytes of a record.
/** At the start of a field: a quote here opens a quoted field. */
const FIELD_START = 0;
const UNQUOTED = 1;
const QUOTED = 2;
/** Inside quotes, just after a quote: `""` or the end of the quoted text. */
const QUOTE_SEEN = 3;
/** Just after a quoted field's closing quote. */
const CLOSED = 4;
/** Just after a CR outside quotes whose meaning the next byte decides (CR or CRLF, data or not). */
const CR_SEEN = 5;

/** A record's cells: cell i is `bytes[starts[i], ends[i])`, for i < count. */
export class Cells {
  bytes: Buffer = Buffer.alloc(0);
  starts: Int32Array<ArrayBuffer> = new Int32Array(16);
  ends: Int32Array<ArrayBuffer> = new Int32Array(16);
  count = 0;

  /** Cell i as text (bytes that are not UTF-8 as U+FFFD). */
  text(i: number): string {
    return this.bytes.toString('utf8', this.starts[i]!, this.ends[i]!);
  }

  /** Every cell as text. */
  texts(): string[] {
    return Array.from({ length: this.count }, (_, i) => this.text(i));
  }

  /** Every cell is UTF-8. */
  wellFormed(): boolean {
    for (let i = 0; i < this.count; i++) if (!isUtf8(this.bytes.subarray(this.starts[i]!, this.ends[i]!))) return false;
    return true;
  }

  /** Appends the cell `[start, end)`. */
  push(start: number, end: number): void {
    if (this.count === this.starts.length) {
      this.starts = grown(this.starts, this.count + 1);
      this.ends = grown(this.ends, this.count + 1);
    }
    this.starts[this.count] = start;
    this.ends[this.count++] = end;
  }
}

export type CsvSink = {
  /** A record's cells: the reader's own, valid during the call only (copy what is kept). */
  record(cells: Cells): void;
  /** A record csv-parse would skip with an error: only a quote still open at the end of the file. */
  malformed(reason: string): void;
  /** A record longer than the cap, in its place; nothing of it was kept. */
  overlong(): void;
};

export class CsvRecords {
  private readonly delimiter: number;
  private readonly sink: CsvSink;
  private readonly maxBytes: number;
  private rd = UNDECIDED;
  private stopped = false;
  /** The cells of each quote-free line: spans of the chunk. */
  private readonly lineCells = new Cells();

  // The record being read by the state machine, when one started in an earlier chunk or has not ended yet.
  private inRecord = false;
  private state = FIELD_START;
  /** Its cells: spans of its own buffer, `out`, which holds its bytes unquoted. */
  private readonly cells = new Cells();
  private out = Buffer.allocUnsafe(4096);
  /** Where the record's bytes end in `out`, and where the field being read starts. */
  private outEnd = 0;
  private fieldStart = 0;
  /** Where the record starts in the current chunk (0 when it began in an earlier one). */
  private segmentStart = 0;
  /** Bytes of the record in earlier chunks. */
  private earlierBytes = 0;
  /** Over the cap: its bytes are no longer kept, only its quoting followed. */
  private skipping = false;
  /** In CR_SEEN after a closing quote: if the CR turns out to be data, the field keeps its quotes. */
  private crAfterQuote = false;
  /** In CR_SEEN: the CR ended the previous chunk (so it is not among `earlierBytes`). */
  private crCarried = false;
  /** In CR_SEEN: where the CR is in the current chunk. */
  private crAt = 0;

  constructor(delimiter: string, sink: CsvSink, options: { maxRecordBytes?: number } = {}) {
    const code = delimiter.charCodeAt(0);
    if (delimiter.length !== 1 || code > 0x7f || code === QUOTE || code === LF || code === CR) {
      throw new Error(`unusable CSV delimiter ${JSON.stringify(delimiter)}`);
    }
    this.delimiter = code;
    this.sink = sink;
    this.maxBytes = options.maxRecordBytes ?? MAX_RECORD_BYTES;
    this.cells.bytes = this.out;
  }

  /** Reads every record that ends in `chunk`, and keeps the state of the one that does not. */
  push(chunk: Buffer): void {
    if (this.stopped) return;
    let pos = 0;
    while (pos < chunk.length) {
      if (!this.inRecord && this.rd !== UNDECIDED) {
        pos = this.lines(chunk, pos);
        if (pos >= chunk.length) break;
      }
      pos = this.record(chunk, pos);
      if (pos === -1) break;
    }
    if (this.inRecord) this.carry(chunk);
  }

  /** The end of the file: the last record may lack its line break, or its closing quote. */
  end(): void {
    if (this.stopped || !this.inRecord) return;
    if (this.state === QUOTED) {
      const overlong = this.skipping;
      this.stopped = true;
      this.reset();
      if (overlong) this.sink.overlong();
      else this.sink.malformed('the file ends inside a quoted value');
      return;
    }
    // A CR at the end of the file is a record delimiter unless the file's is CRLF.
    if (this.state === CR_SEEN && this.rd === RD_CRLF) this.crIsData();
    this.endRecord(0);
  }

  /**
   * Records of the whole quote-free lines of `chunk` from `pos`, each split at its delimiters in
   * place; returns where the first line not read starts (one with a quote, or cut by the chunk's end).
   */
  private lines(chunk: Buffer, pos: number): number {
    const n = chunk.length;
    const d = this.delimiter;
    const crlf = this.rd === RD_CRLF;
    const stop = this.rd === RD_LF ? LF : CR; // the record delimiter's first byte
    const rdLength = crlf ? 2 : 1;
    const cells = this.lineCells;
    cells.bytes = chunk;
    for (;;) {
      cells.count = 0;
      let start = pos;
      let i = pos;
      for (;;) {
        let c = 0;
        for (; i < n; i++) {
          c = chunk[i]!;
          if (c === d || c === stop || c === QUOTE) break;
        }
        if (i >= n || c === QUOTE) return pos;
        if (c === d) {
          cells.push(start, i);
          start = ++i;
          continue;
        }
        if (crlf) {
          if (i + 1 >= n) return pos; // undecided until the next chunk
          if (chunk[i + 1] !== LF) {
            i++; // a CR without LF is data
            continue;
          }
        }
        break;
      }
      cells.push(start, i);
      if (i - pos > this.maxBytes) this.sink.overlong();
      else this.sink.record(cells);
      pos = i + rdLength;
      if (pos >= n) return pos;
    }
  }

  /** Makes room in `out` for `more` bytes past its end. */
  private room(more: number): void {
    const need = this.outEnd + more;
    if (need <= this.out.length) return;
    // A Buffer (cells are read back as text), which grown() would make with the deprecated new Buffer().
    const out = Buffer.allocUnsafe(Math.max(need, this.out.length * 2));
    this.out.copy(out, 0, 0, this.outEnd);
    this.out = out;
    this.cells.bytes = out;
  }

  /** Appends `chunk[from, to)` to the record's bytes. */
  private append(chunk: Buffer, from: number, to: number): void {
    this.room(to - from);
    const out = this.out;
    let o = this.outEnd;
    if (to - from > 32) {
      chunk.copy(out, o, from, to);
      o += to - from;
    } else for (let i = from; i < to; i++) out[o++] = chunk[i]!;
    this.outEnd = o;
  }

  private appendByte(byte: number): void {
    this.room(1);
    this.out[this.outEnd++] = byte;
  }

  /** relax_quotes: the field being read keeps the quotes it had around its text. */
  private requote(): void {
    this.room(2);
    const { out, fieldStart } = this;
    out.copyWithin(fieldStart + 1, fieldStart, this.outEnd);
    out[fieldStart] = QUOTE;
    out[this.outEnd + 1] = QUOTE;
    this.outEnd += 2;
  }

  /**
   * Reads one record from `pos` (or goes on with the one in progress) byte by byte, its runs of
   * plain bytes copied at once; returns where the next record starts, or -1 when the chunk ends
   * first (the state is kept for the next chunk).
   */
  private record(chunk: Buffer, pos: number): number {
    if (!this.inRecord) {
      this.inRecord = true;
      this.segmentStart = pos;
    }
    const d = this.delimiter;
    const keep = !this.skipping;
    const len = chunk.length;
    let state = this.state;
    let i = pos;
    while (i < len) {
      switch (state) {
        case FIELD_START:
          if (chunk[i] === QUOTE) {
            state = QUOTED;
            i++;
          } else state = UNQUOTED;
          continue;
        case UNQUOTED: {
          // Which line-break bytes can end (or start ending) a record here.
          const rd = this.rd;
          const stopLf = rd === UNDECIDED || rd === RD_LF ? LF : -1;
          const stopCr = rd === RD_LF ? -1 : CR;
          const from = i;
          let c = 0;
          for (; i < len; i++) {
            c = chunk[i]!;
            if (c === d || c === stopLf || c === stopCr) break;
          }
          if (keep && i > from) this.append(chunk, from, i);
          if (i >= len) continue;
          if (c === d) {
            this.endField();
            state = FIELD_START;
            i++;
            continue;
          }
          if (c === LF) return this.lineBreak(i, RD_LF);
          if (rd === RD_CR) return this.lineBreak(i, RD_CR);
          state = CR_SEEN;
          this.crAfterQuote = false;
          this.crAt = i++;
          continue;
        }
        case QUOTED: {
          const from = i;
          while (i < len && chunk[i] !== QUOTE) i++;
          if (keep && i > from) this.append(chunk, from, i);
          if (i >= len) continue;
          i++;
          state = QUOTE_SEEN;
          continue;
        }
        case QUOTE_SEEN:
          if (chunk[i] === QUOTE) {
            if (keep) this.appendByte(QUOTE);
            i++;
            state = QUOTED;
          } else state = CLOSED;
          continue;
        case CLOSED: {
          const c = chunk[i];
          const rd = this.rd;
          if (c === d) {
            state = UNQUOTED; // read there: it ends the field
            continue;
          }
          if (c === LF && (rd === UNDECIDED || rd === RD_LF)) return this.lineBreak(i, RD_LF);
          if (c === CR && rd === RD_CR) return this.lineBreak(i, RD_CR);
          if (c === CR && rd !== RD_LF) {
            state = CR_SEEN;
            this.crAfterQuote = rd === RD_CRLF; // undecided: a CR ends the record whatever follows
            this.crAt = i++;
            continue;
          }
          if (keep) this.requote();
          state = UNQUOTED;
          continue;
        }
        case CR_SEEN: {
          const lf = chunk[i] === LF;
          const crEnd = this.crCarried ? 0 : this.crAt;
          if (this.rd === UNDECIDED) {
            this.rd = lf ? RD_CRLF : RD_CR;
            this.endRecord(crEnd);
            return lf ? i + 1 : i;
          }
          // The file's record delimiter is CRLF: a CR without LF is data.
          if (lf) {
            this.endRecord(crEnd);
            return i + 1;
          }
          this.crIsData();
          state = UNQUOTED;
          continue;
        }
      }
    }
    this.state = state;
    return -1;
  }

  /** The field being read ends: a cell. */
  private endField(): void {
    if (this.skipping) return;
    this.cells.push(this.fieldStart, this.outEnd);
    this.fieldStart = this.outEnd;
  }

  /** A line break at `i` that ends the record (deciding the record delimiter if it was not). */
  private lineBreak(i: number, rd: number): number {
    if (this.rd === UNDECIDED) this.rd = rd;
    this.endRecord(i);
    return i + 1;
  }

  /** The CR of CR_SEEN is data after all (CRLF file, no LF after it). */
  private crIsData(): void {
    if (this.crCarried) {
      this.earlierBytes += 1;
      this.crCarried = false;
    }
    if (this.skipping) return;
    if (this.crAfterQuote) this.requote();
    this.appendByte(CR);
  }

  /** The record ends at `end` in the current chunk (where its record delimiter starts): to the sink. */
  private endRecord(end: number): void {
    const overlong = this.skipping || this.tooLong(this.segmentStart, end);
    this.endField();
    const cells = this.cells;
    this.reset();
    if (overlong) this.sink.overlong();
    else this.sink.record(cells);
    cells.count = 0;
  }

  private reset(): void {
    this.inRecord = false;
    this.state = FIELD_START;
    this.outEnd = 0;
    this.fieldStart = 0;
    this.earlierBytes = 0;
    this.skipping = false;
    this.crCarried = false;
  }

  /** Is the record (its bytes in earlier chunks, then the current chunk's [from, to)) longer than the cap? */
  private tooLong(from: number, to: number): boolean {
    return this.earlierBytes + (to - from) > this.maxBytes;
  }

  /** The chunk ends inside a record: count its bytes so far, and drop them once it is too long. */
  private carry(chunk: Buffer): void {
    let end = chunk.length;
    if (this.state === CR_SEEN && !this.crCarried) {
      // The CR may be the start of the record delimiter: counted only if it turns out to be data.
      end = this.crAt;
      this.crCarried = true;
    }
    if (!this.skipping && this.tooLong(this.segmentStart, end)) {
      this.skipping = true;
      this.cells.count = 0;
      this.outEnd = 0;
      this.fieldStart = 0;
    }
    if (!this.skipping) this.earlierBytes += end - this.segmentStart;
    this.segmentStart = 0;
  }
}
