// A version's row errors (`version_errors`), the only writer of that table: stored by the build
// as they are found (ErrorSpill), cleared when a build starts again, counted, and read back as the
// elements of a JSON array.
//
// ErrorSpill streams them in with COPY on a connection of its own (outside the build's
// transaction, which rolls back), opened at the first error. Memory stays bounded however many
// rows are bad: while COPY is behind, `behind()` gives the reader something to wait for. The
// errors become visible when `flush()` ends the COPY, before the version fails.
//
// writeVersionErrorsJson streams them out with COPY: a file with millions of bad rows is answered
// with memory that does not grow with it. Each element is built in SQL exactly as JSON.stringify
// would write {row, field, code, message}.
import { once } from 'node:events';
import { Transform, type Readable, type Writable } from 'node:stream';
import { finished, pipeline } from 'node:stream/promises';
import { from as copyFrom, to as copyTo } from 'pg-copy-streams';
import type { RowError } from '../contract/fields.ts';
import { type Client, copyJsonLinesOut, type Pool, type Queryable } from '../platform/db.ts';
import { checkedId } from '../platform/ids.ts';

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

/** One element per line (COPY takes no parameters: the id is checked before it is inlined). */
function errorsCopySql(versionId: string): string {
  return copyJsonLinesOut(`SELECT '{"row":' || row_number || ',"field":' || to_json(field)::text || ',"code":' || to_json(code)::text
      || ',"message":' || to_json(message)::text || '}'
    FROM version_errors WHERE version_id = '${checkedId('ver', versionId)}' ORDER BY row_number, seq`);
}

/**
 * Turns COPY's lines into comma-separated elements: JSON text has no raw newline, so every newline
 * ends an element; the last one is held back and dropped at the end.
 */
function linesToElements(): Transform {
  let held: number | undefined;
  return new Transform({
    transform(chunk: Buffer, _encoding, done) {
      const out = Buffer.allocUnsafe(chunk.length);
      let n = 0;
      if (held !== undefined) out[n++] = held;
      for (let i = 0; i < chunk.length - 1; i++) out[n++] = chunk[i] === 0x0a ? 0x2c : chunk[i]!;
      held = chunk.length > 0 ? (chunk[chunk.length - 1] === 0x0a ? 0x2c : chunk[chunk.length - 1]) : held;
      done(null, out.subarray(0, n));
    },
    flush(done) {
      // `held` is the comma that ended the last element.
      done();
    },
  });
}

/** Writes the version's row errors (the inside of the array, no brackets) to `sink`, which stays open. */
export async function writeVersionErrorsJson(pool: Pool, versionId: string, sink: NodeJS.WritableStream): Promise<void> {
  const client = await pool.connect();
  let failure: Error | undefined;
  try {
    const rows: Readable = client.query(copyTo(errorsCopySql(versionId)));
    await pipeline(rows, linesToElements(), sink, { end: false });
  } catch (error) {
    failure = error as Error;
    throw error;
  } finally {
    // A COPY cut short (the reader went away) leaves the connection mid-protocol: drop it.
    client.release(failure);
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
