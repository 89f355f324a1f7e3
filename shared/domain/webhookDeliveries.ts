// Webhook deliveries: the relay fans each new event out to the endpoints subscribed to it, as a
// delivery row and a pg-boss job each, in one transaction that also marks the event dispatched
// (events.ts); a worker sends it (worker/jobs/deliverWebhook.ts) and records every attempt. A
// failed attempt is retried after the next delay of the schedule with a new job; after the last
// one the delivery has failed. The only writer of `webhook_deliveries` and `webhook_attempts`.
//
// Fair between accounts and endpoints (contract, "Sharing the service fairly"): each job is in its
// account's group, and the workers take at most a few jobs of one group at once (pg-boss's
// groupConcurrency, across the fleet), so one account's slow or dead endpoints can hold only those
// few slots; and each job's priority is minus its rank among its endpoint's pending deliveries, so
// the workers take every endpoint's first delivery before any endpoint's second (round robin
// between endpoints), and a new endpoint's delivery is not queued behind another's backlog.
import type { PgBoss } from 'pg-boss';
import { type Pool, type Queryable, withTransaction } from '../platform/db.ts';
import { inTransaction, queues } from '../platform/queue.ts';
import { takeUndispatched } from './events.ts';

/** What a delivery job carries. */
export type DeliveryJob = { deliveryId: string };

/** Past this many pending deliveries of one endpoint, its later ones share one rank (bounds the count). */
const RANK_CAP = 10_000;

/** SQL: how many deliveries of the endpoint `endpoint` (an expression) are pending, at most RANK_CAP. */
const pendingOf = (endpoint: string) =>
  `(SELECT count(*)::int FROM (SELECT 1 FROM webhook_deliveries p WHERE p.endpoint_id = ${endpoint} AND p.status = 'pending' LIMIT ${RANK_CAP}) p)`;

/** A delivery job's options: its account's group, and its rank among its endpoint's pending deliveries as priority. */
const jobOptions = (accountId: string, rank: number) => ({ group: { id: accountId }, priority: -Math.min(rank, RANK_CAP) });

/**
 * One step of the relay: up to `limit` undispatched events fanned out to their endpoints. The
 * number of events taken (0: nothing was waiting).
 */
export async function dispatchEvents(pool: Pool, boss: PgBoss, limit: number): Promise<number> {
  return withTransaction(pool, async (client) => {
    const events = await takeUndispatched(client, limit);
    if (events.length === 0) return 0;
    // The pending count is read in the statement's snapshot: before this batch's rows, which
    // row_number() ranks after them.
    const { rows } = await client.query<{ id: string; account_id: string; rank: number }>(
      `WITH inserted AS (
         INSERT INTO webhook_deliveries (event_id, endpoint_id, status, next_attempt_at)
         SELECT e.id, w.id, 'pending', clock_timestamp()
         FROM events e JOIN webhook_endpoints w ON w.account_id = e.account_id AND w.mode = e.mode
         WHERE e.id = ANY($1) AND w.status = 'enabled' AND w.deleted_at IS NULL AND (e.type = ANY(w.events) OR '*' = ANY(w.events))
         ORDER BY e.seq
         RETURNING id, endpoint_id),
       pending AS (SELECT endpoint_id, ${pendingOf('endpoint_id')} AS n FROM (SELECT DISTINCT endpoint_id FROM inserted) d)
       SELECT i.id, w.account_id, (p.n + row_number() OVER (PARTITION BY i.endpoint_id ORDER BY i.id))::int AS rank
       FROM inserted i JOIN pending p USING (endpoint_id) JOIN webhook_endpoints w ON w.id = i.endpoint_id
       ORDER BY i.id`,
      [events.map((e) => e.id)],
    );
    if (rows.length > 0) {
      await boss.insert(
        queues.deliverWebhook,
        rows.map((r) => ({ data: { deliveryId: String(r.id) } satisfies DeliveryJob, ...jobOptions(r.account_id, r.rank) })),
        { db: inTransaction(client) },
      );
    }
    return events.length;
  });
}

export type PendingDelivery = { id: string; eventId: string; endpointId: string; accountId: string; attempts: number };

/** The delivery if it still waits for an attempt. */
export async function pendingDelivery(db: Queryable, id: string): Promise<PendingDelivery | undefined> {
  const { rows } = await db.query<{ id: string; event_id: string; endpoint_id: string; account_id: string; attempts: number }>(
    `SELECT d.id, d.event_id, d.endpoint_id, w.account_id, d.attempts
       FROM webhook_deliveries d JOIN webhook_endpoints w ON w.id = d.endpoint_id WHERE d.id = $1 AND d.status = 'pending'`,
    [id],
  );
  const r = rows[0];
  return r && { id: String(r.id), eventId: r.event_id, endpointId: r.endpoint_id, accountId: r.account_id, attempts: r.attempts };
}

/** The rank a new job of this endpoint takes: after its pending deliveries. */
async function rankOf(db: Queryable, endpointId: string): Promise<number> {
  const { rows } = await db.query<{ n: number }>(`SELECT ${pendingOf('$1')} AS n`, [endpointId]);
  return rows[0]!.n + 1;
}

export type Attempt = { responseStatus: number | null; durationMs: number; error: string | null };

/**
 * Records an attempt and what follows: delivered; retried after `retryInSeconds` (a new job, in
 * the same transaction); or failed for good when `retryInSeconds` is undefined.
 */
