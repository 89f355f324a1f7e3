// Scheduled: deletes idempotency records older than the 24-hour window.
import type { Pool } from '../../shared/db.ts';
import { purgeExpiredKeys } from '../../shared/idempotency.ts';
import type { Logger } from '../../shared/log.ts';

export function purgeIdempotencyKeys(pool: Pool, log: Logger) {
  return async (): Promise<{ purged: number }> => {
    const purged = await purgeExpiredKeys(pool);
    log.info({ purged }, 'expired idempotency keys purged');
    return { purged };
  };
}
