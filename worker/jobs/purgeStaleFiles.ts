// Scheduled: deletes expired exports, and unused uploads and orphaned blobs older than a day.
import type { BlobStore } from '../../shared/blobStore.ts';
import { staleFiles } from '../../shared/blobs.ts';
import { expiredExports } from '../../shared/exports.ts';
import type { Pool } from '../../shared/db.ts';
import type { Logger } from '../../shared/log.ts';

export function purgeStaleFiles(pool: Pool, blobs: BlobStore, log: Logger) {
  return async (): Promise<{ exports: number; uploads: number; blobs: number }> => {
    const exportFiles = await expiredExports(pool);
    const stale = await staleFiles(pool);
    for (const id of [...exportFiles, ...stale.blobIds]) await blobs.delete(id);
    const purged = { exports: exportFiles.length, uploads: stale.uploads, blobs: stale.blobIds.length };
    log.info(purged, 'stale files purged');
    return purged;
  };
}
