// Files nothing will read any more, found by what refers to them: uploads, versions and exports.
import type { Queryable } from '../platform/db.ts';
import { REJECTED_FILE_DAYS } from './rejectedRows.ts';

/**
 * Blobs over 24 hours old that no pending upload, unfinished version or export references (left
 * by a request that failed after storing its body, or by an upload never used), and files of
 * versions that failed validation, and the files of their rejected rows, once those are no longer
 * offered (REJECTED_FILE_DAYS), for the blob store to delete. Blobs of built versions are deleted by the build itself; expired exports by
 * the export purge.
 */
export async function orphanedBlobs(db: Queryable): Promise<string[]> {
  const { rows } = await db.query<{ id: string }>(
    `SELECT id FROM blobs b WHERE b.created_at < now() - interval '24 hours'
       AND NOT EXISTS (SELECT 1 FROM uploads u WHERE u.blob_id = b.id AND u.status <> 'used')
       AND NOT EXISTS (SELECT 1 FROM versions v WHERE v.blob_id = b.id AND v.status IN ('queued', 'building'))
       AND NOT EXISTS (SELECT 1 FROM exports e WHERE e.blob_id = b.id)
       AND NOT EXISTS (SELECT 1 FROM versions v WHERE v.blob_id = b.id AND v.status = 'failed'
             AND v.problem->>'type' = 'ingest-validation-failed' AND v.completed_at > now() - make_interval(days => $1))
       AND NOT EXISTS (SELECT 1 FROM versions v WHERE v.rejected_blob_id = b.id AND v.status = 'failed'
             AND v.completed_at > now() - make_interval(days => $1))`,
    [REJECTED_FILE_DAYS],
  );
  return rows.map((r) => r.id);
}
