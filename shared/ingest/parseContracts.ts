// Streams a contract file (CSV bytes) through the CSV reader and the row validator into a binary
// COPY stream (`COPY contract_rows (COPY_COLUMNS) FROM STDIN (FORMAT binary)`), and counts each
// valid row into the tally. Every row error goes to `report` as it is found; the caller decides
// what to keep. Rows are numbered as a spreadsheet shows them: the header is row 1, a blank line
// keeps its number, a quoted value spanning lines is still one row, and so is a record too long
// to be read. Time is linear in the file's size and memory bounded whatever its shape (see
// csvRecords.ts); the file is read as bytes throughout, and bad bytes are found on them (see
// utf8Chunks.ts).
import { type RecognisedColumns, recogniseColumns } from '../contract/columns.ts';
import { Readable, Writable } from 'node:stream';
import { finished, pipeline } from 'node:stream/promises';
import { BinaryCopyWriter } from './binaryCopy.ts';
import type { RowError } from '../contract/fields.ts';
import { trim } from './cellBytes.ts';
import { mapHeader, missingColumns, REQUIRED_COLUMNS, RowValidator } from './rowValidator.ts';
import { type Cells, CsvRecords, MAX_RECORD_BYTES } from './csvRecords.ts';
import { readFileHead } from './fileHead.ts';
import type { TallyFeed } from './tallyFeed.ts';
import { freeNow } from '../platform/typedArrays.ts';
import { Utf8Chunks } from './utf8Chunks.ts';

const SLICE_BYTES = 64 * 1024;

/** Rows seen and bytes read; what the header held, when it could be read. */
export type ParseOutcome = { rows: number; bytes: number; columns: RecognisedColumns | null };

type ParseOptions = {
  source: AsyncIterable<Buffer>;
  versionId: string;
  /**
   * Takes the binary COPY stream. It must be done with a chunk when it calls back for it, as a
   * socket is, and pg-copy-streams (which calls back once the socket took the chunk whole): the
   * chunk's buffer is written again.
   */
  sink: Writable;
  report: (error: RowError) => void;
  /** While whoever takes the reports is behind (errors waiting to be written), a promise to wait
   * for before reading on; otherwise undefined. */
  reportsBehind?: () => Promise<void> | undefined;
  /** Counts the valid rows into the version's metrics and catalog. */
  tally?: TallyFeed;
  /** Rows seen and bytes read so far; called as the file streams. */
  progress?: (rows: number, bytes: number) => void;
  /** Aborts the parse (and the COPY it feeds). */
  signal?: AbortSignal;
  /** A record longer than this (in bytes) is reported `row_too_long` and not read; 1 MiB by default. */
  maxRecordBytes?: number;
  /**
   * The source's chunks are the parse's own (nothing else holds them, as a blob being read): each
   * is freed as soon as it is read (freeNow) rather than when the collector gets to it.
   */
  releaseChunks?: boolean;
};

export async function parseContracts(options: ParseOptions): Promise<ParseOutcome> {
  const iterator = options.source[Symbol.asyncIterator]();
  try {
    return await parse(options, iterator);
  } catch (error) {
    // A COPY left open would hold its connection: whatever failed (the source too), end it.
    // (The COPY answers with the same error, which is already being thrown.)
    options.sink.on('error', () => {});
    options.sink.destroy(error as Error);
    throw error;
  } finally {
    await iterator.return?.(); // a source stopped early lets go of what it holds (a connection)
  }
}

