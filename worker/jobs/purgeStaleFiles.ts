// Scheduled: deletes expired exports, and unused uploads and orphaned blobs older than a day.
import type { BlobStore } from '../../shared/blobs/blobStore.ts';
import { expiredExports } from '../../shared/domain/exports.ts';
import { orphanedBlobs } from '../../shared/domain/fileRetention.ts';
import { deleteUnusedUploads } from '../../shared/domain/uploads.ts';
import type { Pool } from '../../shared/platform/db.ts';
import type { Logger } from '../../shared/platform/log.ts';

export function purgeStaleFiles(pool: Pool, blobs: BlobStore, log: Logger) {
  return async (): Promise<{ exports: number; uploads: number; blobs: number }> => {
    const exportFiles = await expiredExports(pool);
    const uploads = await deleteUnusedUploads(pool);
    const orphans = await orphanedBlobs(pool);
    for (const id of [...exportFiles, ...orphans]) await blobs.delete(id);
    const purged = { exports: exportFiles.length, uploads, blobs: orphans.length };
    log.info(purged, 'stale files purged');
    return purged;
  };
}
