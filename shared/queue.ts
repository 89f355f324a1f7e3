// The job queue (pg-boss in PostgreSQL): queue names and how a process gets an instance.
import { PgBoss } from 'pg-boss';
import type { Logger } from './log.ts';

export const queues = {
  purgeIdempotencyKeys: 'purge-idempotency-keys',
} as const;

export type BossRole = 'producer' | 'worker';

/**
 * A producer (the API) only sends jobs; a worker also runs the scheduler and maintenance.
 * Both install or upgrade pg-boss's own schema at start (it takes an advisory lock for that).
 */
export function createBoss(url: string, role: BossRole, log: Logger): PgBoss {
  const boss = new PgBoss({
    connectionString: url,
    application_name: `dataset-service-${role}-queue`,
    max: role === 'worker' ? 4 : 2,
    schedule: role === 'worker',
    supervise: role === 'worker',
  });
  boss.on('error', (error) => log.error({ err: error }, 'queue error'));
  return boss;
}

/** Creates the queues this release uses (idempotent) and the schedules the worker keeps. */
export async function ensureQueues(boss: PgBoss): Promise<void> {
  await boss.createQueue(queues.purgeIdempotencyKeys, { retryLimit: 2, expireInSeconds: 300 });
  await boss.schedule(queues.purgeIdempotencyKeys, '*/15 * * * *');
}
