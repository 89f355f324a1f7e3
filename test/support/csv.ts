// The CSV reader and csv-parse side by side, for the differential tests and the fuzzing.
import { parse } from 'csv-parse/sync';
import { CsvRecords } from '../../shared/ingest/csvRecords.ts';

export type Read = Array<string[] | 'malformed' | 'overlong'>;

/** What csv-parse makes of `text`, with the options the ingest used it with before the fast reader. */
export function csvParse(text: string, delimiter: string): Read {
  const out: Read = [];
  parse(text, {
    delimiter,
    relax_column_count: true,
    relax_quotes: true,
    skip_empty_lines: false,
    skip_records_with_error: true,
    on_record: (cells: string[]) => void out.push(cells),
    on_skip: () => void out.push('malformed'),
  });
  return out;
}

/**
 * What the fast reader makes of `text`, its UTF-8 bytes fed in chunks of the given sizes (cycled),
 * cut anywhere (inside a character too: the reader looks for ASCII bytes only).
 */
export function fast(text: string, delimiter: string, chunkSizes?: number[], maxRecordBytes?: number): Read {
  const out: Read = [];
  const reader = new CsvRecords(
    delimiter,
    { record: (cells) => out.push(cells.texts()), malformed: () => out.push('malformed'), overlong: () => out.push('overlong') },
    maxRecordBytes === undefined ? {} : { maxRecordBytes },
  );
  const bytes = Buffer.from(text);
  const sizes = chunkSizes ?? [bytes.length || 1];
  for (let i = 0, k = 0; i < bytes.length; k++) {
    const size = Math.max(1, sizes[k % sizes.length]!);
    reader.push(bytes.subarray(i, i + size));
    i += size;
  }
  reader.end();
  return out;
}
