// Scheduled: deletes expired OAuth records (codes, tokens, sessions, interactions), the account
// bindings of grants that are gone, and sign-in throttling that no longer counts.
import type { Pool } from '../../shared/platform/db.ts';
import type { Logger } from '../../shared/platform/log.ts';
import { purgeExpiredOAuthRecords } from '../../shared/oauth/records.ts';
import { purgeSignInThrottle } from '../../shared/tenancy/people.ts';

export function purgeOAuthRecords(pool: Pool, log: Logger) {
  return async (): Promise<{ records: number; grantBindings: number; signInThrottle: number }> => {
    const purged = { ...(await purgeExpiredOAuthRecords(pool)), signInThrottle: await purgeSignInThrottle(pool) };
    log.info(purged, 'expired oauth records purged');
    return purged;
  };
}
