// Streams a contract file (CSV bytes) through the CSV reader and the row validator into a binary
// COPY stream (`COPY contract_rows (COPY_COLUMNS) FROM STDIN (FORMAT binary)`), and counts each
// valid row into the tally. Every row error goes to `report` as it is found; the caller decides
// what to keep. Rows are numbered as a spreadsheet shows them: the header is row 1, a blank line
// keeps its number, a quoted value spanning lines is still one row.
import { Readable, type Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { StringDecoder } from 'node:string_decoder';
import { BinaryCopyWriter } from './binaryCopy.ts';
import { mapHeader, RowValidator, type RowError } from './contractRow.ts';
import { CsvRecords } from './csvRecords.ts';
import type { Tally } from './tally.ts';

const SNIFF_BYTES = 64 * 1024;
const DECODE_BYTES = 64 * 1024;
const DELIMITERS = [',', ';', '\t'] as const;
/** What a decoder puts where bytes are not UTF-8. */
const REPLACEMENT = '\uFFFD';

export type ParseOutcome = { rows: number; bytes: number };

/** The delimiter used most on the header line (`,` when none is). */
export function detectDelimiter(headerLine: string): string {
  let best: string = ',';
  let bestCount = 0;
  for (const d of DELIMITERS) {
    const count = headerLine.split(d).length - 1;
    if (count > bestCount) {
      best = d;
      bestCount = count;
    }
  }
  return best;
}

type ParseOptions = {
  source: AsyncIterable<Buffer>;
  versionId: string;
  sink: Writable;
  report: (error: RowError) => void;
  /** While whoever takes the reports is behind (errors waiting to be written), a promise to wait
   * for before reading on; otherwise undefined. */
  reportsBehind?: () => Promise<void> | undefined;
  /** Counts the valid rows into the version's metrics and catalog. */
  tally?: Tally;
  /** Rows seen and bytes read so far; called as the file streams. */
  progress?: (rows: number, bytes: number) => void;
  /** Aborts the parse (and the COPY it feeds). */
  signal?: AbortSignal;
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
  const head: Buffer[] = [];
  let headBytes = 0;
  for (;;) {
    const next = await iterator.next();
    if (next.done) break;
    head.push(next.value);
    headBytes += next.value.length;
    if (next.value.includes(0x0a) || headBytes >= SNIFF_BYTES) break;
  }
  let bytes = headBytes;
  const text = Buffer.concat(head).toString('utf8').replace(/^\uFEFF/, '');
  if (text.trim() === '' && headBytes < SNIFF_BYTES) {
    const more = await iterator.next();
    if (more.done) {
      report({ row: 1, field: '*', code: 'empty_file', message: 'The file is empty.' });
      for (const batch of copy.finish()) options.sink.write(batch);
      options.sink.end();
      return { rows: 0, bytes };
    }
    head.push(more.value);
    bytes += more.value.length;
  }
  const delimiter = detectDelimiter(text.split(/\r?\n/, 1)[0] ?? '');

  let counter = 0;
  let rows = 0;
  let validator: RowValidator | undefined;
  let stopped = false;
  let mayHaveBadBytes = false;

  const onRecord = (cells: string[]) => {
    const row = ++counter;
    if (stopped) return;
    rows = row;
    if (mayHaveBadBytes && cells.some((c) => c.includes(REPLACEMENT))) {
      report({ row, field: '*', code: 'not_utf8', message: `Row ${row} has bytes that are not UTF-8.` });
      return;
    }
    if (!validator) {
      const map = mapHeader(cells);
      if (map.customer < 0) {
        report({ row: 1, field: 'customer', code: 'missing_column', message: 'The header has no customer column.' });
        stopped = true;
        return;
      }
      validator = new RowValidator(map, cells.length, versionId, { report, copy, tally: options.tally });
      return;
    }
    if (isBlank(cells)) return; // a blank line: skipped, numbered
    validator.check(cells, row);
  };
  const records = new CsvRecords(delimiter, {
    record: onRecord,
    malformed: (reason) => {
      const row = ++counter;
      report({ row, field: '*', code: 'malformed_row', message: `Row ${row} is not valid CSV: ${reason}.` });
    },
  });

  const decoder = new StringDecoder('utf8');
  let first = true;
  const read = (chunk: string) => {
    if (first && chunk.length > 0) {
      first = false;
      if (chunk.charCodeAt(0) === 0xfeff) chunk = chunk.slice(1);
    }
    // Only rows read after a replacement character appeared need looking at.
    if (!mayHaveBadBytes && chunk.includes(REPLACEMENT)) mayHaveBadBytes = true;
    records.push(chunk);
  };
  async function* copyRows(): AsyncGenerator<Buffer> {
    const source = withHead(head, iterator, (n) => (bytes += n));
    for await (const chunk of source) {
      // In slices: a string of a whole 1 MiB chunk would be allocated outside the young
      // generation and freed only by a full collection, which lets the heap grow by tens of MiB.
      for (let at = 0; at < chunk.length; at += DECODE_BYTES) {
        read(decoder.write(chunk.subarray(at, at + DECODE_BYTES)));
        yield* copy.take();
        // A file of bad rows reports faster than its errors are stored: wait, so they do not pile up.
        const behind = options.reportsBehind?.();
        if (behind) await behind;
      }
      options.progress?.(rows, bytes);
    }
    read(decoder.end());
    records.end();
    yield* copy.finish();
  }

  await pipeline(Readable.from(copyRows(), { objectMode: false }), options.sink, ...(options.signal ? [{ signal: options.signal }] : []));
  if (!validator && !stopped && rows === 0) {
    report({ row: 1, field: '*', code: 'empty_file', message: 'The file is empty.' });
  }
  options.progress?.(rows, bytes);
  return { rows: Math.max(rows - 1, 0), bytes };
}

/** Every cell empty or whitespace. */
function isBlank(cells: string[]): boolean {
  for (const c of cells) if (c.trim() !== '') return false;
  return true;
}

async function* withHead(head: Buffer[], rest: AsyncIterator<Buffer>, count: (n: number) => void) {
  for (const chunk of head) yield chunk;
  for (let next = await rest.next(); !next.done; next = await rest.next()) {
    count(next.value.length);
    yield next.value;
  }
}