async function parse(options: ParseOptions, iterator: AsyncIterator<Buffer>): Promise<ParseOutcome> {
  const { versionId, report } = options;
  const copy = new BinaryCopyWriter();

  // Read enough to see the header line, then decide the delimiter.
  const { head, bytes: headBytes, delimiter } = await readFileHead(iterator);
  let bytes = headBytes;

  let counter = 0;
  let rows = 0;
  let validator: RowValidator | undefined;
  let columns: RecognisedColumns | null = null;
  /** The first record was blank: the file is empty if nothing but blank lines follows. */
  let blankHeader = false;
  let stopped = false;
  const chunks = new Utf8Chunks();
  /** Whether a NUL byte was met: until then no cell can hold one, and none is looked at. */
  let sawNul = false;
  // Only rows read once bad bytes appeared need looking at.
  const hasBadBytes = (cells: Cells) => chunks.sawBadBytes && !cells.wellFormed();

  /** The header cannot be read: no row of the file can be. */
  const noHeader = (error: Omit<RowError, 'row'>) => {
    report({ row: 1, ...error });
    stopped = true;
  };
  /** The header has no column for these required fields (none at all when it was blank). */
  const missing = (columns: readonly string[]) => {
    for (const field of columns) report({ row: 1, field, code: 'missing_column', message: `The header has no ${field} column.` });
    stopped = true;
  };

  const header = (cells: Cells) => {
    if (blankHeader) {
      if (!isBlank(cells)) missing(REQUIRED_COLUMNS);
      return;
    }
    if (hasBadBytes(cells)) return noHeader({ field: '*', code: 'not_utf8', message: 'Row 1 has bytes that are not UTF-8.' });
    if (isBlank(cells)) {
      blankHeader = true;
      return;
    }
    const texts = cells.texts();
    columns = recogniseColumns(texts);
    const map = mapHeader(texts);
    const absent = missingColumns(map);
    if (absent.length > 0) return missing(absent);
    validator = new RowValidator(map, cells.count, versionId, { report, copy, tally: options.tally });
    validator.mayHoldNul = sawNul;
  };

  const onRecord = (cells: Cells) => {
    const row = ++counter;
    if (stopped) return;
    rows = row;
    if (!validator) return header(cells);
    if (hasBadBytes(cells)) {
      report({ row, field: '*', code: 'not_utf8', message: `Row ${row} has bytes that are not UTF-8.` });
      return;
    }
    if (isBlank(cells)) return; // a blank line: skipped, numbered
    validator.check(cells, row);
  };
  /** A record that could not be read at all (overlong, or cut by the end of the file inside quotes). */
  const unreadable = (error: Omit<RowError, 'row' | 'message'>, message: (row: number) => string) => {
    const row = ++counter;
    if (stopped) return;
    rows = row;
    if (validator) report({ row, ...error, message: message(row) });
    else if (blankHeader) missing(REQUIRED_COLUMNS);
    else noHeader({ ...error, message: message(row) });
  };
  const maxRecordBytes = options.maxRecordBytes ?? MAX_RECORD_BYTES;
  const records = new CsvRecords(
    delimiter,
    {
      record: onRecord,
      malformed: (reason) => unreadable({ field: '*', code: 'malformed_row' }, (row) => `Row ${row} is not valid CSV: ${reason}.`),
      overlong: () => unreadable({ field: '*', code: 'row_too_long' }, (row) => `Row ${row} is longer than ${sizeText(maxRecordBytes)}; it was not read.`),
    },
    { maxRecordBytes },
  );

  async function* copyRows(): AsyncGenerator<Buffer> {
    const source = withHead(head, iterator, (n) => (bytes += n));
    for await (const chunk of source) {
      // In slices, so that COPY batches, the tally's and the reports go out as the file is read.
      for (let at = 0; at < chunk.length; at += SLICE_BYTES) {
        const slice = chunk.subarray(at, at + SLICE_BYTES);
        if (!sawNul && slice.includes(0)) {
          sawNul = true;
          if (validator) validator.mayHoldNul = true;
        }
        records.push(chunks.write(slice));
        yield* copy.take();
        // A file of bad rows reports faster than its errors are stored, and a tally on a thread of
        // its own may count slower than rows are read: wait, so that neither piles up.
        const behind = options.reportsBehind?.();
        if (behind) await behind;
        const counting = options.tally?.flush();
        if (counting) await counting;
      }
      options.progress?.(rows, bytes);
      if (options.releaseChunks) freeNow(chunk);
    }
    records.push(chunks.end());
    records.end();
    yield* copy.finish();
  }

  await pipeline(Readable.from(copyRows(), { objectMode: false }), releasing(options.sink, copy), ...(options.signal ? [{ signal: options.signal }] : []));
  if (!validator && !stopped) {
    report({ row: 1, field: '*', code: 'empty_file', message: 'The file is empty.' });
  }
  options.progress?.(rows, bytes);
  return { rows: Math.max(rows - 1, 0), bytes, columns };
}

/**
 * The COPY stream's way into `sink`, one batch at a time, each batch's buffer given back to the
 * writer once the sink calls back for it. (Let go instead, the batches were freed by the collector
 * only tens of MiB later: a build allocates little else on its heap, so its collections are rare.)
 */
function releasing(sink: Writable, copy: BinaryCopyWriter): Writable {
  const into = new Writable({
    write(batch: Buffer, _encoding, done) {
      sink.write(batch, (error) => {
        if (error) return done(error);
        copy.release(batch);
        done();
      });
    },
    final(done) {
      finished(sink).then(() => done(), done);
      sink.end();
    },
  });
  sink.on('error', (error) => into.destroy(error));
  return into;
}

const sizeText = (bytes: number) => (bytes % (1024 * 1024) === 0 ? `${bytes / (1024 * 1024)} MiB` : `${bytes} bytes`);

/** Every cell empty or white space. */
function isBlank(cells: Cells): boolean {
  for (let i = 0; i < cells.count; i++) {
    trim(cells.bytes, cells.starts[i]!, cells.ends[i]!, SPAN);
    if (SPAN[1]! > SPAN[0]!) return false;
  }
  return true;
}
const SPAN = new Int32Array(2);

async function* withHead(head: Buffer[], rest: AsyncIterator<Buffer>, count: (n: number) => void) {
  for (const chunk of head) yield chunk;
  for (let next = await rest.next(); !next.done; next = await rest.next()) {
    count(next.value.length);
    yield next.value;
  }
}
