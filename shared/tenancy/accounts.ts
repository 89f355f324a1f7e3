// Accounts and the people linked to them (the operator's side of tenancy).
import { type Pool, type Queryable, withTransaction } from '../platform/db.ts';
import { newId, sha256 } from '../platform/ids.ts';
import { deleteGrants } from '../oauth/records.ts';

export type Account = { id: string; object: 'account'; name: string; createdAt: string };
export type Membership = {
  object: 'membership';
  accountId: string;
  personId: string;
  email: string;
  /** Whether the person already had a password: someone signed up with this email before (emails
   * are not verified, so the invitation code should reach the person by a trusted channel). */
  signedUp: boolean;
  /** pending until the person accepts with the invitation code. */
  status: 'pending' | 'active';
  /** Shown once, when the link is (still) pending. */
  invitationCode?: string;
  invitationExpiresAt?: string;
  createdAt: string;
};

type AccountRow = { id: string; name: string; created_at: Date };
const toAccount = (r: AccountRow): Account => ({ id: r.id, object: 'account', name: r.name, createdAt: r.created_at.toISOString() });

export async function createAccount(db: Queryable, name: string): Promise<Account> {
  const { rows } = await db.query<AccountRow>(
    'INSERT INTO accounts (id, name) VALUES ($1, $2) RETURNING id, name, created_at',
    [newId('acc'), name],
  );
  return toAccount(rows[0]!);
}

export async function listAccounts(db: Queryable): Promise<Account[]> {
  const { rows } = await db.query<AccountRow>('SELECT id, name, created_at FROM accounts ORDER BY created_at, id');
  return rows.map(toAccount);
}

export async function findAccount(db: Queryable, id: string): Promise<Account | undefined> {
  const { rows } = await db.query<AccountRow>('SELECT id, name, created_at FROM accounts WHERE id = $1', [id]);
  return rows[0] && toAccount(rows[0]);
}

export const INVITATION_DAYS = 7;

/**
 * Links a person to an account, creating the person (without a password) when new. The link is
 * pending until the person accepts it with the invitation code returned here (shown once, kept as
 * a digest): on sign-up, or on the consent page when they already have a password. Adding again
 * a link still pending issues a new code; an accepted link is left as it is.
 */
export async function addMember(db: Queryable, accountId: string, email: string): Promise<Membership> {
  const code = newId('inv');
  const { rows } = await db.query<{
    person_id: string;
    email: string;
    signed_up: boolean;
    created_at: Date;
    accepted_at: Date | null;
    invitation_expires_at: Date | null;
  }>(
    `WITH person AS (
       INSERT INTO people (id, email) VALUES ($2, lower($3))
       ON CONFLICT (email) DO UPDATE SET email = EXCLUDED.email
       RETURNING id, email, password_hash IS NOT NULL AS signed_up
     ), link AS (
       INSERT INTO memberships (account_id, person_id, invitation_sha256, invitation_expires_at)
       SELECT $1, id, $4, now() + make_interval(days => $5) FROM person
       ON CONFLICT (account_id, person_id) DO UPDATE
         SET invitation_sha256 = CASE WHEN memberships.accepted_at IS NULL THEN EXCLUDED.invitation_sha256 END,
             invitation_expires_at = CASE WHEN memberships.accepted_at IS NULL THEN EXCLUDED.invitation_expires_at END
       RETURNING person_id, created_at, accepted_at, invitation_expires_at
     )
     SELECT link.person_id, person.email, person.signed_up, link.created_at, link.accepted_at, link.invitation_expires_at
       FROM link JOIN person ON person.id = link.person_id`,
    [accountId, newId('per'), email, sha256(code), INVITATION_DAYS],
  );
  const r = rows[0]!;
  return {
    object: 'membership',
    accountId,
    personId: r.person_id,
    email: r.email,
    signedUp: r.signed_up,
    status: r.accepted_at ? 'active' : 'pending',
    ...(!r.accepted_at && { invitationCode: code, invitationExpiresAt: r.invitation_expires_at!.toISOString() }),
    createdAt: r.created_at.toISOString(),
  };
}

/** Unlinks a person from an account. The OAuth grants they made for it stop at once (their
 * bindings go with the membership), and their tokens are deleted. */
export async function removeMember(pool: Pool, accountId: string, email: string): Promise<{ object: 'membership'; accountId: string; email: string; removed: boolean; grantsRevoked: number }> {
  return withTransaction(pool, async (tx) => {
    const grants = await tx.query<{ grant_id: string }>(
      `SELECT g.grant_id FROM oauth_grant_accounts g JOIN people p ON p.id = g.person_id WHERE g.account_id = $1 AND p.email = lower($2)`,
      [accountId, email],
    );
    const grantIds = grants.rows.map((r) => r.grant_id);
    await deleteGrants(tx, grantIds);
    const removed = await tx.query(`DELETE FROM memberships m USING people p WHERE p.id = m.person_id AND m.account_id = $1 AND p.email = lower($2)`, [accountId, email]);
    return { object: 'membership', accountId, email: email.toLowerCase(), removed: removed.rowCount === 1, grantsRevoked: grantIds.length };
  });
}
