// Every few seconds in each worker: files whose receiving process stopped its heartbeat (it died,
// or lost its database) are deleted, and the versions waiting for them fail with a problem, so
// that no version stays `building` for a file that will never arrive. Idempotent: several
// workers may sweep at once.
import type { BlobStore } from '../../shared/blobs/blobStore.ts';
import { abandonedBlobs } from '../../shared/blobs/blobRecords.ts';
import { type Pool, withTransaction } from '../../shared/platform/db.ts';
import type { Logger } from '../../shared/platform/log.ts';
import { failVersionsOfAbandonedFiles, type Views } from '../../shared/domain/versions.ts';

export function sweepAbandonedFiles(pool: Pool, blobs: BlobStore, views: Views, log: Logger, staleMs: number) {
  return async (): Promise<void> => {
    const blobIds = await abandonedBlobs(pool, staleMs);
    if (blobIds.length === 0) return;
    const versionIds = await withTransaction(pool, (client) => failVersionsOfAbandonedFiles(client, blobIds, views));
    for (const id of blobIds) await blobs.delete(id);
    log.warn({ blobIds, versionIds }, 'abandoned uploads swept');
  };
}
