// Blob records, whatever store holds the bytes (shared/blobStore.ts): a row in `blobs` per file
// (id, size, SHA-256), the 413 for a file over its limit, and the files nothing reads any more.
import type { Queryable } from './db.ts';
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
