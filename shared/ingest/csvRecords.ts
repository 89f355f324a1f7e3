// CSV records from decoded text, fed chunk by chunk. A line without a quote character (nearly
// every line of a real file) is split at its delimiters; any other record goes through a small
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
//
// Whatever the input's shape, it is read in time linear in its size and memory bounded by the
// record cap: the state machine keeps its state between chunks, so a record spanning many chunks
// is never read again from its start, and a record longer than the cap (its UTF-8 bytes, without
// its record delimiter) is dropped as soon as it is known to be, its quoting still followed so
// that the next record starts where it should. It is then reported once, in its place.

const QUOTE = '"';
const QUOTE_CODE = 34;
const LF = 10;
const CR = 13;

/** The contract's record cap: a record longer than this many bytes is not read. */
export const MAX_RECORD_BYTES = 1024 * 1024;

// Where the state machine stands, between two characters of a record.
/** At the start of a field: a quote here opens a quoted field. */
const FIELD_START = 0;
const UNQUOTED = 1;
const QUOTED = 2;
/** Inside quotes, just after a quote: `""` or the end of the quoted text. */
const QUOTE_SEEN = 3;
/** Just after a quoted field's closing quote. */
const CLOSED = 4;
/** Just after a CR outside quotes whose meaning the next character decides (CR or CRLF, data or not). */
const CR_SEEN = 5;

export type CsvSink = {
  /** A record's cells: the array is the reader's own, valid during the call only (copy what is kept). */
  record(cells: string[]): void;
  /** A record csv-parse would skip with an error: only a quote still open at the end of the file. */
  malformed(reason: string): void;
  /** A record longer than the cap, in its place; nothing of it was kept. */
  overlong(): void;
};

export class CsvRecords {
  private readonly delimiter: string;
  private readonly delimiterCode: number;
  private readonly sink: CsvSink;
  private readonly maxBytes: number;
  /** Records of at most this many UTF-16 units are within the cap whatever their characters (3 bytes at most per unit). */
  private readonly surelyShort: number;
  /** Undecided until the first line break outside quotes. */
  private rd: string | undefined;
  private stopped = false;
  /** The cells of each quote-free line, one array for them all: an array per row was half of what a build allocated. */
  private readonly lineCells: string[] = [];

  // The record being read, when one started in an earlier chunk or has not ended yet.
  private inRecord = false;
  private state = FIELD_START;
  private cells: string[] = [];
  private field = '';
  /** Where the record's text starts in the current chunk (0 when it began in an earlier one). */
  private segmentStart = 0;
  /** UTF-8 bytes of the record in earlier chunks. */
  private earlierBytes = 0;
  /** Over the cap: its text is no longer kept, only its quoting followed. */
  private skipping = false;
  /** In CR_SEEN after a closing quote: if the CR turns out to be data, the field keeps its quotes. */
  private crAfterQuote = false;
  /** In CR_SEEN: the CR ended the previous chunk (so it is not among `earlierBytes`). */
  private crCarried = false;
  /** In CR_SEEN: where the CR is in the current chunk. */
  private crAt = 0;

  constructor(delimiter: string, sink: CsvSink, options: { maxRecordBytes?: number } = {}) {
    if (delimiter.length !== 1 || delimiter === QUOTE || delimiter === '\n' || delimiter === '\r') {
      throw new Error(`unusable CSV delimiter ${JSON.stringify(delimiter)}`);
    }
    this.delimiter = delimiter;
    this.delimiterCode = delimiter.charCodeAt(0);
    this.sink = sink;
    this.maxBytes = options.maxRecordBytes ?? MAX_RECORD_BYTES;
    this.surelyShort = Math.floor(this.maxBytes / 3);
  }

  /**
   * Reads every record that ends in `text`, and keeps the state of the one that does not. Chunks
   * are cut between characters, as a decoder hands them out (a surrogate pair cut in two would be
   * counted as six bytes instead of four).
   */
  push(text: string): void {
    if (this.stopped) return;
    let pos = 0;
    let quoteAt = -2; // not looked for yet
    while (pos < text.length) {
      if (!this.inRecord && this.rd !== undefined) {
        // The fast path: every whole line before the next quote.
        if (quoteAt !== -1 && quoteAt < pos) quoteAt = text.indexOf(QUOTE, pos);
        pos = this.lines(text, pos, quoteAt === -1 ? text.length : quoteAt);
        if (pos >= text.length) break;
      }
      pos = this.record(text, pos);
      if (pos === -1) break;
    }
    if (this.inRecord) this.carry(text);
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
    if (this.state === CR_SEEN && this.rd === '\r\n') this.crIsData();
    this.endRecord(this.field, 0);
  }

