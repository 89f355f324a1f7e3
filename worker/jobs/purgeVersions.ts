// Scheduled hourly: the rows of superseded versions past VERSION_RETENTION_DAYS are purged
// (shared/domain/versionRetention.ts), then contract_rows is vacuumed so that the space is reused
// at once rather than when autovacuum gets to it, and the BRIN ranges this purge and any other
// since (a deleted dataset's) deleted rows in are summarized again without them
// (vacuumAndSummarizeAgain; a range a long transaction kept the vacuum from clearing, next time).
import type { BlobStore } from '../../shared/blobs/blobStore.ts';
import { vacuumAndSummarizeAgain } from '../../shared/domain/contractRows.ts';
import { purgeVersionsPastRetention, type RetentionRun } from '../../shared/domain/versionRetention.ts';
import type { Pool } from '../../shared/platform/db.ts';
import type { Logger } from '../../shared/platform/log.ts';

export function purgeVersions(pool: Pool, blobs: BlobStore, settings: { retentionDays: number; batchRows: number }, log: Logger) {
  return async (): Promise<RetentionRun> => {
    const started = performance.now();
    const run = await purgeVersionsPastRetention(pool, blobs, settings.retentionDays, { batchRows: settings.batchRows });
    const ranges = await vacuumAndSummarizeAgain(pool);
    log.info({ ...run, ranges, ms: Math.round(performance.now() - started) }, 'superseded versions past retention purged');
    return run;
  };
}
