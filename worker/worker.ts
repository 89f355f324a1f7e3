// The worker's parts: a pool, the usage meter and pg-boss consumers for every queue.
import type { Job, PgBoss } from 'pg-boss';
import { createBlobStore } from '../shared/blobs/createBlobStore.ts';
import type { Config } from '../shared/platform/config.ts';
import { createPool, type Pool } from '../shared/platform/db.ts';
import { allStarted } from '../shared/platform/lifecycle.ts';
import type { Logger } from '../shared/platform/log.ts';
import { migrate } from '../shared/platform/migrate.ts';
import { createBoss, ensureQueues, ensureSchedules } from '../shared/platform/boss.ts';
import { queues } from '../shared/platform/queue.ts';
import { UsageMeter } from '../shared/tenancy/usage.ts';
import { BuildThreads, type OnBuilt } from './buildThreads.ts';
import { buildExport, buildExportDead } from './jobs/buildExport.ts';
import { buildVersion, buildVersionDead } from './jobs/buildVersion.ts';
import { purgeIdempotencyKeys } from './jobs/purgeIdempotencyKeys.ts';
import { purgeStaleFiles } from './jobs/purgeStaleFiles.ts';
import { purgeOAuthRecords } from './jobs/purgeOAuthRecords.ts';
import { sweepAbandonedFiles } from './jobs/sweepAbandonedFiles.ts';
import { deliverWebhooks } from './jobs/deliverWebhook.ts';
import { purgeEvents } from './jobs/purgeEvents.ts';
import { purgeDataset } from './jobs/purgeDataset.ts';
import { backfillFigures } from './jobs/backfillFigures.ts';
import { purgeVersions } from './jobs/purgeVersions.ts';
import { DeliveryPump } from './deliveryPump.ts';
import { EventRelay } from './eventRelay.ts';
import { WebhookPoster } from './webhookPost.ts';
import { SecretBox } from '../shared/platform/sealedSecrets.ts';
import { LANE_BANDS, type Lane } from '../shared/domain/fairQueues.ts';

/**
 * `concurrency` build consumers. pg-boss fetches the next job after a poll delay unless the worker
 * was notified meanwhile; a NOTIFY that arrived while it was busy covers one job only, so each
 * consumer wakes itself after every job: a backlog drains back to back (measured: 50 queued small
 * builds took 12 s with polling, about a second like this), and an empty queue costs one fetch.
 */
async function workBuilds(
  boss: PgBoss,
  queue: string,
  concurrency: number,
  handler: (jobs: Job<never>[]) => Promise<void>,
  band?: { min: number; max: number },
): Promise<void> {
  for (let i = 0; i < concurrency; i++) {
    let id = '';
    id = await boss.work(
      queue,
      // groupConcurrency 1: builds of one dataset (the job's group) never run at once, anywhere,
      // in either lane. `band`: the priorities of this consumer's lane (fairQueues.ts).
      {
        batchSize: 1,
        pollingIntervalSeconds: 0.5,
        notifyPollingIntervalSeconds: 0.5,
        groupConcurrency: 1,
        ...(band && { minPriority: band.min, maxPriority: band.max }),
      },
      async (jobs: Job<never>[]) => {
        try {
          await handler(jobs);
        } finally {
          boss.notifyWorker(id);
        }
      },
    );
  }
}

/** Runs `task` every `everyMs`, one run at a time; a failed run is logged and the next one tries again. */
function periodically(task: () => Promise<void>, everyMs: number, log: Logger, failed: string): { stop(): void } {
  let running = false;
  const timer = setInterval(() => {
    if (running) return;
    running = true;
    task()
      .catch((error: unknown) => log.warn({ err: error }, failed))
      .finally(() => (running = false));
  }, everyMs);
  timer.unref();
  return { stop: () => clearInterval(timer) };
}

/**
 * The nice value of the build threads that take files of any size (their tally threads run at 10):
 * on a busy machine they give way to the express lane's, whose builds a request waits on.
 */
const LARGE_BUILD_NICE = 5;

export type RunningWorker = { boss: PgBoss; pool: Pool; stop(): Promise<void> };

export type WorkerOptions = {
  /** Told how each version build ended (its outcome, and whether its reads were counted in Node or SQL). */
  onBuilt?: OnBuilt;
};

