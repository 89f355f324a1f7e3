// Webhook endpoints (contract, "Events and webhooks"): per account and mode, a URL and the event
// types it takes. The signing secret (`whsec_` + base64 of 32 random bytes) is shown once, at
// creation, and kept sealed (shared/platform/sealedSecrets.ts). A live endpoint takes https only;
// a test-mode one takes http too. Neither takes a loopback, private, link-local or unique-local
// address, except a test-mode endpoint on a development instance (its BASE_URL a loopback
// address): checked here for addresses written in the URL, and at each delivery on the resolved
// address (worker/webhookPost.ts). The only writer of `webhook_endpoints`.
import { randomBytes } from 'node:crypto';
import { isIP } from 'node:net';
import { EVENT_TYPE_NAMES } from '../contract/events.ts';
import { type Pool, type Queryable } from '../platform/db.ts';
import { isLoopbackHost, isPublicAddress } from '../platform/addresses.ts';
import { newId } from '../platform/ids.ts';
import { badRequest } from '../platform/problems.ts';
import type { SecretBox } from '../platform/sealedSecrets.ts';
import type { Tenant } from './datasets.ts';

export type WebhookEndpoint = {
  id: string;
  object: 'webhook_endpoint';
  url: string;
  events: string[];
  description: string | null;
  status: 'enabled' | 'disabled';
  createdAt: string;
};

type Row = {
  id: string;
  url: string;
  events: string[];
  description: string | null;
  status: 'enabled' | 'disabled';
  created_at: Date;
};

const COLUMNS = 'id, url, events, description, status, created_at';

const toEndpoint = (r: Row): WebhookEndpoint => ({
  id: r.id,
  object: 'webhook_endpoint',
  url: r.url,
  events: r.events,
  description: r.description,
  status: r.status,
  createdAt: r.created_at.toISOString(),
});

/** Where this instance may send webhooks: a development instance sends test-mode events anywhere. */
export type UrlPolicy = { developmentInstance: boolean };

/** Whether this mode's deliveries may go to any address (else public addresses only). */
export const anyAddressFor = (mode: Tenant['mode'], policy: UrlPolicy) => mode === 'test' && policy.developmentInstance;

/** 400 unless the URL may receive this mode's events (see the top of this file). */
export function checkEndpointUrl(url: string, mode: Tenant['mode'], policy: UrlPolicy): void {
  const refuse = (message: string) => badRequest('The url cannot receive webhooks.', [{ field: 'url', code: 'invalid', message }]);
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw refuse('Not an absolute URL.');
  }
  if (parsed.protocol !== 'https:' && parsed.protocol !== 'http:') throw refuse('Only http and https URLs take webhooks.');
  if (parsed.username || parsed.password) throw refuse('A URL with credentials in it is not taken: authenticate deliveries by their signature.');
  if (mode === 'live' && parsed.protocol !== 'https:') throw refuse('A live endpoint must use https (test mode takes http, for local development).');
  if (anyAddressFor(mode, policy)) return;
  const host = parsed.hostname.replace(/^\[|\]$/g, '');
  if (isLoopbackHost(host) || (isIP(host) !== 0 && !isPublicAddress(host))) {
    throw refuse(
      mode === 'live'
        ? 'A live endpoint cannot be a loopback, private, link-local or unique-local address.'
        : 'A test-mode endpoint cannot be a loopback, private, link-local or unique-local address, except on a development instance (one whose BASE_URL is a loopback address).',
    );
  }
}

/** Every event type, or the wildcard alone. */
function checkEvents(events: string[]): void {
  const unknown = events.filter((e) => e !== '*' && !(EVENT_TYPE_NAMES as string[]).includes(e));
  if (unknown.length > 0 || (events.includes('*') && events.length > 1)) {
    throw badRequest('The events are not valid.', [
      { field: 'events', code: 'invalid', message: `Event types are ${EVENT_TYPE_NAMES.join(', ')}; or ["*"] alone for all of them.` },
    ]);
  }
}

export const newEndpointSecret = () => `whsec_${randomBytes(32).toString('base64')}`;

export async function createEndpoint(
  pool: Pool,
  box: SecretBox,
  tenant: Tenant,
  input: { url: string; events: string[]; description?: string | undefined },
  policy: UrlPolicy,
): Promise<{ endpoint: WebhookEndpoint; secret: string }> {
  checkEndpointUrl(input.url, tenant.mode, policy);
  checkEvents(input.events);
  const secret = newEndpointSecret();
  const { rows } = await pool.query<Row>(
    `INSERT INTO webhook_endpoints (id, account_id, mode, url, events, description, status, secret_sealed)
     VALUES ($1, $2, $3, $4, $5, $6, 'enabled', $7) RETURNING ${COLUMNS}`,
    [newId('we'), tenant.accountId, tenant.mode, input.url, [...new Set(input.events)], input.description ?? null, await box.seal(secret)],
  );
  return { endpoint: toEndpoint(rows[0]!), secret };
}

export async function findEndpoint(db: Queryable, tenant: Tenant, id: string): Promise<WebhookEndpoint | undefined> {
  const { rows } = await db.query<Row>(
    `SELECT ${COLUMNS} FROM webhook_endpoints WHERE id = $1 AND account_id = $2 AND mode = $3 AND deleted_at IS NULL`,
    [id, tenant.accountId, tenant.mode],
  );
  return rows[0] && toEndpoint(rows[0]);
}

