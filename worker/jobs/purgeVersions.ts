// Scheduled hourly: the rows of superseded versions past VERSION_RETENTION_DAYS are purged
// (shared/domain/versionRetention.ts), then contract_rows is vacuumed so that the space is reused
// at once rather than when autovacuum gets to it, and the BRIN ranges the purge touched are
// summarized again without the rows the vacuum took (summarizeAgain), with those deleted datasets'
// purges touched since the last run (keepRangesToSummarize).
import type { BlobStore } from '../../shared/blobs/blobStore.ts';
import { forgetRangesSummarized, rangesToSummarize, summarizeAgain } from '../../shared/domain/contractRows.ts';
import { purgeVersionsPastRetention, type RetentionRun } from '../../shared/domain/versionRetention.ts';
import type { Pool } from '../../shared/platform/db.ts';
import type { Logger } from '../../shared/platform/log.ts';

export function purgeVersions(pool: Pool, blobs: BlobStore, settings: { retentionDays: number; batchRows: number }, log: Logger) {
  return async (): Promise<Omit<RetentionRun, 'ranges'>> => {
    const started = performance.now();
    const run = await purgeVersionsPastRetention(pool, blobs, settings.retentionDays, { batchRows: settings.batchRows });
    const datasets = await rangesToSummarize(pool);
    if (run.rows > 0 || datasets.length > 0) {
      await pool.query('VACUUM (ANALYZE) contract_rows');
      await summarizeAgain(pool, [...run.ranges, ...datasets]);
      await forgetRangesSummarized(pool, datasets);
    }
    const { ranges, ...counts } = run;
    log.info({ ...counts, ranges: ranges.size, datasetRanges: datasets.length, ms: Math.round(performance.now() - started) }, 'superseded versions past retention purged');
    return counts;
  };
}
