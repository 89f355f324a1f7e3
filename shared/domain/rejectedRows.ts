// The rejected rows of a failed version as a CSV file to fix in a spreadsheet and upload again:
// the source's header and, for each row with problems, its cells as uploaded (re-quoted where
// needed, with the source's delimiter), after the row's number and its problems. The file is the
// one the version was built from, kept for REJECTED_FILE_DAYS after the build failed; it is read
// again beside the errors (both in row order), so memory stays flat whatever the file's size.
import type { BlobStore } from '../blobs/blobStore.ts';
import { sourceRecords } from '../ingest/sourceRecords.ts';
import type { RowError } from '../contract/fields.ts';
import type { Queryable } from '../platform/db.ts';
import { pageOfRowErrors } from './versionErrors.ts';

/** How long the file of a version that failed validation is kept for its rejected rows. */
export const REJECTED_FILE_DAYS = 7;

/** The columns added before the source's: a name no contract column has, so an upload ignores them. */
const ADDED_COLUMNS = ['rejectedRow', 'problems'];
const ERRORS_PAGE = 1000;

/** A version's row errors in row order, grouped by row. */
async function* errorsByRow(db: Queryable, versionId: string): AsyncGenerator<{ row: number; errors: RowError[] }> {
  let cursor: string | undefined;
  let current: { row: number; errors: RowError[] } | undefined;
  do {
    const page = await pageOfRowErrors(db, versionId, { limit: ERRORS_PAGE, ...(cursor !== undefined && { cursor }) });
    if (page === 'bad-cursor') throw new Error('unreachable: a cursor of our own');
    for (const error of page.errors) {
      if (current && current.row !== error.row) yield current;
      if (!current || current.row !== error.row) current = { row: error.row, errors: [] };
      current.errors.push(error);
    }
    cursor = page.nextCursor ?? undefined;
  } while (cursor !== undefined);
  if (current) yield current;
}

function csvLine(cells: string[], delimiter: string): string {
  const quoted = (cell: string) =>
    cell.includes(delimiter) || cell.includes('"') || cell.includes('\n') || cell.includes('\r') ? `"${cell.replaceAll('"', '""')}"` : cell;
  return `${cells.map(quoted).join(delimiter)}\r\n`;
}

const problemsText = (errors: RowError[]) => errors.map((e) => `${e.field} ${e.code}: ${e.message}`).join('; ');

/**
 * The CSV text, piece by piece. The header line is the source's first record; a row the reader
 * could not keep (longer than the record cap, or cut by an open quote) has its number and
 * problems and no cells.
 */
export async function* rejectedRowsCsv(db: Queryable, blobs: BlobStore, version: { id: string; blobId: string }): AsyncGenerator<string> {
  const { delimiter, records } = await sourceRecords(blobs.read(version.blobId));
  const errors = errorsByRow(db, version.id);
  let pending = await errors.next();
  let wroteHeader = false;
  try {
    for await (const record of records) {
      if (!wroteHeader) {
        wroteHeader = true;
        yield csvLine([...ADDED_COLUMNS, ...(record.cells ?? [])], delimiter);
      }
      if (pending.done) break;
      if (pending.value.row !== record.row) continue;
      yield csvLine([String(record.row), problemsText(pending.value.errors), ...(record.cells ?? [])], delimiter);
      pending = await errors.next();
    }
    if (!wroteHeader) yield csvLine(ADDED_COLUMNS, delimiter);
    // Problems of no record (an empty file): their number and problems.
    for (; !pending.done; pending = await errors.next()) yield csvLine([String(pending.value.row), problemsText(pending.value.errors)], delimiter);
  } finally {
    await records.return(undefined);
    await errors.return(undefined);
  }
}