/** Newest first; the cursor is the id of the last endpoint of the previous page. */
export async function listEndpoints(db: Queryable, tenant: Tenant, query: { limit: number; cursor?: string | undefined }) {
  const { rows } = await db.query<Row>(
    `SELECT ${COLUMNS} FROM webhook_endpoints
     WHERE account_id = $1 AND mode = $2 AND deleted_at IS NULL
       AND ($3::text IS NULL OR seq < (SELECT seq FROM webhook_endpoints c WHERE c.id = $3 AND c.account_id = $1 AND c.mode = $2))
     ORDER BY seq DESC LIMIT $4`,
    [tenant.accountId, tenant.mode, query.cursor ?? null, query.limit + 1],
  );
  const data = rows.slice(0, query.limit).map(toEndpoint);
  return { object: 'list' as const, data, nextCursor: rows.length > query.limit ? data.at(-1)!.id : null };
}

/** Changes what is given; enabling it again also forgets its failures. Undefined when there is no such endpoint. */
export async function updateEndpoint(
  db: Queryable,
  tenant: Tenant,
  id: string,
  patch: { url?: string | undefined; events?: string[] | undefined; description?: string | undefined; status?: 'enabled' | 'disabled' | undefined },
  policy: UrlPolicy,
): Promise<WebhookEndpoint | undefined> {
  if (patch.url !== undefined) checkEndpointUrl(patch.url, tenant.mode, policy);
  if (patch.events !== undefined) checkEvents(patch.events);
  const { rows } = await db.query<Row>(
    `UPDATE webhook_endpoints SET url = coalesce($4, url), events = coalesce($5, events), description = coalesce($6, description),
       status = coalesce($7, status), failing_since = CASE WHEN $7 = 'enabled' THEN NULL ELSE failing_since END
     WHERE id = $1 AND account_id = $2 AND mode = $3 AND deleted_at IS NULL RETURNING ${COLUMNS}`,
    [id, tenant.accountId, tenant.mode, patch.url ?? null, patch.events ? [...new Set(patch.events)] : null, patch.description ?? null, patch.status ?? null],
  );
  return rows[0] && toEndpoint(rows[0]);
}

/** Deletes the endpoint: it receives nothing more (deliveries under way are dropped). False when there is none. */
export async function deleteEndpoint(db: Queryable, tenant: Tenant, id: string): Promise<boolean> {
  const { rowCount } = await db.query(
    `UPDATE webhook_endpoints SET deleted_at = now() WHERE id = $1 AND account_id = $2 AND mode = $3 AND deleted_at IS NULL`,
    [id, tenant.accountId, tenant.mode],
  );
  return rowCount === 1;
}

/** What a delivery needs of its endpoint; `receiving` is false once it is disabled or deleted. */
export async function endpointForDelivery(
  db: Queryable,
  id: string,
): Promise<{ id: string; url: string; mode: Tenant['mode']; receiving: boolean; secretSealed: Buffer } | undefined> {
  const { rows } = await db.query<{ id: string; url: string; mode: Tenant['mode']; receiving: boolean; secret_sealed: Buffer }>(
    `SELECT id, url, mode, status = 'enabled' AND deleted_at IS NULL AS receiving, secret_sealed FROM webhook_endpoints WHERE id = $1`,
    [id],
  );
  const r = rows[0];
  return r && { id: r.id, url: r.url, mode: r.mode, receiving: r.receiving, secretSealed: r.secret_sealed };
}

/**
 * After a delivery's attempt: a success clears the endpoint's failures; a failure starts them (or
 * goes on), and an endpoint whose every delivery failed for `disableAfterMs` is disabled.
 * Whether it was disabled now.
 */
export async function noteEndpointOutcome(db: Queryable, id: string, delivered: boolean, disableAfterMs: number): Promise<boolean> {
  if (delivered) {
    await db.query('UPDATE webhook_endpoints SET failing_since = NULL WHERE id = $1 AND failing_since IS NOT NULL', [id]);
    return false;
  }
  const { rows } = await db.query<{ disabled: boolean }>(
    `UPDATE webhook_endpoints SET failing_since = coalesce(failing_since, now()),
       status = CASE WHEN failing_since < now() - make_interval(secs => $2 / 1000.0) THEN 'disabled' ELSE status END
     WHERE id = $1 RETURNING status = 'disabled' AND failing_since < now() - make_interval(secs => $2 / 1000.0) AS disabled`,
    [id, disableAfterMs],
  );
  return rows[0]?.disabled ?? false;
}

/** Whose endpoint it is (the operator's redelivery checks it takes the event's account and mode). */
export async function endpointOwner(db: Queryable, id: string): Promise<{ accountId: string; mode: Tenant['mode']; deleted: boolean } | undefined> {
  const { rows } = await db.query<{ account_id: string; mode: Tenant['mode']; deleted: boolean }>(
    'SELECT account_id, mode, deleted_at IS NOT NULL AS deleted FROM webhook_endpoints WHERE id = $1',
    [id],
  );
  return rows[0] && { accountId: rows[0].account_id, mode: rows[0].mode, deleted: rows[0].deleted };
}
