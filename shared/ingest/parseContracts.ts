// Streams a contract file (CSV bytes) through csv-parse and the row validator into a COPY
// stream. Every row error goes to `report` as it is found; the caller decides what to keep.
// Rows are numbered as a spreadsheet shows them: the header is row 1, a blank line keeps its
// number, a quoted value spanning lines is still one row.
import { type CsvError, type Options, parse, type Parser } from 'csv-parse';
import { Readable, Transform, type Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { mapHeader, RowValidator, type RowError } from './contractRow.ts';

const BATCH_CHARS = 64 * 1024;
const SNIFF_BYTES = 64 * 1024;
const DELIMITERS = [',', ';', '\t'] as const;

type NumberedRecord = { cells: string[]; row: number };

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

async function* withHead(head: Buffer[], rest: AsyncIterator<Buffer>, count: (n: number) => void) {
  for (const chunk of head) yield chunk;
  for (let next = await rest.next(); !next.done; next = await rest.next()) {
    count(next.value.length);
    yield next.value;
  }
}

export async function parseContracts(options: {
  source: AsyncIterable<Buffer>;
  versionId: string;
  sink: Writable;
  report: (error: RowError) => void;
  /** Rows seen and bytes read so far; called as the file streams. */
  progress?: (rows: number, bytes: number) => void;
  /** Aborts the parse (and the COPY it feeds). */
  signal?: AbortSignal;
}): Promise<ParseOutcome> {
  const { versionId, report } = options;
  const iterator = options.source[Symbol.asyncIterator]();

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
      options.sink.end();
      return { rows: 0, bytes };
    }
    head.push(more.value);
    bytes += more.value.length;
  }
  const delimiter = detectDelimiter(text.split(/\r?\n/, 1)[0] ?? '');

  let counter = 0;
  const csvOptions: Options = {
    bom: true,
    delimiter,
    relax_column_count: true,
    relax_quotes: true,
    skip_empty_lines: false,
    skip_records_with_error: true,
    // Both run inside the parser in file order, so rows are numbered right even around skips.
    on_record: ((cells: string[]): NumberedRecord => ({ cells, row: ++counter })) as unknown as Options['on_record'],
    on_skip: (error: CsvError | undefined) => {
      const row = ++counter;
      report({ row, field: '*', code: 'malformed_row', message: `Row ${row} is not valid CSV: ${error?.message ?? 'unreadable'}.` });
      return undefined;
    },
  };
  const parser: Parser = parse(csvOptions);

  let validator: RowValidator | undefined;
  let stopped = false;
  let rows = 0;
  let batch = '';
  const toCopy = new Transform({
    writableObjectMode: true,
    transform(record: NumberedRecord, _encoding, done) {
      if (stopped) return done();
      const { cells, row } = record;
      rows = row;
      if (cells.some((c) => c.includes('\uFFFD'))) {
        report({ row, field: '*', code: 'not_utf8', message: `Row ${row} has bytes that are not UTF-8.` });
        return done();
      }
      if (!validator) {
        const map = mapHeader(cells);
        if (map.customer < 0) {
          report({ row: 1, field: 'customer', code: 'missing_column', message: 'The header has no customer column.' });
          stopped = true;
          return done();
        }
        validator = new RowValidator(map, cells.length, versionId, report);
        return done();
      }
      if (cells.every((c) => c.trim() === '')) return done(); // a blank line: skipped, numbered
      const outcome = validator.check(cells, row);
      if (outcome) batch += outcome.line;
      if (batch.length >= BATCH_CHARS) {
        const out = batch;
        batch = '';
        options.progress?.(rows, bytes);
        return done(null, out);
      }
      done();
    },
    flush(done) {
      done(null, batch || undefined);
    },
  });

  await pipeline(
    Readable.from(withHead(head, iterator, (n) => (bytes += n))),
    parser,
    toCopy,
    options.sink,
    ...(options.signal ? [{ signal: options.signal }] : []),
  );
  if (!validator && !stopped && rows === 0) {
    report({ row: 1, field: '*', code: 'empty_file', message: 'The file is empty.' });
  }
  options.progress?.(rows, bytes);
  return { rows: Math.max(rows - 1, 0), bytes };
}