export async function recordAttempt(
  pool: Pool,
  boss: PgBoss,
  delivery: PendingDelivery,
  attempt: Attempt,
  outcome: { delivered: true } | { delivered: false; retryInSeconds: number | undefined },
): Promise<void> {
  await withTransaction(pool, async (client) => {
    const number = delivery.attempts + 1;
    await client.query(
      `INSERT INTO webhook_attempts (delivery_id, attempt, response_status, duration_ms, error) VALUES ($1, $2, $3, $4, $5)
       ON CONFLICT DO NOTHING`,
      [delivery.id, number, attempt.responseStatus, Math.round(attempt.durationMs), attempt.error],
    );
    const retry = !outcome.delivered && outcome.retryInSeconds !== undefined ? outcome.retryInSeconds : undefined;
    const status = outcome.delivered ? 'delivered' : retry === undefined ? 'failed' : 'pending';
    await client.query(
      `UPDATE webhook_deliveries SET attempts = $2, status = $3,
         next_attempt_at = CASE WHEN $3 = 'pending' THEN clock_timestamp() + make_interval(secs => $4) END,
         finished_at = CASE WHEN $3 = 'pending' THEN NULL ELSE clock_timestamp() END
       WHERE id = $1`,
      [delivery.id, number, status, retry ?? 0],
    );
    if (retry !== undefined) {
      await boss.send(queues.deliverWebhook, { deliveryId: delivery.id } satisfies DeliveryJob, {
        startAfter: new Date(Date.now() + retry * 1000),
        ...jobOptions(delivery.accountId, await rankOf(client, delivery.endpointId)),
        db: inTransaction(client),
      });
    }
  });
}

/** A delivery whose endpoint no longer receives (disabled or deleted): nothing is sent. */
export async function skipDelivery(db: Queryable, id: string): Promise<void> {
  await db.query(`UPDATE webhook_deliveries SET status = 'skipped', finished_at = clock_timestamp() WHERE id = $1 AND status = 'pending'`, [id]);
}

/** The endpoints an event was sent to (or is being sent to). */
export async function endpointsOfEvent(db: Queryable, eventId: string): Promise<string[]> {
  const { rows } = await db.query<{ endpoint_id: string }>('SELECT DISTINCT endpoint_id FROM webhook_deliveries WHERE event_id = $1 ORDER BY endpoint_id', [eventId]);
  return rows.map((r) => r.endpoint_id);
}

/** Sends an event again to an endpoint (the operator's redelivery): a new delivery with its job. */
export async function redeliver(pool: Pool, boss: PgBoss, eventId: string, endpointId: string): Promise<string> {
  return withTransaction(pool, async (client) => {
    const rank = await rankOf(client, endpointId);
    const { rows } = await client.query<{ id: string; account_id: string }>(
      `INSERT INTO webhook_deliveries (event_id, endpoint_id, status, next_attempt_at) VALUES ($1, $2, 'pending', clock_timestamp())
       RETURNING id, (SELECT account_id FROM webhook_endpoints WHERE id = $2) AS account_id`,
      [eventId, endpointId],
    );
    const id = String(rows[0]!.id);
    await boss.send(queues.deliverWebhook, { deliveryId: id } satisfies DeliveryJob, { ...jobOptions(rows[0]!.account_id, rank), db: inTransaction(client) });
    return id;
  });
}

export type DeliveryReport = {
  id: string;
  eventId: string;
  eventType: string;
  endpointId: string;
  url: string;
  status: string;
  attempts: number;
  lastStatus: number | null;
  lastError: string | null;
  lastDurationMs: number | null;
  createdAt: Date;
  nextAttemptAt: Date | null;
};

/** Recent deliveries, newest first, with their last attempt (the operator's view). */
export async function recentDeliveries(
  db: Queryable,
  filter: { endpointId?: string | undefined; eventId?: string | undefined; limit: number },
): Promise<DeliveryReport[]> {
  const { rows } = await db.query(
    `SELECT d.id, d.event_id, e.type, d.endpoint_id, w.url, d.status, d.attempts, d.created_at, d.next_attempt_at,
            a.response_status, a.error, a.duration_ms
     FROM webhook_deliveries d JOIN events e ON e.id = d.event_id JOIN webhook_endpoints w ON w.id = d.endpoint_id
     LEFT JOIN LATERAL (SELECT * FROM webhook_attempts a WHERE a.delivery_id = d.id ORDER BY attempt DESC LIMIT 1) a ON true
     WHERE ($1::text IS NULL OR d.endpoint_id = $1) AND ($2::text IS NULL OR d.event_id = $2)
     ORDER BY d.id DESC LIMIT $3`,
    [filter.endpointId ?? null, filter.eventId ?? null, filter.limit],
  );
  return rows.map((r) => ({
    id: String(r.id),
    eventId: r.event_id,
    eventType: r.type,
    endpointId: r.endpoint_id,
    url: r.url,
    status: r.status,
    attempts: r.attempts,
    lastStatus: r.response_status,
    lastError: r.error,
    lastDurationMs: r.duration_ms,
    createdAt: r.created_at,
    nextAttemptAt: r.next_attempt_at,
  }));
}

/** Deliveries by outcome, for /metrics. */
export async function deliveryCounts(db: Queryable): Promise<{ status: string; count: number }[]> {
  const { rows } = await db.query<{ status: string; count: string }>('SELECT status, count(*) FROM webhook_deliveries GROUP BY status');
  return rows.map((r) => ({ status: r.status, count: Number(r.count) }));
}
