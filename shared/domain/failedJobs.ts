// For operators: the build jobs that failed or were dead-lettered, and retrying one. Reads
// pg-boss's job table (schema pgboss) directly: its API cannot list jobs by state.
import type { PgBoss } from 'pg-boss';
import type { Queryable } from '../platform/db.ts';
import { queues } from '../platform/queue.ts';
import { reopenExport } from './exports.ts';
import { reopenVersion } from './versions.ts';

const MAIN = [queues.buildVersion, queues.buildExport];
const DEAD = [queues.buildVersionDead, queues.buildExportDead];
const SOURCE_OF: Record<string, string> = { [queues.buildVersionDead]: queues.buildVersion, [queues.buildExportDead]: queues.buildExport };

export type FailedJob = {
  id: string;
  queue: string;
  state: string;
  deadLettered: boolean;
  data: Record<string, unknown>;
  attempts: number;
  error: string | null;
  createdAt: string;
  completedAt: string | null;
};

type Row = {
  id: string;
  name: string;
  state: string;
  data: Record<string, unknown>;
  retry_count: number;
  output: { message?: string } | null;
  source_output: { message?: string } | null;
  source_retry_count: number | null;
  created_on: Date;
  completed_on: Date | null;
};

const toJob = (r: Row): FailedJob => ({
  id: r.id,
  queue: r.name,
  state: r.state,
  deadLettered: DEAD.includes(r.name as (typeof DEAD)[number]),
  data: r.data,
  attempts: (r.source_retry_count ?? r.retry_count) + 1,
  error: r.output?.message ?? r.source_output?.message ?? null,
  createdAt: r.created_on.toISOString(),
  completedAt: r.completed_on?.toISOString() ?? null,
});

/**
 * Failed build jobs, and every job in a dead-letter queue: the worker consumes those (it fails
 * what they were building), and they stay listed, and retryable, until they are retried or purged.
 */
export async function listFailedJobs(db: Queryable): Promise<FailedJob[]> {
  const { rows } = await db.query<Row>(
    `SELECT id, name, state, data, retry_count, output, source_output, source_retry_count, created_on, completed_on FROM pgboss.job
     WHERE (name = ANY($1) AND state = 'failed') OR name = ANY($2)
     ORDER BY created_on DESC LIMIT 500`,
    [MAIN, DEAD],
  );
  return rows.map(toJob);
}

export class NotRetryable extends Error {}

/** Makes the job's version or export buildable again; false when it is done or failed for good. */
async function reopen(db: Queryable, data: Record<string, unknown>): Promise<boolean> {
  if (typeof data['versionId'] === 'string') return reopenVersion(db, data['versionId']);
  if (typeof data['exportId'] === 'string') return reopenExport(db, data['exportId']);
  return false;
}

/** Retries a failed or dead-lettered build job. Undefined when there is no such job. */
export async function retryJob(db: Queryable, boss: PgBoss, id: string): Promise<{ id: string; queue: string; retried: true } | undefined> {
  const failed = (await listFailedJobs(db)).find((j) => j.id === id);
  if (!failed) return undefined;
  if (!(await reopen(db, failed.data))) throw new NotRetryable(`job ${id} is for a version or export that is built or failed for good; nothing to retry`);
  if (failed.deadLettered) {
    const queue = SOURCE_OF[failed.queue]!;
    const newId = await boss.send(queue, failed.data);
    await boss.deleteJob(failed.queue, id);
    return { id: newId!, queue, retried: true };
  }
  // A job that exhausted its retries also left a copy in the dead letter queue: drop that one.
  await db.query(`DELETE FROM pgboss.job WHERE source_id = $1 AND name = ANY($2)`, [id, DEAD]);
  await boss.retry(failed.queue, id);
  return { id, queue: failed.queue, retried: true };
}
