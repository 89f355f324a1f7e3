// Scheduled hourly: the rows of superseded versions past VERSION_RETENTION_DAYS are purged
// (shared/domain/versionRetention.ts), then contract_rows is vacuumed so that the space is reused
// at once rather than when autovacuum gets to it, and the BRIN ranges the purge touched are
// summarized again without the rows the vacuum took (summarizeAgain).
import type { BlobStore } from '../../shared/blobs/blobStore.ts';
import { summarizeAgain } from '../../shared/domain/contractRows.ts';
import { purgeVersionsPastRetention, type RetentionRun } from '../../shared/domain/versionRetention.ts';
import type { Pool } from '../../shared/platform/db.ts';
import type { Logger } from '../../shared/platform/log.ts';

export function purgeVersions(pool: Pool, blobs: BlobStore, settings: { retentionDays: number; batchRows: number }, log: Logger) {
  return async (): Promise<Omit<RetentionRun, 'ranges'>> => {
    const started = performance.now();
    const run = await purgeVersionsPastRetention(pool, blobs, settings.retentionDays, { batchRows: settings.batchRows });
    if (run.rows > 0) {
      await pool.query('VACUUM (ANALYZE) contract_rows');
      await summarizeAgain(pool, run.ranges);
    }
    const { ranges, ...counts } = run;
    log.info({ ...counts, ranges: ranges.size, ms: Math.round(performance.now() - started) }, 'superseded versions past retention purged');
    return counts;
  };
}
