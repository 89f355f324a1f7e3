// Blob records, whatever store holds the bytes (shared/blobStore.ts): a row in `blobs` per file
// (id, size, SHA-256), the 413 for a file over its limit, the heartbeat of files being written,
// and the files nothing reads any more.
import type { Queryable } from './db.ts';
import type { Logger } from './log.ts';
import { Problem } from './problems.ts';

export type StoredBlob = { id: string; bytes: number; sha256: Buffer };

export class TooLarge extends Problem {
  constructor(maxBytes: number) {
    super('payload-too-large', `The file is larger than the limit of ${maxBytes} bytes.`);
  }
}

/**
 * Files nothing will read any more, 24 hours on: deletes uploads never used, and returns the
 * blobs that no pending upload, unfinished version or export references (left by a request that
 * failed after storing its body), for the blob store to delete. Blobs of built versions are
 * deleted by the build itself; expired exports by the export purge.
 */
export async function staleFiles(db: Queryable): Promise<{ uploads: number; blobIds: string[] }> {
  const uploads = await db.query(`DELETE FROM uploads WHERE status <> 'used' AND created_at < now() - interval '24 hours'`);
  const { rows } = await db.query<{ id: string }>(
    `SELECT id FROM blobs b WHERE b.created_at < now() - interval '24 hours'
       AND NOT EXISTS (SELECT 1 FROM uploads u WHERE u.blob_id = b.id AND u.status <> 'used')
       AND NOT EXISTS (SELECT 1 FROM versions v WHERE v.blob_id = b.id AND v.status IN ('queued', 'building'))
       AND NOT EXISTS (SELECT 1 FROM exports e WHERE e.blob_id = b.id)`,
  );
  return { uploads: uploads.rowCount ?? 0, blobIds: rows.map((r) => r.id) };
}

/** A reader caught up with a file still being written, and the writer sent nothing new for a while. */
export class WriterBehind extends Error {
  constructor(blobId: string, waitedMs: number) {
    super(`blob ${blobId}: its writer sent nothing for ${waitedMs} ms`);
  }
}

/** Starts a blob that this process writes: its writer is seen now. */
export async function insertBlob(db: Queryable, id: string): Promise<void> {
  await db.query('INSERT INTO blobs (id, writer_seen_at) VALUES ($1, now())', [id]);
}

/** The blob is complete: its size and digest are set, and it needs no writer any more. */
export async function completeBlob(db: Queryable, id: string, bytes: number, sha256: Buffer): Promise<void> {
  await db.query('UPDATE blobs SET bytes = $2, sha256 = $3, writer_seen_at = NULL WHERE id = $1', [id, bytes, sha256]);
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
