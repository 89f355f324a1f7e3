// A version's row errors (`version_errors`), the only writer of that table: stored by the build
// as they are found (ErrorSpill), cleared when a build starts again, counted, and read back as the
// elements of a JSON array.
//
// ErrorSpill streams them in with COPY on a connection of its own (outside the build's
// transaction, which rolls back), opened at the first error. Memory stays bounded however many
// rows are bad: while COPY is behind, `behind()` gives the reader something to wait for. The
// errors become visible when `flush()` ends the COPY, before the version fails.
//
// writeVersionErrorsJson writes them out a page at a time, at the client's pace, holding no
// connection while the client reads: a file with millions of bad rows is answered with memory that
// does not grow with it. Each element is built in SQL exactly as JSON.stringify would write
// {row, field, code, message}.
import { once } from 'node:events';
import type { Writable } from 'node:stream';
import { finished } from 'node:stream/promises';
import { from as copyFrom } from 'pg-copy-streams';
import type { RowError } from '../contract/fields.ts';
import type { Client, Pool, Queryable } from '../platform/db.ts';
import { writePaced } from '../platform/pacedWrites.ts';

/** Text is sent to COPY in pieces of about this size. */
const PIECE = 64 * 1024;
/** Pieces sent or waiting before the reader is asked to wait. */
const MAX_QUEUED = 2;

/** COPY's text format: backslash, tab, newline and carriage return escaped. */
const copyText = (value: string) => value.replace(/[\\\t\n\r]/g, (c) => ({ '\\': '\\\\', '\t': '\\t', '\n': '\\n', '\r': '\\r' })[c]!);

export class ErrorSpill {
  count = 0;
  private text = '';
  private queued = 0;
  private copy: Promise<{ client: Client; stream: Writable }> | undefined;
  private sending: Promise<void> = Promise.resolve();
  private failure: Error | undefined;
  private readonly pool: Pool;
  private readonly versionId: string;

  constructor(pool: Pool, versionId: string) {
    this.pool = pool;
    this.versionId = versionId;
  }

  add(error: RowError): void {
    this.text += `${this.versionId}\t${this.count}\t${error.row}\t${copyText(error.field)}\t${copyText(error.code)}\t${copyText(error.message)}\n`;
    this.count++;
    if (this.text.length >= PIECE) this.send();
  }

  /** While COPY is behind, a promise settled when it caught up (rejected if it failed). */
  behind(): Promise<void> | undefined {
    return this.queued >= MAX_QUEUED ? this.sending : undefined;
  }

  /** Ends the COPY: every error reported so far is stored. Rethrows a failed write. */
  async flush(): Promise<void> {
    this.send();
    await this.sending;
    if (!this.copy) return;
    const { client, stream } = await this.copy;
    this.copy = undefined;
    try {
      stream.end();
      await finished(stream);
      client.release();
    } catch (error) {
      client.release(error as Error);
      throw error;
    }
  }

  /** Lets the connection go without storing anything (the build failed otherwise). */
  async abandon(): Promise<void> {
    const copy = this.copy;
    this.copy = undefined;
    if (!copy) return;
    const opened = await copy.catch(() => undefined);
    if (!opened) return;
    opened.stream.on('error', () => {});
    opened.stream.destroy(new Error('build abandoned'));
    opened.client.release(new Error('build abandoned'));
  }

  private send(): void {
    if (this.text === '') return;
    const piece = this.text;
    this.text = '';
    this.copy ??= this.open();
    const copy = this.copy;
    this.queued++;
    this.sending = this.sending.then(async () => {
      const { stream } = await copy;
      if (this.failure) throw this.failure;
      if (!stream.write(piece)) await once(stream, 'drain');
      this.queued--;
    });
  }

  private async open(): Promise<{ client: Client; stream: Writable }> {
    const client = await this.pool.connect();
    const stream = client.query(copyFrom('COPY version_errors (version_id, seq, row_number, field, code, message) FROM STDIN'));
    // Kept for the next write or the flush to throw; an error nobody listens to would end the process.
    stream.on('error', (error: Error) => (this.failure ??= error));
    return { client, stream };
  }
}

