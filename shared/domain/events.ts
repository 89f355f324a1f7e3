// Events (contract, "Events and webhooks"): written in the transaction of the change they report,
// so that a change rolled back has no event (the outbox), with `data.object` as the resource's GET
// showed it then. A NOTIFY at commit wakes the workers' relay (webhookDeliveries.ts), which fans
// new events out to the webhook endpoints. Read by GET /v1/events; kept 30 days. The only writer
// of `events`.
import { EVENT_RETENTION_DAYS, type EventType } from '../contract/events.ts';
import type { Queryable } from '../platform/db.ts';
import { newId } from '../platform/ids.ts';

export const EVENTS_RECORDED_CHANNEL = 'events_recorded';

type Tenant = { accountId: string; mode: 'test' | 'live' };
type Page<T> = { object: 'list'; data: T[]; nextCursor: string | null };

export type Event = {
  id: string;
  object: 'event';
  type: EventType;
  mode: 'test' | 'live';
  createdAt: string;
  data: { object: unknown };
};

type Row = { id: string; type: EventType; mode: 'test' | 'live'; created_at: Date; data: string };

const COLUMNS = `id, type, mode, created_at, data::text AS data`;

/**
 * The event as the API and webhooks show it. `data` is kept as json text (not jsonb), so that the
 * object's members stay in the order its GET renders them.
 */
const toEvent = (r: Row): Event => ({
  id: r.id,
  object: 'event',
  type: r.type,
  mode: r.mode,
  createdAt: r.created_at.toISOString(),
  data: JSON.parse(r.data) as { object: unknown },
});

/** Records an event of the dataset's account and mode, inside the caller's transaction. */
export async function recordEvent(db: Queryable, datasetId: string, type: EventType, object: unknown): Promise<void> {
  await db.query(
    `WITH recorded AS (
       INSERT INTO events (id, account_id, mode, type, data)
       SELECT $1, account_id, mode, $3, $4::json FROM datasets WHERE id = $2 RETURNING id)
     SELECT pg_notify($5, '') FROM recorded`,
    [newId('evt'), datasetId, type, JSON.stringify({ object }), EVENTS_RECORDED_CHANNEL],
  );
}

/** Records an event of an account and mode that no dataset holds (a set of exchange rates), inside the caller's transaction. */
export async function recordAccountEvent(db: Queryable, tenant: Tenant, type: EventType, object: unknown): Promise<void> {
  await db.query(
    `WITH recorded AS (INSERT INTO events (id, account_id, mode, type, data) VALUES ($1, $2, $3, $4, $5::json) RETURNING id)
     SELECT pg_notify($6, '') FROM recorded`,
    [newId('evt'), tenant.accountId, tenant.mode, type, JSON.stringify({ object }), EVENTS_RECORDED_CHANNEL],
  );
}

/** Newest first; the cursor is the id of the last event of the previous page. */
export async function listEvents(
  db: Queryable,
  tenant: Tenant,
  query: { limit: number; cursor?: string | undefined; type?: EventType | undefined },
): Promise<Page<Event>> {
  const { rows } = await db.query<Row>(
    `SELECT ${COLUMNS} FROM events
     WHERE account_id = $1 AND mode = $2 AND created_at > now() - make_interval(days => $6)
       AND ($3::text IS NULL OR type = $3)
       AND ($4::text IS NULL OR seq < (SELECT seq FROM events c WHERE c.id = $4 AND c.account_id = $1 AND c.mode = $2))
     ORDER BY seq DESC
     LIMIT $5`,
    [tenant.accountId, tenant.mode, query.type ?? null, query.cursor ?? null, query.limit + 1, EVENT_RETENTION_DAYS],
  );
  const data = rows.slice(0, query.limit).map(toEvent);
  return { object: 'list', data, nextCursor: rows.length > query.limit ? data.at(-1)!.id : null };
}

export async function findEvent(db: Queryable, tenant: Tenant, id: string): Promise<Event | undefined> {
  const { rows } = await db.query<Row>(
    `SELECT ${COLUMNS} FROM events WHERE id = $1 AND account_id = $2 AND mode = $3 AND created_at > now() - make_interval(days => $4)`,
    [id, tenant.accountId, tenant.mode, EVENT_RETENTION_DAYS],
  );
  return rows[0] && toEvent(rows[0]);
}

/** An event by id alone (deliveries, the operator). */
export async function eventById(db: Queryable, id: string): Promise<(Event & { accountId: string }) | undefined> {
  const { rows } = await db.query<Row & { account_id: string }>(`SELECT ${COLUMNS}, account_id FROM events WHERE id = $1`, [id]);
  return rows[0] && { ...toEvent(rows[0]), accountId: rows[0].account_id };
}

/**
 * Takes up to `limit` events not yet fanned out, oldest first, locked for the caller's transaction
 * (other relays skip them), and marks them dispatched: the caller fans them out in the same
 * transaction, so that an event is dispatched exactly when its deliveries exist.
 */
export async function takeUndispatched(db: Queryable, limit: number): Promise<{ id: string; accountId: string; mode: string; type: EventType }[]> {
  const { rows } = await db.query<{ id: string; account_id: string; mode: string; type: EventType }>(
    `UPDATE events e SET dispatched_at = clock_timestamp()
     FROM (SELECT id FROM events WHERE dispatched_at IS NULL ORDER BY seq LIMIT $1 FOR UPDATE SKIP LOCKED) t
     WHERE e.id = t.id RETURNING e.id, e.account_id, e.mode, e.type`,
    [limit],
  );
  return rows.map((r) => ({ id: r.id, accountId: r.account_id, mode: r.mode, type: r.type }));
}

/** Deletes events past their retention (their deliveries and attempts go with them). */
export async function deleteOldEvents(db: Queryable): Promise<number> {
  const { rowCount } = await db.query(`DELETE FROM events WHERE created_at < now() - make_interval(days => $1)`, [EVENT_RETENTION_DAYS]);
  return rowCount ?? 0;
}
