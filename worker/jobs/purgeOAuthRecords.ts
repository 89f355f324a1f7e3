// Scheduled: deletes expired OAuth records (codes, tokens, sessions, interactions) and the
// account bindings of grants that are gone.
import type { Pool } from '../../shared/platform/db.ts';
import type { Logger } from '../../shared/platform/log.ts';
import { purgeExpiredOAuthRecords } from '../../shared/oauth/records.ts';

export function purgeOAuthRecords(pool: Pool, log: Logger) {
  return async (): Promise<{ records: number; grantBindings: number }> => {
    const purged = await purgeExpiredOAuthRecords(pool);
    log.info(purged, 'expired oauth records purged');
    return purged;
  };
}
