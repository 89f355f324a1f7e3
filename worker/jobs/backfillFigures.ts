// At the worker's start, every ten minutes, and after a build of an account that converts to a
// reporting currency: the monthly figures of versions from before they existed
// (shared/domain/figuresBackfill.ts), one version after another until none is left; then the
// bases for conversion its active versions of several currencies lack, and their figures converted
// to each currency of the set of rates in force (shared/domain/fxAnswers.ts); then it lets go of
// the converted figures of versions no longer active.
import { backfillNextVersion, makeNextFxBasis } from '../../shared/domain/figuresBackfill.ts';
import { dropInactiveAnswers } from '../../shared/domain/fxAnswers.ts';
import type { Pool } from '../../shared/platform/db.ts';
import type { Logger } from '../../shared/platform/log.ts';

export function backfillFigures(pool: Pool, log: Logger) {
  return async (): Promise<{ versions: number; bases: number }> => {
    let versions = 0;
    for (;;) {
      const started = performance.now();
      const done = await backfillNextVersion(pool);
      if (!done) break;
      versions++;
      log.info({ versionId: done.versionId, computed: done.computed, ms: Math.round(performance.now() - started) }, 'monthly figures of an earlier version computed');
    }
    const made: string[] = []; // each once a run, should one not store
    for (;;) {
      const started = performance.now();
      const versionId = await makeNextFxBasis(pool, made);
      if (versionId === undefined) {
        const dropped = await dropInactiveAnswers(pool);
        if (dropped > 0) log.info({ answers: dropped }, 'converted figures of versions no longer active dropped');
        return { versions, bases: made.length };
      }
      made.push(versionId);
      log.info({ versionId, ms: Math.round(performance.now() - started) }, 'basis for a reporting currency and converted figures made ahead');
    }
  };
}
