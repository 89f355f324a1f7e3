// The `blobs` table, whatever store holds the bytes (blobStore.ts): a row per file (id, size,
// SHA-256) and the heartbeat of files being written. The only file that writes that table.
import { type Pool, type Queryable, WITHOUT_WAITING_FOR_WAL } from '../platform/db.ts';
import type { Logger } from '../platform/log.ts';

/** A reader caught up with a file still being written, and the writer sent nothing new for a while. */
export class WriterBehind extends Error {
  constructor(blobId: string, waitedMs: number) {
    super(`blob ${blobId}: its writer sent nothing for ${waitedMs} ms`);
  }
}

/** How a blob's chunks are stored: raw (null) or each a zstd frame of its own. */
export type ChunkEncoding = 'zstd' | null;

/**
 * Starts a blob that this process writes: its writer is seen now. `waitForWal: false` commits it
 * without waiting for the WAL (WITHOUT_WAITING_FOR_WAL), for a store whose every later write needs the row (PostgreSQL's chunks refer to it): a crash
 * that lost it fails the next write, and what the blob is for (a version, its completion) commits
 * after it, waiting for the WAL, this row's included. An object store writes nothing here until
 * completeBlob, which would find no row: it waits.
 */
export async function insertBlob(db: Pool, id: string, chunkEncoding: ChunkEncoding = null, { waitForWal = true } = {}): Promise<void> {
  const later = waitForWal ? '' : ` FROM ${WITHOUT_WAITING_FOR_WAL}`;
  await db.query(`INSERT INTO blobs (id, writer_seen_at, chunk_encoding) SELECT $1, now(), $2${later}`, [id, chunkEncoding]);
}

/** Starts a blob whose bytes the client puts straight into the object store (no writer here). */
export async function insertUnwrittenBlob(db: Queryable, id: string): Promise<void> {
  await db.query('INSERT INTO blobs (id) VALUES ($1)', [id]);
}

/** The size of a blob the client put into the object store itself (its digest is not known). */
export async function setBlobBytes(db: Queryable, id: string, bytes: number): Promise<void> {
  await db.query('UPDATE blobs SET bytes = $2 WHERE id = $1', [id, bytes]);
}

/** Forgets a blob whose bytes the store has deleted (PostgreSQL's chunks go with the row). */
export async function deleteBlobRecord(db: Queryable, id: string): Promise<void> {
  await db.query('DELETE FROM blobs WHERE id = $1', [id]);
}

/**
 * The blob is complete: its size (and digest, when it was computed) are set, and it needs no
 * writer any more. A resumable upload's digest is not known: its bytes came in pieces, maybe to
 * several processes. Answers whether its row was there. `chunks`: how many chunks this process
 * stored in PostgreSQL (numbered from 0); then it throws, completing nothing, unless the row and
 * every chunk are there. Rows and chunks are committed without waiting for the WAL (insertBlob,
 * the chunks' inserts), so a database that crashed and came back while the file streamed in may
 * have lost some; this commit, which waits for the WAL, is the one that tells.
 */
export async function completeBlob(db: Queryable, id: string, bytes: number, sha256: Buffer | null, chunks?: number): Promise<boolean> {
  const { rowCount } = await db.query(
    `UPDATE blobs SET bytes = $2, sha256 = $3, writer_seen_at = NULL
     WHERE id = $1 AND ($4::int IS NULL OR (SELECT count(*) FROM blob_chunks WHERE blob_id = $1) = $4)`,
    [id, bytes, sha256, chunks ?? null],
  );
  if (chunks !== undefined && rowCount !== 1) throw new Error(`blob ${id}: its row or some of its ${chunks} chunks were lost (the database restarted while it was written)`);
  return rowCount === 1;
}

/**
 * The heartbeat of the blobs this process is writing: one UPDATE for all of them every
 * `everyMs`. A slow client may send nothing for minutes, so a chunk's arrival is no sign of life;
 * this is. When the process dies, or loses its database, the beats stop and the sweep
 * (abandonedBlobs) takes the blobs.
 */
export class WriterHeartbeat {
  private readonly writing = new Set<string>();
  private timer: NodeJS.Timeout | undefined;
  private readonly db: Queryable;
  private readonly everyMs: number;
  private readonly log: Logger | undefined;

  constructor(db: Queryable, everyMs: number, log?: Logger) {
    this.db = db;
    this.everyMs = everyMs;
    this.log = log;
  }

  add(id: string): void {
    this.writing.add(id);
    this.timer ??= setInterval(() => void this.beat(), this.everyMs).unref();
  }

  remove(id: string): void {
    this.writing.delete(id);
    if (this.writing.size === 0) this.stop();
  }

  stop(): void {
    clearInterval(this.timer);
    this.timer = undefined;
  }

  private async beat(): Promise<void> {
    try {
      await this.db.query('UPDATE blobs SET writer_seen_at = now() WHERE id = ANY($1) AND bytes IS NULL', [[...this.writing]]);
    } catch (error) {
      // The database is away: the next beat tries again (if the writer still runs by then).
      this.log?.warn({ err: error, blobs: this.writing.size }, 'blob writer heartbeat failed');
    }
  }
}

/** Incomplete blobs whose writer has not been seen for `staleMs`: their writing process is gone. */
export async function abandonedBlobs(db: Queryable, staleMs: number): Promise<string[]> {
  const { rows } = await db.query<{ id: string }>(
    `SELECT id FROM blobs WHERE bytes IS NULL AND writer_seen_at < now() - make_interval(secs => $1 / 1000.0)`,
    [staleMs],
  );
  return rows.map((r) => r.id);
}

/** Whether the blob is stored whole (written to its end, not deleted). */
export async function blobIsStored(db: Queryable, id: string): Promise<boolean> {
  const { rowCount } = await db.query('SELECT 1 FROM blobs WHERE id = $1 AND bytes IS NOT NULL', [id]);
  return rowCount === 1;
}
