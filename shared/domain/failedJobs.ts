// For operators: the build jobs that failed or were dead-lettered, and retrying one. Reads
// pg-boss's job table (schema pgboss) directly: its API cannot list jobs by state.
import type { PgBoss } from 'pg-boss';
import type { Queryable } from '../platform/db.ts';
import { queues } from '../platform/queue.ts';
import { reopenExport } from './exports.ts';
import { type FairTurn, priorityOf, turnOf } from './fairQueues.ts';
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
    // In its dataset's group (builds of one dataset one at a time) and its turn (fairQueues.ts), as first sent.
    const turn = turnOf(failed.data as { turn?: FairTurn });
    const datasetId = failed.data['datasetId'];
    const newId = await boss.send(queue, failed.data, {
      ...(queue === queues.buildVersion && typeof datasetId === 'string' && { group: { id: datasetId } }),
      ...(turn && { priority: priorityOf(turn) }),
    });
    await boss.deleteJob(failed.queue, id);
    return { id: newId!, queue, retried: true };
  }
  // A job that exhausted its retries also left a copy in the dead letter queue: drop that one.
  await db.query(`DELETE FROM pgboss.job WHERE source_id = $1 AND name = ANY($2)`, [id, DEAD]);
  await boss.retry(failed.queue, id);
  return { id, queue: failed.queue, retried: true };
}

export type JobSummary = {
  id: string;
  queue: string;
  state: string;
  attempts: number;
  data: Record<string, unknown>;
  error: string | null;
  createdAt: string;
  startedAt: string | null;
  completedAt: string | null;
};

export const JOB_STATES = ['created', 'retry', 'active', 'completed', 'cancelled', 'failed'] as const;

/** The service's jobs in any state (newest first), for the operator; `state` and `queue` narrow. */
export async function listJobs(db: Queryable, filter: { state?: string | undefined; queue?: string | undefined; limit: number }): Promise<JobSummary[]> {
  const { rows } = await db.query<{
    id: string;
    name: string;
    state: string;
    retry_count: number;
    data: Record<string, unknown>;
    output: { message?: string } | null;
    created_on: Date;
    started_on: Date | null;
    completed_on: Date | null;
  }>(
    `SELECT id, name, state, retry_count, data, output, created_on, started_on, completed_on FROM pgboss.job
     WHERE name = ANY($1) AND ($2::text IS NULL OR state::text = $2) AND ($3::text IS NULL OR name = $3)
     ORDER BY created_on DESC LIMIT $4`,
    [Object.values(queues), filter.state ?? null, filter.queue ?? null, filter.limit],
  );
  return rows.map((r) => ({
    id: r.id,
    queue: r.name,
    state: r.state,
    attempts: r.retry_count + (r.state === 'created' ? 0 : 1),
    data: r.data,
    error: r.state === 'failed' ? (r.output?.message ?? null) : null,
    createdAt: r.created_on.toISOString(),
    startedAt: r.started_on?.toISOString() ?? null,
    completedAt: r.completed_on?.toISOString() ?? null,
  }));
}

/** Jobs per queue and state, every queue of the service (the operator's queue depths). */
export async function jobCounts(db: Queryable): Promise<{ queue: string; [state: string]: number | string }[]> {
  const { rows } = await db.query<{ queue: string; state: string; n: number }>(
    `SELECT name AS queue, state::text AS state, count(*)::int AS n FROM pgboss.job WHERE name = ANY($1) GROUP BY name, state`,
    [Object.values(queues)],
  );
  const byQueue = new Map<string, { queue: string; [state: string]: number | string }>();
  for (const queue of Object.values(queues)) byQueue.set(queue, { queue, ...Object.fromEntries(JOB_STATES.map((s) => [s, 0])) });
  for (const r of rows) byQueue.get(r.queue)![r.state] = r.n;
  return [...byQueue.values()];
}
