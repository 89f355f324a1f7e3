// The rejected rows of a failed version as a CSV file to fix in a spreadsheet and upload again:
// the source's header and, for each row with problems, its cells as uploaded (re-quoted where
// needed, with the source's delimiter), after the row's number and its problems. Made once, when
// the build fails (storeRejectedRows), from the file the version was built from, read again beside
// the errors (both in row order), so memory stays flat whatever the file's size; stored as a file
// of its own that every GET reads a page at a time, holding no connection while its client reads.
// Both files are kept for REJECTED_FILE_DAYS after the build failed.
import type { BlobStore } from '../blobs/blobStore.ts';
import { sourceRecords } from '../ingest/sourceRecords.ts';
import type { RowError } from '../contract/fields.ts';
import type { Queryable } from '../platform/db.ts';
import { pageOfRowErrors } from './versionErrors.ts';
import { blobIsStored } from '../blobs/blobRecords.ts';
import { csvLine } from '../platform/csvLine.ts';
import { recordRejectedFile, rejectedFileOf } from './versions.ts';

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

const problemsText = (errors: RowError[]) => errors.map((e) => `${e.field} ${e.code}: ${e.message}`).join('; ');

/**
 * The CSV text, piece by piece. The header line is the source's first record; a row the reader
 * could not keep (longer than the record cap, or cut by an open quote) has its number and
 * problems and no cells.
 */
async function* rejectedRowsCsv(db: Queryable, blobs: BlobStore, version: { id: string; blobId: string }): AsyncGenerator<string> {
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

async function* utf8(pieces: AsyncIterable<string>): AsyncGenerator<Buffer> {
  for await (const piece of pieces) yield Buffer.from(piece, 'utf8');
}

/**
 * Makes the version's rejected rows file from its source file and records it; the file that
 * stands (another process's, when two made it at once). Reads the whole source at the speed of
 * the database, never at a client's.
 */
export async function storeRejectedRows(db: Queryable, blobs: BlobStore, version: { id: string; blobId: string }): Promise<string> {
  const made = await blobs.write(utf8(rejectedRowsCsv(db, blobs, version)), Number.MAX_SAFE_INTEGER);
  const standing = await recordRejectedFile(db, version.id, made.id);
  if (standing !== made.id) await blobs.delete(made.id);
  return standing;
}

/** Makings of rejected rows files under way in this process, by version: concurrent reads share one. */
const making = new Map<string, Promise<string>>();

/**
 * Where a version's rejected rows are: the file's blob, or why there is none (`none`: the version
 * did not fail validation; `gone`: its files are no longer kept). The build made the file when it
 * failed; a version failed before that was made, or whose making failed, gets it made now, once,
 * from its source file (read at the database's speed, not a client's). The API's errors resource
 * and the dashboard both read the rejected rows through this.
 */
export async function rejectedRowsFile(
  db: Queryable,
  blobs: BlobStore,
  version: { id: string; status: string; blobId: string | null; problem: { type: string } | null },
): Promise<string | 'none' | 'gone'> {
  if (version.status !== 'failed' || version.problem?.type !== 'ingest-validation-failed') return 'none';
  const made = await rejectedFileOf(db, version.id);
  if (made) return (await blobIsStored(db, made)) ? made : 'gone';
  const source = version.blobId;
  if (!source || !(await blobIsStored(db, source))) return 'gone';
  let pending = making.get(version.id);
  if (!pending) {
    pending = storeRejectedRows(db, blobs, { id: version.id, blobId: source }).finally(() => making.delete(version.id));
    making.set(version.id, pending);
  }
  return pending;
}
