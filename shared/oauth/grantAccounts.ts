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

/** Notes that a grant's token was used now; at most one write a minute per grant. */
export async function noteGrantUsed(db: Queryable, grantId: string): Promise<void> {
  await db.query(
    `UPDATE oauth_grant_accounts SET last_used_at = now() WHERE grant_id = $1 AND (last_used_at IS NULL OR last_used_at < now() - interval '1 minute')`,
    [grantId],
  );
}

export type Connection = {
  grantId: string;
  clientId: string;
  programName: string;
  accountId: string;
  accountName: string;
  scopes: string[];
  grantedAt: Date;
  lastUsedAt: Date | null;
};

/** The programs a person connected (their grants), newest first: the program, the account it acts for, what it may do, when. */
export async function connectionsOfPerson(db: Queryable, personId: string): Promise<Connection[]> {
  const { rows } = await db.query<{
    grant_id: string;
    client_id: string;
    client_name: string | null;
    account_id: string;
    account_name: string;
    scopes: string | null;
    created_at: Date;
    last_used_at: Date | null;
  }>(
    `SELECT b.grant_id, g.payload->>'clientId' AS client_id, c.payload->>'client_name' AS client_name, b.account_id, a.name AS account_name,
            (SELECT string_agg(DISTINCT s, ' ') FROM jsonb_each_text(coalesce(g.payload->'resources', '{}'::jsonb)) r, regexp_split_to_table(r.value, ' ') s) AS scopes,
            b.created_at, b.last_used_at
       FROM oauth_grant_accounts b
       JOIN oauth_records g ON g.model = 'Grant' AND g.id_sha256 = sha256(convert_to(b.grant_id, 'UTF8'))
       JOIN accounts a ON a.id = b.account_id
       LEFT JOIN oauth_records c ON c.model = 'Client' AND c.id_sha256 = sha256(convert_to(g.payload->>'clientId', 'UTF8'))
      WHERE b.person_id = $1
      ORDER BY b.created_at DESC`,
    [personId],
  );
  return rows.map((r) => ({
    grantId: r.grant_id,
    clientId: r.client_id,
    programName: r.client_name ?? r.client_id,
    accountId: r.account_id,
    accountName: r.account_name,
    scopes: r.scopes ? r.scopes.split(' ').sort() : [],
    grantedAt: r.created_at,
    lastUsedAt: r.last_used_at,
  }));
}
