// How a process gets its pg-boss instance, and the queues and schedules this release uses.
import { PgBoss } from 'pg-boss';
import type { Logger } from './log.ts';
import { BUILD_RETRY_LIMIT, queues } from './queue.ts';

export type BossRole = 'producer' | 'worker';

/**
 * A producer (the API) only sends jobs; a worker also runs the scheduler and maintenance.
 * Both install or upgrade pg-boss's own schema at start (it takes an advisory lock for that).
 * A worker's supervisor looks for jobs whose worker died every `superviseIntervalSeconds`
 * (QUEUE_SUPERVISE_INTERVAL_SECONDS; 10 unless given).
 */
export function createBoss(url: string, role: BossRole, log: Logger, { superviseIntervalSeconds = 10 }: { superviseIntervalSeconds?: number } = {}): PgBoss {
  const boss = new PgBoss({
    connectionString: url,
    application_name: `dataset-service-${role}-queue`,
    max: role === 'worker' ? 4 : 2,
    // Workers are woken by NOTIFY when a build is queued instead of waiting for their next poll.
    useListenNotify: role === 'worker',
    schedule: role === 'worker',
    supervise: role === 'worker',
    // How soon a build whose worker died (no heartbeat) is failed over to a retry: the supervisor
    // wakes every superviseIntervalSeconds, and fails jobs over at most every monitorIntervalSeconds.
    superviseIntervalSeconds,
    monitorIntervalSeconds: superviseIntervalSeconds,
  });
  boss.on('error', (error) => log.error({ err: error }, 'queue error'));
  return boss;
}

/**
 * Creates the queues this release uses (idempotent): producers and workers both call it. A job
 * whose worker sent no heartbeat for `heartbeatSeconds` (QUEUE_HEARTBEAT_SECONDS) is failed over
 * to a retry; a queue that exists keeps the options it was created with.
 */
export async function ensureQueues(boss: PgBoss, { heartbeatSeconds }: { heartbeatSeconds: number }): Promise<void> {
  await boss.createQueue(queues.purgeIdempotencyKeys, { retryLimit: 2, expireInSeconds: 300 });
  await boss.createQueue(queues.purgeStaleFiles, { retryLimit: 2, expireInSeconds: 900 });
  await boss.createQueue(queues.purgeOAuthRecords, { retryLimit: 2, expireInSeconds: 300 });
  await boss.createQueue(queues.purgeEvents, { retryLimit: 2, expireInSeconds: 900 });
  // Purges may overlap (each batch is idempotent); one whose worker died is retried after its heartbeat stops.
  await boss.createQueue(queues.purgeVersions, { retryLimit: 2, expireInSeconds: 4 * 3600, heartbeatSeconds });
  // One run computes every version left to backfill: at most one waits while one runs.
  await boss.createQueue(queues.backfillFigures, { policy: 'stately', retryLimit: 5, retryDelay: 60, expireInSeconds: 4 * 3600, heartbeatSeconds });
  await boss.createQueue(queues.purgeDataset, { retryLimit: 10, retryDelay: 30, retryBackoff: true, expireInSeconds: 4 * 3600, heartbeatSeconds });
  // A delivery's attempts are its own (webhookDeliveries.ts): pg-boss retries only a job that
  // failed for the service's reasons (its database away), and one whose worker died.
  await boss.createQueue(queues.deliverWebhook, { notify: true, retryLimit: 5, retryDelay: 5, retryBackoff: true, expireInSeconds: 120 });
  for (const [queue, deadLetter] of [
    [queues.buildVersion, queues.buildVersionDead],
    [queues.buildExport, queues.buildExportDead],
  ] as const) {
    await boss.createQueue(deadLetter, { retentionSeconds: 30 * 24 * 3600 });
    await boss.createQueue(queue, {
      notify: true,
      deadLetter,
      retryLimit: BUILD_RETRY_LIMIT,
      retryDelay: 2,
      retryBackoff: true,
      retryDelayMax: 60,
      // Large files take minutes; the heartbeat, not the expiry, catches a worker that died.
      expireInSeconds: 4 * 3600,
      heartbeatSeconds,
    });
  }
}

/** The schedules the workers keep. */
export async function ensureSchedules(boss: PgBoss): Promise<void> {
  await boss.schedule(queues.purgeIdempotencyKeys, '*/15 * * * *');
  await boss.schedule(queues.purgeStaleFiles, '17 * * * *');
  await boss.schedule(queues.purgeOAuthRecords, '*/30 * * * *');
  await boss.schedule(queues.purgeEvents, '41 * * * *');
  await boss.schedule(queues.purgeVersions, '23 * * * *');
  await boss.schedule(queues.backfillFigures, '*/10 * * * *');
}
