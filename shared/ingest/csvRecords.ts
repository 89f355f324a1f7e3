// CSV records from decoded text, fed chunk by chunk. A line without a quote character (nearly
// every line of a real file) is split at its delimiters; a line with one goes through a small
// state machine that reads RFC 4180 quoting exactly as csv-parse does with the options the
// ingest used before (relax_quotes, relax_column_count, skip_records_with_error, no trimming):
//   - a quote opens a quoted field only at the start of a field; elsewhere it is a plain char;
//   - inside quotes, `""` is one quote; a quote followed by the delimiter, the record delimiter
//     or the end of the file closes the field; followed by anything else it closes the field too,
//     and the field keeps both quotes around its text (csv-parse's relax_quotes behaviour);
//   - a file that ends inside quotes ends with one malformed record (nothing more is read).
// The record delimiter is the first of CRLF, LF or CR met outside quotes, then fixed: in a CRLF
// file a lone LF is data, as in csv-parse. test/csvRecords.test.ts checks all of it against
// csv-parse itself.

const QUOTE = '"';

export type CsvSink = {
  record(cells: string[]): void;
  /** A record csv-parse would skip with an error: only a quote still open at the end of the file. */
  malformed(reason: string): void;
};

export class CsvRecords {
  private readonly delimiter: string;
  private readonly sink: CsvSink;
  /** Undecided until the first line break outside quotes. */
  private rd: string | undefined;
  private rest = '';
  private stopped = false;

  constructor(delimiter: string, sink: CsvSink) {
    this.delimiter = delimiter;
    this.sink = sink;
  }

  /** Reads every complete record in `text` (appended to what is left of earlier chunks). */
  push(text: string): void {
    if (this.stopped) return;
    const buf = this.rest.length === 0 ? text : this.rest + text;
    this.rest = buf.slice(this.read(buf, false));
  }

  /** The end of the file: the last record may lack its line break. */
  end(): void {
    if (this.stopped) return;
    const buf = this.rest;
    this.rest = '';
    this.read(buf, true);
  }

  /** Reads records from `buf`; returns where the unread (incomplete) rest starts. */
  private read(buf: string, eof: boolean): number {
    let pos = 0;
    while (pos < buf.length) {
      const rd = this.rd;
      if (rd !== undefined) {
        // The fast path: every whole line before the next quote.
        const quoteAt = buf.indexOf(QUOTE, pos);
        pos = splitLines(buf, pos, quoteAt === -1 ? buf.length : quoteAt, rd, this.delimiter, this.sink);
        if (pos >= buf.length) return pos;
        if (quoteAt === -1) {
          // The rest has no line break: a last line without one, or the start of the next.
          if (!eof) return pos;
          this.sink.record(buf.slice(pos).split(this.delimiter));
          return buf.length;
        }
      }
      const next = this.quoted(buf, pos, eof);
      if (next === -1) return pos; // needs more text
      if (this.stopped) return buf.length;
      pos = next;
    }
    return pos;
  }

  /** Is a record delimiter at `i`? Before one is known: any line break, which becomes it. */
  private delimiterAt(buf: string, i: number, eof: boolean, decide: boolean): number {
    if (this.rd !== undefined) return buf.startsWith(this.rd, i) ? this.rd.length : 0;
    const c = buf.charCodeAt(i);
    if (c === 10) return this.decided('\n', decide);
    if (c !== 13) return 0;
    if (i + 1 >= buf.length && !eof) return -1; // CR at the end of a chunk: CRLF or CR?
    return this.decided(buf.charCodeAt(i + 1) === 10 ? '\r\n' : '\r', decide);
  }

  private decided(rd: string, decide: boolean): number {
    if (decide) this.rd = rd;
    return rd.length;
  }

  /**
   * One record read character by character from `start`; returns where the next one starts, or
   * -1 when the text ends before the record does (and more text will come).
   */
  private quoted(buf: string, start: number, eof: boolean): number {
    const { delimiter } = this;
    const cells: string[] = [];
    let field = '';
    let quoting = false;
    let i = start;
    for (;;) {
      if (i >= buf.length) {
        if (!eof) return -1;
        if (quoting) {
          this.stopped = true;
          this.sink.malformed('the file ends inside a quoted value');
          return buf.length;
        }
        cells.push(field);
        this.sink.record(cells);
        return buf.length;
      }
      const c = buf[i]!;
      if (quoting) {
        if (c !== QUOTE) {
          field += c;
          i++;
          continue;
        }
        if (i + 1 >= buf.length && !eof) return -1;
        if (buf[i + 1] === QUOTE) {
          field += QUOTE;
          i += 2;
          continue;
        }
        quoting = false;
        if (i + 1 < buf.length && buf[i + 1] !== delimiter) {
          const rd = this.delimiterAt(buf, i + 1, eof, false);
          if (rd === -1) return -1;
          // relax_quotes: the field goes on unquoted, its text between the quotes it had
          if (rd === 0) field = QUOTE + field + QUOTE;
        }
        i++;
        continue;
      }
      if (c === QUOTE && field.length === 0) {
        quoting = true;
        i++;
        continue;
      }
      const rd = this.delimiterAt(buf, i, eof, true);
      if (rd === -1) return -1;
      if (rd > 0) {
        cells.push(field);
        this.sink.record(cells);
        return i + rd;
      }
      if (c === delimiter) {
        cells.push(field);
        field = '';
      } else {
        field += c;
      }
      i++;
    }
  }
}

/**
 * Records of the quote-free lines of buf starting at `pos` whose line break comes before `limit`,
 * each split at its delimiters; returns where the first line not read starts. (A small function
 * of its own: V8 optimizes it alike on every run.)
 */
function splitLines(buf: string, pos: number, limit: number, rd: string, delimiter: string, sink: CsvSink): number {
  for (;;) {
    const lineEnd = buf.indexOf(rd, pos);
    if (lineEnd === -1 || lineEnd >= limit) return pos;
    const cells: string[] = [];
    for (let at = pos; ; ) {
      const next = buf.indexOf(delimiter, at);
      if (next === -1 || next >= lineEnd) {
        cells.push(buf.slice(at, lineEnd));
        break;
      }
      cells.push(buf.slice(at, next));
      at = next + 1;
    }
    sink.record(cells);
    pos = lineEnd + rd.length;
  }
}
