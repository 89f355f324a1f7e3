// Storage of Idempotency-Key records. The HTTP side (claiming a key before a mutating call runs,
// capturing and replaying its response) is api/filters/idempotency.ts.
import type { Mode } from './apiKeys.ts';
import type { Queryable } from '../platform/db.ts';

export const IDEMPOTENCY_WINDOW = '24 hours';

export type KeyScope = { accountId: string; mode: Mode; key: string };

/**
 * What a kept answer needs to be rendered again on replay, when its bytes are not the whole of it
 * (too large to hold, or holding a live capability): one entry, named after the renderer the
 * operation declares (api/defineOperation.ts `keptAnswers`), with what that renderer starts from.
 * Kept as JSON; never a secret.
 */
export type AnswerReference = { [renderer: string]: unknown };

/** `body`: the bytes kept (for a reference: what the renderer starts from, if anything). */
export type StoredResponse = { status: number; headers: Record<string, string>; body: Buffer; streamed?: AnswerReference };

export type KeyRecord =
  | { state: 'running'; leaseExpired: boolean }
  | { state: 'done'; fingerprint: Buffer; response: StoredResponse };

type Row = {
  state: 'running' | 'done';
  lease_expired: boolean;
  fingerprint: Buffer | null;
  response_status: number | null;
  response_headers: Record<string, string> | null;
  response_body: Buffer | null;
  response_streamed: AnswerReference | null;
};

/**
 * Takes the key for this request when it is new, older than the window, or held by a request
 * whose lease ran out (its process died). True when this request now owns it and may run.
 */
export async function claimKey(db: Queryable, scope: KeyScope, owner: string, leaseMs: number): Promise<boolean> {
  const { rows } = await db.query<{ owner: string }>(
    `INSERT INTO idempotency_keys AS k (account_id, mode, key, state, owner, lease_expires_at)
     VALUES ($1, $2, $3, 'running', $4, now() + $5 * interval '1 millisecond')
     ON CONFLICT (account_id, mode, key) DO UPDATE
       SET state = 'running', owner = EXCLUDED.owner, lease_expires_at = EXCLUDED.lease_expires_at,
           created_at = now(), fingerprint = NULL, response_status = NULL, response_headers = NULL, response_body = NULL,
           response_streamed = NULL
       WHERE (k.state = 'running' AND k.lease_expires_at < now())
          OR k.created_at < now() - interval '${IDEMPOTENCY_WINDOW}'
     RETURNING owner`,
    [scope.accountId, scope.mode, scope.key, owner, leaseMs],
  );
  return rows[0]?.owner === owner;
}

export async function readKey(db: Queryable, scope: KeyScope): Promise<KeyRecord | undefined> {
  const { rows } = await db.query<Row>(
    `SELECT state, lease_expires_at < now() AS lease_expired, fingerprint, response_status, response_headers, response_body,
            response_streamed
     FROM idempotency_keys
     WHERE account_id = $1 AND mode = $2 AND key = $3 AND created_at >= now() - interval '${IDEMPOTENCY_WINDOW}'`,
    [scope.accountId, scope.mode, scope.key],
  );
  const r = rows[0];
  if (!r) return undefined;
  if (r.state === 'running') return { state: 'running', leaseExpired: r.lease_expired };
  return {
    state: 'done',
    fingerprint: r.fingerprint!,
    response: {
      status: r.response_status!,
      headers: r.response_headers ?? {},
      body: r.response_body ?? Buffer.alloc(0),
      ...(r.response_streamed && { streamed: r.response_streamed }),
    },
  };
}

export async function extendLease(db: Queryable, scope: KeyScope, owner: string, leaseMs: number): Promise<void> {
  await db.query(
    `UPDATE idempotency_keys SET lease_expires_at = now() + $5 * interval '1 millisecond'
     WHERE account_id = $1 AND mode = $2 AND key = $3 AND owner = $4 AND state = 'running'`,
    [scope.accountId, scope.mode, scope.key, owner, leaseMs],
  );
}

/** Records the answer to replay for the rest of the window. */
export async function finishKey(
  db: Queryable,
  scope: KeyScope,
  owner: string,
  outcome: { fingerprint: Buffer; response: StoredResponse },
): Promise<void> {
  await db.query(
    `UPDATE idempotency_keys
     SET state = 'done', fingerprint = $5, response_status = $6, response_headers = $7, response_body = $8, response_streamed = $9
     WHERE account_id = $1 AND mode = $2 AND key = $3 AND owner = $4`,
    [
      scope.accountId,
      scope.mode,
      scope.key,
      owner,
      outcome.fingerprint,
      outcome.response.status,
      JSON.stringify(outcome.response.headers),
      outcome.response.body,
      outcome.response.streamed ? JSON.stringify(outcome.response.streamed) : null,
    ],
  );
}

/** Gives the key up without an outcome (the answer is not one to keep). */
export async function releaseKey(db: Queryable, scope: KeyScope, owner: string): Promise<void> {
  await db.query('DELETE FROM idempotency_keys WHERE account_id = $1 AND mode = $2 AND key = $3 AND owner = $4', [
    scope.accountId,
    scope.mode,
    scope.key,
    owner,
  ]);
}

/** Deletes records older than the window; run by the worker on a schedule. */
export async function purgeExpiredKeys(db: Queryable): Promise<number> {
  const { rowCount } = await db.query(
    `DELETE FROM idempotency_keys WHERE created_at < now() - interval '${IDEMPOTENCY_WINDOW}'
       AND (state <> 'running' OR lease_expires_at < now())`,
  );
  return rowCount ?? 0;
}