export async function startWorker(config: Config, databaseUrl: string, log: Logger, options: WorkerOptions = {}): Promise<RunningWorker> {
  const pool = createPool(databaseUrl, config.databasePoolSize, 'dataset-service-worker');
  const meter = new UsageMeter(pool, log, config.usageFlushMs);
  const boss = createBoss(databaseUrl, 'worker', log, { superviseIntervalSeconds: config.queueSuperviseIntervalSeconds });
  const blobs = await createBlobStore(config, pool);
  // Version builds run on threads of their own, whose memory is capped: see buildThreads.ts; small
  // files on threads of the express lane, which larger ones never take. Exports stay here: COPY TO
  // streams into the blob store under backpressure, in bounded memory whatever the rows hold.
  const threads = new BuildThreads({ config, databaseUrl, tallyThread: true, heapMb: config.buildHeapMb, nice: LARGE_BUILD_NICE }, config.workerConcurrency, log, options.onBuilt);
  const expressThreads = new BuildThreads(
    { config, databaseUrl, tallyThread: false, heapMb: config.expressBuildHeapMb, nice: 0 },
    config.expressBuildConcurrency,
    log,
    options.onBuilt,
  );
  const box = new SecretBox(config.webhookSecretsKey, pool);
  const poster = new WebhookPoster({ timeoutMs: config.webhookTimeoutMs, maxSockets: config.webhookConcurrency, developmentInstance: config.developmentInstance });
  const retryDelaysSeconds = config.webhookRetryDelaysSeconds;
  const deliveries = new DeliveryPump(
    boss,
    { concurrency: config.webhookConcurrency, perAccount: config.webhookAccountConcurrency },
    deliverWebhooks({ pool, boss, box, poster, retryDelaysSeconds, log }),
    log,
  );
  const relay = new EventRelay(pool, boss, databaseUrl, log, () => deliveries.wake());
  try {
    await migrate(pool);
    // The lanes' threads load the build's modules while pg-boss starts: together, not one after another.
    await allStarted([threads.start(), expressThreads.start('without'), boss.start()]);
    await ensureQueues(boss, { heartbeatSeconds: config.queueHeartbeatSeconds });
    await ensureSchedules(boss);
    await boss.work(queues.purgeIdempotencyKeys, purgeIdempotencyKeys(pool, log));
    await boss.work(queues.purgeStaleFiles, purgeStaleFiles(pool, blobs, log));
    await boss.work(queues.purgeOAuthRecords, purgeOAuthRecords(pool, log));
    await boss.work(queues.purgeEvents, purgeEvents(pool, log));
    await boss.work(queues.purgeDataset, purgeDataset(pool, blobs, log));
    const retention = { retentionDays: config.versionRetentionDays, batchRows: config.purgeBatchRows };
    await boss.work(queues.purgeVersions, purgeVersions(pool, blobs, retention, log));
    await boss.work(queues.backfillFigures, backfillFigures(pool, log));
    await boss.send(queues.backfillFigures, {}); // versions from before the monthly figures, if any: at once, not in ten minutes
    const builds = (lane: Lane, on: BuildThreads) => buildVersion(pool, boss, on, meter, config, log, lane);
    await workBuilds(boss, queues.buildVersion, config.workerConcurrency, builds('build', threads), LANE_BANDS.build);
    await workBuilds(boss, queues.buildVersion, config.expressBuildConcurrency, builds('build-express', expressThreads), LANE_BANDS['build-express']);
    await workBuilds(boss, queues.buildExport, config.workerConcurrency, buildExport(pool, blobs, config, meter, log));
    // Jobs whose last attempt failed, or never returned (pg-boss failed them when their heartbeat
    // stopped): what they were building must not stay queued or building for ever.
    await boss.work(queues.buildVersionDead, buildVersionDead(pool, config, log));
    await boss.work(queues.buildExportDead, buildExportDead(pool, blobs, config, log));
    deliveries.start();
    await relay.start();
  } catch (error) {
    await relay.stop();
    await deliveries.stop(0);
    await boss.stop({ graceful: false }).catch(() => {});
    await threads.close();
    await expressThreads.close();
    await pool.end();
    throw error;
  }
  meter.start();
  // Not a pg-boss schedule: those run once a minute at best, and an abandoned upload must fail sooner.
  const sweep = periodically(sweepAbandonedFiles(pool, blobs, config, log, config.blobWriterTimeoutMs), config.sweepIntervalMs, log, 'sweep of abandoned files failed');
  log.info('worker started');

  const stop = async () => {
    // Graceful: no new jobs are fetched; running ones get the shutdown timeout to finish.
    sweep.stop();
    await relay.stop();
    await deliveries.stop(config.shutdownTimeoutMs);
    await boss.stop({ graceful: true, timeout: config.shutdownTimeoutMs });
    poster.close();
    // Connections pg-boss is still closing may report the database going away; that is expected now.
    boss.removeAllListeners('error').on('error', () => {});
    await threads.close();
    await expressThreads.close();
    await meter.stop();
    await blobs.close();
    await pool.end();
  };
  return { boss, pool, stop };
}
