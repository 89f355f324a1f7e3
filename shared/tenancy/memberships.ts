// Memberships: the people linked to an account. A link the operator made is pending until the
// person accepts it with the invitation code they were given (see addMember); only accepted links
// are offered on the consent page or bound to a grant. The only writer of `memberships`.
import { type Pool, type Queryable, withTransaction } from '../platform/db.ts';
import { newId, sha256 } from '../platform/ids.ts';
import { grantsOfMember } from '../oauth/grantAccounts.ts';
import { deleteGrants } from '../oauth/records.ts';
import { personByEmail } from './people.ts';

export type LinkedAccount = { id: string; name: string };

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

export const INVITATION_DAYS = 7;

/**
 * Links a person to an account, creating the person (without a password) when new. The link is
 * pending until the person accepts it with the invitation code returned here (shown once, kept as
 * a digest): on sign-up, or on the consent page when they already have a password. Adding again
 * a link still pending issues a new code; an accepted link is left as it is.
 */
export async function addMember(db: Pool, accountId: string, email: string): Promise<Membership> {
  const code = newId('inv');
  return withTransaction(db, async (tx) => {
    const person = await personByEmail(tx, email);
    const { rows } = await tx.query<{ created_at: Date; accepted_at: Date | null; invitation_expires_at: Date | null }>(
      `INSERT INTO memberships (account_id, person_id, invitation_sha256, invitation_expires_at)
       VALUES ($1, $2, $3, now() + make_interval(days => $4))
       ON CONFLICT (account_id, person_id) DO UPDATE
         SET invitation_sha256 = CASE WHEN memberships.accepted_at IS NULL THEN EXCLUDED.invitation_sha256 END,
             invitation_expires_at = CASE WHEN memberships.accepted_at IS NULL THEN EXCLUDED.invitation_expires_at END
       RETURNING created_at, accepted_at, invitation_expires_at`,
      [accountId, person.id, sha256(code), INVITATION_DAYS],
    );
    const r = rows[0]!;
    return {
      object: 'membership',
      accountId,
      personId: person.id,
      email: person.email,
      signedUp: person.signedUp,
      status: r.accepted_at ? 'active' : 'pending',
      ...(!r.accepted_at && { invitationCode: code, invitationExpiresAt: r.invitation_expires_at!.toISOString() }),
      createdAt: r.created_at.toISOString(),
    };
  });
}

/** Accepts a pending link of this person with its invitation code; false when the code does not fit. */
export async function acceptInvitation(db: Queryable, personId: string, code: string): Promise<boolean> {
  const { rowCount } = await db.query(
    `UPDATE memberships SET accepted_at = now(), invitation_sha256 = NULL, invitation_expires_at = NULL
      WHERE person_id = $1 AND invitation_sha256 = $2 AND invitation_expires_at > now() AND accepted_at IS NULL`,
    [personId, sha256(code.trim())],
  );
  return rowCount === 1;
}

/** A signed-in person joins an account they were invited to. */
export function redeemInvitation(db: Queryable, personId: string, code: string): Promise<boolean> {
  return acceptInvitation(db, personId, code);
}

/** Links a person to an account they own (a new person's own account): accepted at once. */
export async function linkOwner(db: Queryable, accountId: string, personId: string): Promise<void> {
  await db.query('INSERT INTO memberships (account_id, person_id, accepted_at) VALUES ($1, $2, now())', [accountId, personId]);
}

/** Whether the operator linked this person to any account (accepted or not). */
export async function hasMemberships(db: Queryable, personId: string): Promise<boolean> {
  const { rowCount } = await db.query('SELECT 1 FROM memberships WHERE person_id = $1', [personId]);
  return rowCount !== 0;
}

/** The accounts the person may connect: accepted links only. */
export async function accountsOf(db: Queryable, personId: string): Promise<LinkedAccount[]> {
  const { rows } = await db.query<LinkedAccount>(
    `SELECT a.id, a.name FROM memberships m JOIN accounts a ON a.id = m.account_id
      WHERE m.person_id = $1 AND m.accepted_at IS NOT NULL ORDER BY a.name, a.id`,
    [personId],
  );
  return rows;
}

export async function isMember(db: Queryable, personId: string, accountId: string): Promise<boolean> {
  const { rowCount } = await db.query('SELECT 1 FROM memberships WHERE person_id = $1 AND account_id = $2 AND accepted_at IS NOT NULL', [
    personId,
    accountId,
  ]);
  return rowCount === 1;
}

/** Unlinks a person from an account. The OAuth grants they made for it stop at once (their
 * bindings go with the membership), and their tokens are deleted. */
export async function removeMember(pool: Pool, accountId: string, email: string): Promise<{ object: 'membership'; accountId: string; email: string; removed: boolean; grantsRevoked: number }> {
  return withTransaction(pool, async (tx) => {
    const grantIds = await grantsOfMember(tx, accountId, email);
    await deleteGrants(tx, grantIds);
    const removed = await tx.query(`DELETE FROM memberships m USING people p WHERE p.id = m.person_id AND m.account_id = $1 AND p.email = lower($2)`, [accountId, email]);
    return { object: 'membership', accountId, email: email.toLowerCase(), removed: removed.rowCount === 1, grantsRevoked: grantIds.length };
  });
}
