// oidc-provider's records (`oauth_records`: one table for every model, ids kept as SHA-256
// digests), the only writer of that table: for the provider's adapter (adapter.ts) and for what
// maintains them outside the provider (operator, worker, our pages). Kept apart from the adapter
// so that what uses them does not load oidc-provider (~45 MiB in a process).
import type { Queryable } from '../platform/db.ts';
import { sha256 } from '../platform/ids.ts';
import { purgeUnboundGrants, unbindGrants } from './grantAccounts.ts';

/** Ends a person's sign-in in a browser (the provider then asks them to sign in again). */
export async function endSession(db: Queryable, sessionUid: string): Promise<void> {
  await db.query(`DELETE FROM oauth_records WHERE model = 'Session' AND uid = $1`, [sessionUid]);
}

/** Deletes grants, every code and token issued under them, and their account bindings. */
export async function deleteGrants(db: Queryable, grantIds: string[]): Promise<void> {
  if (grantIds.length === 0) return;
  await db.query(`DELETE FROM oauth_records WHERE grant_id = ANY($1) OR (model = 'Grant' AND id_sha256 = ANY($2))`, [grantIds, grantIds.map((id) => sha256(id))]);
  await unbindGrants(db, grantIds);
}

/**
 * How long a client registration (POST /oauth/register) is kept without use: one to which no
 * authorization was granted for this long (since it registered, or since its last grant was
 * saved) and that holds no grant any more is deleted. Registration is open to anyone, so what
 * nobody uses must not pile up.
 */
export const UNUSED_CLIENT_DAYS = 7;

/** Deletes records past their expiry (with a margin for the provider's clock tolerance), client
 * registrations unused for UNUSED_CLIENT_DAYS, and the account bindings of grants that no longer exist. */
export async function purgeExpiredOAuthRecords(db: Queryable): Promise<{ records: number; unusedClients: number; grantBindings: number }> {
  const records = await db.query(`DELETE FROM oauth_records WHERE expires_at < now() - interval '1 minute'`);
  const unusedClients = await db.query(
    `DELETE FROM oauth_records c
      WHERE c.model = 'Client' AND coalesce(c.used_at, c.created_at) < now() - make_interval(days => $1)
        AND NOT EXISTS (SELECT 1 FROM oauth_records g WHERE g.model = 'Grant' AND g.payload->>'clientId' = c.payload->>'client_id')`,
    [UNUSED_CLIENT_DAYS],
  );
  const grantBindings = await purgeUnboundGrants(db);
  return { records: records.rowCount ?? 0, unusedClients: unusedClients.rowCount ?? 0, grantBindings };
}

/** A grant was saved for this client: it is in use (see UNUSED_CLIENT_DAYS). */
export async function noteClientUsed(db: Queryable, clientId: string): Promise<void> {
  await db.query(`UPDATE oauth_records SET used_at = now() WHERE model = 'Client' AND id_sha256 = $1`, [sha256(clientId)]);
}

/** A stored record: the provider's payload, and when it was used (codes, refresh tokens). */
export type OAuthRecord = { payload: Record<string, unknown>; consumed_at: Date | null };

/** How long a used authorization code is kept to recognise a replay: as long as its grant (and so
 * any token it led to, refreshes included) can live. */
const USED_CODE_KEPT = '365 days';

export async function upsertRecord(
  db: Queryable,
  record: { model: string; id: string; payload: Record<string, unknown>; grantId: string | undefined; uid: string | undefined; expiresIn: number | undefined },
): Promise<void> {
  await db.query(
    `INSERT INTO oauth_records (model, id_sha256, payload, grant_id, uid, expires_at)
     VALUES ($1, $2, $3, $4, $5, CASE WHEN $6::int IS NULL THEN NULL ELSE now() + make_interval(secs => $6::int) END)
     ON CONFLICT (model, id_sha256) DO UPDATE
       SET payload = EXCLUDED.payload, grant_id = EXCLUDED.grant_id, uid = EXCLUDED.uid, expires_at = EXCLUDED.expires_at`,
    [record.model, sha256(record.id), record.payload, record.grantId ?? null, record.uid ?? null, record.expiresIn ?? null],
  );
}

/** The unexpired record of this model and id. */
export async function findRecord(db: Queryable, model: string, id: string): Promise<OAuthRecord | undefined> {
  const { rows } = await db.query<OAuthRecord>(
    `SELECT payload, consumed_at FROM oauth_records
      WHERE model = $1 AND id_sha256 = $2 AND (expires_at IS NULL OR expires_at > now())`,
    [model, sha256(id)],
  );
  return rows[0];
}

/** The unexpired record of this model with this uid (sessions, interactions). */
export async function findRecordByUid(db: Queryable, model: string, uid: string): Promise<OAuthRecord | undefined> {
  const { rows } = await db.query<OAuthRecord>(
    `SELECT payload, consumed_at FROM oauth_records
      WHERE model = $1 AND uid = $2 AND (expires_at IS NULL OR expires_at > now())`,
    [model, uid],
  );
  return rows[0];
}

/**
 * Marks a record used, in one conditional update: of two concurrent uses exactly one gets true.
 * A used code is kept for USED_CODE_KEPT, so that presenting it again is recognised as a replay.
 */
export async function consumeRecord(db: Queryable, model: string, id: string): Promise<boolean> {
  const { rowCount } = await db.query(
    `UPDATE oauth_records
        SET consumed_at = now(),
            expires_at = CASE WHEN model = 'AuthorizationCode' THEN now() + interval '${USED_CODE_KEPT}' ELSE expires_at END
      WHERE model = $1 AND id_sha256 = $2 AND consumed_at IS NULL AND (expires_at IS NULL OR expires_at > now())`,
    [model, sha256(id)],
  );
  return rowCount === 1;
}

/** The grant of a record that was used; undefined when it was not (or has none). */
export async function grantOfUsedCode(db: Queryable, model: string, id: string): Promise<string | undefined> {
  const { rows } = await db.query<{ grant_id: string | null }>(
    'SELECT grant_id FROM oauth_records WHERE model = $1 AND id_sha256 = $2 AND consumed_at IS NOT NULL',
    [model, sha256(id)],
  );
  return rows[0]?.grant_id ?? undefined;
}

/** Whether the grant's access and refresh tokens are both saved. */
export async function tokensSaved(db: Queryable, grantId: string): Promise<boolean> {
  const { rows } = await db.query<{ n: number }>(
    `SELECT count(DISTINCT model)::int AS n FROM oauth_records WHERE model IN ('AccessToken', 'RefreshToken') AND grant_id = $1`,
    [grantId],
  );
  return rows[0]!.n === 2;
}

export async function deleteRecord(db: Queryable, model: string, id: string): Promise<void> {
  await db.query('DELETE FROM oauth_records WHERE model = $1 AND id_sha256 = $2', [model, sha256(id)]);
}

export async function deleteRecordsOfGrant(db: Queryable, model: string, grantId: string): Promise<void> {
  await db.query('DELETE FROM oauth_records WHERE model = $1 AND grant_id = $2', [model, grantId]);
}