  /**
   * Records of the quote-free lines of `text` from `pos` whose line break comes before `limit`;
   * returns where the first line not read starts.
   */
  private lines(text: string, pos: number, limit: number): number {
    for (;;) {
      pos = splitLines(text, pos, limit, this.rd!, this.delimiter, this.surelyShort, this.sink, this.lineCells);
      const lineEnd = text.indexOf(this.rd!, pos);
      if (lineEnd === -1 || lineEnd >= limit) return pos;
      // A line long enough to be over the cap, perhaps.
      if (this.tooLong(text, pos, lineEnd)) this.sink.overlong();
      else this.sink.record(text.slice(pos, lineEnd).split(this.delimiter));
      pos = lineEnd + this.rd!.length;
    }
  }

  /**
   * Reads one record from `pos` (or goes on with the one in progress) character by character,
   * its runs of plain text in slices; returns where the next record starts, or -1 when the text
   * ends first (the state is kept for the next chunk).
   */
  private record(text: string, pos: number): number {
    if (!this.inRecord) {
      this.inRecord = true;
      this.segmentStart = pos;
    }
    const d = this.delimiterCode;
    const keep = !this.skipping;
    const len = text.length;
    let state = this.state;
    let field = this.field;
    let i = pos;
    while (i < len) {
      switch (state) {
        case FIELD_START:
          if (text.charCodeAt(i) === QUOTE_CODE) {
            state = QUOTED;
            i++;
          } else state = UNQUOTED;
          continue;
        case UNQUOTED: {
          // Which line-break characters can end (or start ending) a record here.
          const rd = this.rd;
          const stopLf = rd === undefined || rd === '\n' ? LF : -1;
          const stopCr = rd === '\n' ? -1 : CR;
          const from = i;
          let c = 0;
          for (; i < len; i++) {
            c = text.charCodeAt(i);
            if (c === d || c === stopLf || c === stopCr) break;
          }
          if (keep && i > from) field += text.slice(from, i);
          if (i >= len) continue;
          if (c === d) {
            if (keep) this.cells.push(field);
            field = '';
            state = FIELD_START;
            i++;
            continue;
          }
          if (c === LF) return this.lineBreak(field, text, i, '\n');
          if (rd === '\r') return this.lineBreak(field, text, i, '\r');
          state = CR_SEEN;
          this.crAfterQuote = false;
          this.crAt = i++;
          continue;
        }
        case QUOTED: {
          const at = text.indexOf(QUOTE, i);
          if (at === -1) {
            if (keep) field += text.slice(i);
            i = len;
            continue;
          }
          if (keep) field += text.slice(i, at);
          i = at + 1;
          state = QUOTE_SEEN;
          continue;
        }
        case QUOTE_SEEN:
          if (text.charCodeAt(i) === QUOTE_CODE) {
            if (keep) field += QUOTE;
            i++;
            state = QUOTED;
          } else state = CLOSED;
          continue;
        case CLOSED: {
          const c = text.charCodeAt(i);
          const rd = this.rd;
          if (c === d) {
            state = UNQUOTED; // read there: it ends the field
            continue;
          }
          if (c === LF && (rd === undefined || rd === '\n')) return this.lineBreak(field, text, i, '\n');
          if (c === CR && rd === '\r') return this.lineBreak(field, text, i, '\r');
          if (c === CR && rd !== '\n') {
            state = CR_SEEN;
            this.crAfterQuote = rd === '\r\n'; // undecided: a CR ends the record whatever follows
            this.crAt = i++;
            continue;
          }
          // relax_quotes: the field goes on unquoted, its text between the quotes it had
          if (keep) field = QUOTE + field + QUOTE;
          state = UNQUOTED;
          continue;
        }
        case CR_SEEN: {
          const lf = text.charCodeAt(i) === LF;
          const crEnd = this.crCarried ? 0 : this.crAt;
          if (this.rd === undefined) {
            this.rd = lf ? '\r\n' : '\r';
            this.endRecord(field, crEnd, text);
            return lf ? i + 1 : i;
          }
          // The file's record delimiter is CRLF: a CR without LF is data.
          if (lf) {
            this.endRecord(field, crEnd, text);
            return i + 1;
          }
          this.field = field;
          this.crIsData();
          field = this.field;
          state = UNQUOTED;
          continue;
        }
      }
    }
    this.state = state;
    this.field = field;
    return -1;
  }

