// OAuth records maintained outside the provider (operator, worker, our pages): kept apart from
// the adapter so that what uses them does not load oidc-provider (~45 MiB in a process).
import type { Queryable } from '../platform/db.ts';
import { sha256 } from '../platform/ids.ts';

/** Ends a person's sign-in in a browser (the provider then asks them to sign in again). */
export async function endSession(db: Queryable, sessionUid: string): Promise<void> {
  await db.query(`DELETE FROM oauth_records WHERE model = 'Session' AND uid = $1`, [sessionUid]);
}

/** Deletes grants, every code and token issued under them, and their account bindings. */
export async function deleteGrants(db: Queryable, grantIds: string[]): Promise<void> {
  if (grantIds.length === 0) return;
  await db.query(`DELETE FROM oauth_records WHERE grant_id = ANY($1) OR (model = 'Grant' AND id_sha256 = ANY($2))`, [grantIds, grantIds.map((id) => sha256(id))]);
  await db.query('DELETE FROM oauth_grant_accounts WHERE grant_id = ANY($1)', [grantIds]);
}

/** Deletes records past their expiry (with a margin for the provider's clock tolerance) and the
 * account bindings of grants that no longer exist. */
export async function purgeExpiredOAuthRecords(db: Queryable): Promise<{ records: number; grantBindings: number }> {
  const records = await db.query(`DELETE FROM oauth_records WHERE expires_at < now() - interval '1 minute'`);
  const bindings = await db.query(
    `DELETE FROM oauth_grant_accounts g
      WHERE created_at < now() - interval '1 hour'
        AND NOT EXISTS (SELECT 1 FROM oauth_records r WHERE r.model = 'Grant' AND r.id_sha256 = sha256(convert_to(g.grant_id, 'UTF8')))`,
  );
  return { records: records.rowCount ?? 0, grantBindings: bindings.rowCount ?? 0 };
}
