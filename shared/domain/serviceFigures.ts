// The service's figures read from the database, for /metrics: what every web and worker process
// of the fleet did, so that one scrape of any web process covers them all. Builds and exports by
// outcome with their durations (as histogram buckets) and rows; queue depth and the age of the
// oldest waiting job per queue (pg-boss's table).
import type { Queryable } from '../platform/db.ts';

/** Upper bounds of the duration buckets, in seconds. */
export const DURATION_BUCKETS = [0.1, 0.5, 1, 5, 15, 60, 300, 1800] as const;

export type Finished = { outcome: string; count: number; rows: number; seconds: number; buckets: number[] };
export type QueueFigures = { queue: string; waiting: number; active: number; oldestWaitingSeconds: number };

const bucketColumns = DURATION_BUCKETS.map((le, i) => `count(*) FILTER (WHERE d <= ${le})::int AS b${i}`).join(', ');

async function finished(db: Queryable, table: 'versions' | 'exports', start: string): Promise<Finished[]> {
  const { rows } = await db.query<Record<string, number> & { outcome: string; count: number; rows: string | null; seconds: number | null }>(
    `SELECT status AS outcome, count(*)::int AS count, sum(row_count)::text AS rows, coalesce(sum(d), 0)::float8 AS seconds, ${bucketColumns}
       FROM (SELECT status, row_count, extract(epoch FROM completed_at - ${start})::float8 AS d FROM ${table} WHERE completed_at IS NOT NULL) t
      GROUP BY status ORDER BY status`,
  );
  return rows.map((r) => ({
    outcome: r.outcome,
    count: r.count,
    rows: Number(r.rows ?? 0),
    seconds: r.seconds ?? 0,
    buckets: DURATION_BUCKETS.map((_, i) => r[`b${i}`] ?? 0),
  }));
}

/** Finished builds by outcome (active, superseded, failed): count, rows stored, seconds from start to end. */
export const finishedBuilds = (db: Queryable) => finished(db, 'versions', 'coalesce(started_at, created_at)');

/** Finished exports by outcome (ready, failed): count, rows, seconds from request to end. */
export const finishedExports = (db: Queryable) => finished(db, 'exports', 'created_at');

/** Each queue's waiting (created or retry) and active jobs, and how long the oldest waiting one has waited. */
export async function queueFigures(db: Queryable): Promise<QueueFigures[]> {
  const { rows } = await db.query<QueueFigures>(
    `SELECT name AS queue,
            count(*) FILTER (WHERE state IN ('created', 'retry'))::int AS "waiting",
            count(*) FILTER (WHERE state = 'active')::int AS "active",
            coalesce(extract(epoch FROM now() - min(created_on) FILTER (WHERE state IN ('created', 'retry'))), 0)::float8 AS "oldestWaitingSeconds"
       FROM pgboss.job WHERE state IN ('created', 'retry', 'active') GROUP BY name ORDER BY name`,
  );
  return rows;
}
