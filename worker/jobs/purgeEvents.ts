// Scheduled: deletes events past their 30 days, with their deliveries and attempts.
import { deleteOldEvents } from '../../shared/domain/events.ts';
import type { Pool } from '../../shared/platform/db.ts';
import type { Logger } from '../../shared/platform/log.ts';

export function purgeEvents(pool: Pool, log: Logger) {
  return async (): Promise<{ events: number }> => {
    const events = await deleteOldEvents(pool);
    log.info({ events }, 'old events purged');
    return { events };
  };
}
