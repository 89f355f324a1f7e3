// At the worker's start and every ten minutes: the monthly figures of versions from before they
// existed (shared/domain/figuresBackfill.ts), one version after another until none is left.
import { backfillNextVersion } from '../../shared/domain/figuresBackfill.ts';
import type { Pool } from '../../shared/platform/db.ts';
import type { Logger } from '../../shared/platform/log.ts';

export function backfillFigures(pool: Pool, log: Logger) {
  return async (): Promise<{ versions: number }> => {
    let versions = 0;
    for (;;) {
      const started = performance.now();
      const done = await backfillNextVersion(pool);
      if (!done) return { versions };
      versions++;
      log.info({ versionId: done.versionId, computed: done.computed, ms: Math.round(performance.now() - started) }, 'monthly figures of an earlier version computed');
    }
  };
}