/** Errors read per query when they are written out: about half a megabyte of JSON. */
const ERRORS_PER_PAGE = 5_000;

/**
 * Writes the version's row errors (the inside of the array, no brackets) to `sink`, which stays
 * open: a page at a time in row order, each page read with a query of its own (its connection back
 * in the pool before the page is written), each written once the sink took the one before, at the
 * client's pace, at most `stallMs` without progress (shared/platform/pacedWrites.ts). So a client
 * that reads slowly holds no connection, and memory holds one page whatever the count.
 */
export async function writeVersionErrorsJson(db: Queryable, versionId: string, sink: NodeJS.WritableStream, stallMs: number): Promise<void> {
  let after: { row: string; seq: number } | undefined;
  for (let first = true; ; first = false) {
    const { rows } = await db.query<{ element: string; row_number: string; seq: number }>(
      `SELECT '{"row":' || row_number || ',"field":' || to_json(field)::text || ',"code":' || to_json(code)::text
          || ',"message":' || to_json(message)::text || '}' AS element, row_number, seq
       FROM version_errors WHERE version_id = $1 AND ($2::bigint IS NULL OR (row_number, seq) > ($2, $3::int))
       ORDER BY row_number, seq LIMIT $4`,
      [versionId, after?.row ?? null, after?.seq ?? null, ERRORS_PER_PAGE],
    );
    if (rows.length === 0) return;
    await writePaced(sink, (first ? '' : ',') + rows.map((r) => r.element).join(','), stallMs);
    if (rows.length < ERRORS_PER_PAGE) return;
    const last = rows.at(-1)!;
    after = { row: last.row_number, seq: last.seq };
  }
}

/** Forgets the errors of an earlier attempt (a build starting again stores its own). */
export async function clearRowErrors(db: Queryable, versionId: string): Promise<void> {
  await db.query('DELETE FROM version_errors WHERE version_id = $1', [versionId]);
}

/** How many rows of the file had at least one problem. */
export async function rejectedRowCount(db: Queryable, versionId: string): Promise<number> {
  const { rows } = await db.query<{ rejected: number }>('SELECT count(DISTINCT row_number) AS rejected FROM version_errors WHERE version_id = $1', [
    versionId,
  ]);
  return rows[0]!.rejected;
}

/** The most row errors a version object carries; the rest are read from the errors resource. */
export const ERRORS_IN_VERSION = 100;

/** A version's row errors in row order, a page at a time; the cursor is the `seq` of the last one read. */
export async function pageOfRowErrors(
  db: Queryable,
  versionId: string,
  query: { limit: number; cursor?: string | undefined },
): Promise<{ errors: RowError[]; nextCursor: string | null } | 'bad-cursor'> {
  let after: { row: number; seq: number } | undefined;
  if (query.cursor !== undefined) {
    if (!/^\d{1,9}$/.test(query.cursor)) return 'bad-cursor';
    const { rows } = await db.query<{ row_number: number }>('SELECT row_number::int AS row_number FROM version_errors WHERE version_id = $1 AND seq = $2', [
      versionId,
      query.cursor,
    ]);
    if (!rows[0]) return 'bad-cursor';
    after = { row: rows[0].row_number, seq: Number(query.cursor) };
  }
  const { rows } = await db.query<RowError & { seq: number }>(
    `SELECT row_number::int AS row, field, code, message, seq FROM version_errors
      WHERE version_id = $1 AND ($2::bigint IS NULL OR (row_number, seq) > ($2, $3::int))
      ORDER BY row_number, seq LIMIT $4`,
    [versionId, after?.row ?? null, after?.seq ?? null, query.limit + 1],
  );
  const page = rows.slice(0, query.limit);
  const errors = page.map(({ row, field, code, message }) => ({ row, field, code, message }));
  return { errors, nextCursor: rows.length > query.limit ? String(page.at(-1)!.seq) : null };
}
