// A deleted dataset's purge (shared/domain/datasetDeletion.ts), one job per deletion.
import type { Job } from 'pg-boss';
import type { BlobStore } from '../../shared/blobs/blobStore.ts';
import { purgeDeletedDataset } from '../../shared/domain/datasetDeletion.ts';
import type { Pool } from '../../shared/platform/db.ts';
import type { Logger } from '../../shared/platform/log.ts';

export function purgeDataset(pool: Pool, blobs: BlobStore, log: Logger) {
  return async (jobs: Job<{ datasetId: string }>[]): Promise<void> => {
    for (const job of jobs) {
      const started = performance.now();
      const purged = await purgeDeletedDataset(pool, blobs, job.data.datasetId);
      log.info({ jobId: job.id, datasetId: job.data.datasetId, ...purged, ms: Math.round(performance.now() - started) }, 'deleted dataset purged');
    }
  };
}
