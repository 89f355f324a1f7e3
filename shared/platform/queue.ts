// The job queue (pg-boss in PostgreSQL): queue names, and the enqueueing inside a caller's
// transaction. Without pg-boss itself, which a build thread need not load (shared/platform/boss.ts).
import type { Queryable } from './db.ts';

export const queues = {
  purgeIdempotencyKeys: 'purge-idempotency-keys',
  purgeStaleFiles: 'purge-stale-files',
  purgeOAuthRecords: 'purge-oauth-records',
  buildVersion: 'build-version',
  buildVersionDead: 'build-version-dead',
  buildExport: 'build-export',
  buildExportDead: 'build-export-dead',
  deliverWebhook: 'deliver-webhook',
  purgeEvents: 'purge-events',
  purgeDataset: 'purge-dataset',
  purgeVersions: 'purge-versions',
  backfillFigures: 'backfill-figures',
} as const;

/** Builds: a few retries with backoff; a worker that dies stops its heartbeat and the job is retried. */
export const BUILD_RETRY_LIMIT = 3;

/** pg-boss enqueues through the caller's transaction, so a job exists only if what asks for it does. */
export const inTransaction = (client: Queryable) => ({ executeSql: (text: string, values?: unknown[]) => client.query(text, values) });
