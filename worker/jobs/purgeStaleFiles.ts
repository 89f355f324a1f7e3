// Scheduled: deletes expired exports, and unused uploads and orphaned blobs older than a day.
import { purgeStaleFiles as purge } from '../../shared/blobs.ts';
import { purgeExpiredExports } from '../../shared/exports.ts';
import type { Pool } from '../../shared/db.ts';
import type { Logger } from '../../shared/log.ts';

export function purgeStaleFiles(pool: Pool, log: Logger) {
  return async (): Promise<{ exports: number; uploads: number; blobs: number }> => {
    const purged = { exports: await purgeExpiredExports(pool), ...(await purge(pool)) };
    log.info(purged, 'stale files purged');
    return purged;
  };
}
