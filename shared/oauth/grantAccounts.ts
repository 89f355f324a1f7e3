// The account each OAuth grant acts for (`oauth_grant_accounts`): bound on the consent page when
// the person's link to the account is accepted, gone with the grant or the link. The only writer
// of that table.
import type { Queryable } from '../platform/db.ts';

/** Binds a grant to the account it acts for, when the person's link to that account is accepted. */
export async function bindGrantToAccount(db: Queryable, grantId: string, personId: string, accountId: string): Promise<boolean> {
  const { rowCount } = await db.query(
    `INSERT INTO oauth_grant_accounts (grant_id, account_id, person_id)
     SELECT $1, account_id, person_id FROM memberships WHERE person_id = $2 AND account_id = $3 AND accepted_at IS NOT NULL`,
    [grantId, personId, accountId],
  );
  return rowCount === 1;
}

/** The account a grant acts for; none once the person's link to it is gone. */
export async function accountOfGrant(db: Queryable, grantId: string): Promise<string | undefined> {
  const { rows } = await db.query<{ account_id: string }>('SELECT account_id FROM oauth_grant_accounts WHERE grant_id = $1', [grantId]);
  return rows[0]?.account_id;
}

/** The grants a person made to act for an account. */
export async function grantsOfMember(db: Queryable, accountId: string, email: string): Promise<string[]> {
  const { rows } = await db.query<{ grant_id: string }>(
    `SELECT g.grant_id FROM oauth_grant_accounts g JOIN people p ON p.id = g.person_id WHERE g.account_id = $1 AND p.email = lower($2)`,
    [accountId, email],
  );
  return rows.map((r) => r.grant_id);
}

/** Forgets the accounts of these grants (they are revoked). */
export async function unbindGrants(db: Queryable, grantIds: string[]): Promise<void> {
  await db.query('DELETE FROM oauth_grant_accounts WHERE grant_id = ANY($1)', [grantIds]);
}

/** Deletes the bindings of grants that no longer exist (an hour on, so as not to race a consent). */
export async function purgeUnboundGrants(db: Queryable): Promise<number> {
  const { rowCount } = await db.query(
    `DELETE FROM oauth_grant_accounts g
      WHERE created_at < now() - interval '1 hour'
        AND NOT EXISTS (SELECT 1 FROM oauth_records r WHERE r.model = 'Grant' AND r.id_sha256 = sha256(convert_to(g.grant_id, 'UTF8')))`,
  );
  return rowCount ?? 0;
}
