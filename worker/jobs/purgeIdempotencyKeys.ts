// Scheduled: deletes idempotency records older than the 24-hour window.
import type { Pool } from '../../shared/platform/db.ts';
import { purgeExpiredKeys } from '../../shared/tenancy/idempotency.ts';
import type { Logger } from '../../shared/platform/log.ts';

export function purgeIdempotencyKeys(pool: Pool, log: Logger) {
  return async (): Promise<{ purged: number }> => {
    const purged = await purgeExpiredKeys(pool);
    log.info({ purged }, 'expired idempotency keys purged');
    return { purged };
  };
}