  /** A line break at `i` that ends the record (deciding the record delimiter if it was not). */
  private lineBreak(field: string, text: string, i: number, rd: string): number {
    this.rd ??= rd;
    this.endRecord(field, i, text);
    return i + 1;
  }

  /** The CR of CR_SEEN is data after all (CRLF file, no LF after it). */
  private crIsData(): void {
    if (this.crCarried) {
      this.earlierBytes += 1;
      this.crCarried = false;
    }
    if (this.skipping) return;
    if (this.crAfterQuote) this.field = QUOTE + this.field + QUOTE;
    this.field += '\r';
  }

  /** The record ends at `end` in `text` (where its record delimiter starts): to the sink. */
  private endRecord(field: string, end: number, text = ''): void {
    const overlong = this.skipping || this.tooLong(text, this.segmentStart, end);
    const cells = this.cells;
    cells.push(field);
    this.reset();
    if (overlong) this.sink.overlong();
    else this.sink.record(cells);
  }

  private reset(): void {
    this.inRecord = false;
    this.state = FIELD_START;
    this.cells = [];
    this.field = '';
    this.earlierBytes = 0;
    this.skipping = false;
    this.crCarried = false;
  }

  /** Is the record (its bytes in earlier chunks, then text[from, to)) longer than the cap? */
  private tooLong(text: string, from: number, to: number): boolean {
    const units = to - from;
    const before = this.earlierBytes;
    if (before + units > this.maxBytes) return true; // at least a byte a unit
    if (before + 3 * units <= this.maxBytes) return false; // at most three
    return before + Buffer.byteLength(text.slice(from, to)) > this.maxBytes;
  }

  /** The chunk ends inside a record: count its bytes so far, and drop its text once it is too long. */
  private carry(text: string): void {
    let end = text.length;
    if (this.state === CR_SEEN && !this.crCarried) {
      // The CR may be the start of the record delimiter: counted only if it turns out to be data.
      end = this.crAt;
      this.crCarried = true;
    }
    if (!this.skipping && this.tooLong(text, this.segmentStart, end)) {
      this.skipping = true;
      this.cells = [];
      this.field = '';
    }
    if (!this.skipping) this.earlierBytes += Buffer.byteLength(text.slice(this.segmentStart, end));
    this.segmentStart = 0;
  }
}

/**
 * Records of the quote-free lines of `text` from `pos` whose line break comes before `limit`, each
 * split at its delimiters into `cells` (reused line after line), up to the first line longer than
 * `longest` UTF-16 units; returns where the first line not read starts. (A small function of its
 * own: V8 optimizes it alike on every run. The next delimiter is looked for once, not once a line:
 * a chunk of lines without one would be searched to its end on every line.)
 */
function splitLines(text: string, pos: number, limit: number, rd: string, delimiter: string, longest: number, sink: CsvSink, cells: string[]): number {
  let nextDelimiter = -2; // not looked for yet
  for (;;) {
    const lineEnd = text.indexOf(rd, pos);
    if (lineEnd === -1 || lineEnd >= limit || lineEnd - pos > longest) return pos;
    let count = 0;
    for (let at = pos; ; ) {
      if (nextDelimiter !== -1 && nextDelimiter < at) nextDelimiter = text.indexOf(delimiter, at);
      if (nextDelimiter === -1 || nextDelimiter >= lineEnd) {
        cells[count++] = text.slice(at, lineEnd);
        break;
      }
      cells[count++] = text.slice(at, nextDelimiter);
      at = nextDelimiter + 1;
    }
    if (cells.length !== count) cells.length = count;
    sink.record(cells);
    pos = lineEnd + rd.length;
  }
}
