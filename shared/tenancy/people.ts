// People who sign in on the OAuth pages, the accounts they are linked to, and the account each
// grant acts for. A link the operator made is pending until the person accepts it with the
// invitation code they were given (see addMember); only accepted links are offered or bound.
import type { Pool, Queryable } from '../platform/db.ts';
import { withTransaction } from '../platform/db.ts';
import { newId, sha256 } from '../platform/ids.ts';
import { decoyHash, hashPassword, verifyPassword } from '../platform/passwords.ts';

export type LinkedAccount = { id: string; name: string };

export const normalizeEmail = (email: string) => email.trim().toLowerCase();

/** The account name for a new person: their email's domain, in lower case. */
export const accountNameFor = (email: string) => normalizeEmail(email).split('@').pop()!;

export type SignUpOutcome =
  | { personId: string }
  /** The email already has a password: sign in instead. */
  | 'exists'
  /** The operator added this email to an account: the invitation code proves it is theirs. */
  | 'invitation_required'
  /** The code is unknown, expired, used, or not for this email. */
  | 'invitation_invalid';

/** Accepts a pending link of this person with its invitation code; false when the code does not fit. */
async function acceptInvitation(db: Queryable, personId: string, code: string): Promise<boolean> {
  const { rowCount } = await db.query(
    `UPDATE memberships SET accepted_at = now(), invitation_sha256 = NULL, invitation_expires_at = NULL
      WHERE person_id = $1 AND invitation_sha256 = $2 AND invitation_expires_at > now() AND accepted_at IS NULL`,
    [personId, sha256(code.trim())],
  );
  return rowCount === 1;
}

/**
 * Sign-up. A new person gets an account named from their email domain, linked at once. A person
 * the operator added (no password yet) sets their password with the invitation code they were
 * given, and gets no new account.
 */
export async function signUp(pool: Pool, email: string, password: string, invitationCode?: string): Promise<SignUpOutcome> {
  const address = normalizeEmail(email);
  const passwordHash = await hashPassword(password);
  return withTransaction(pool, async (tx) => {
    const { rows } = await tx.query<{ id: string; password_hash: string | null }>(
      'SELECT id, password_hash FROM people WHERE email = $1 FOR UPDATE',
      [address],
    );
    const known = rows[0];
    if (known?.password_hash) return 'exists';
    if (known) {
      const invited = await tx.query('SELECT 1 FROM memberships WHERE person_id = $1', [known.id]);
      // Added by the operator: the code proves the email is theirs.
      if (invited.rowCount !== 0) {
        if (!invitationCode) return 'invitation_required';
        if (!(await acceptInvitation(tx, known.id, invitationCode))) return 'invitation_invalid';
        await tx.query('UPDATE people SET password_hash = $2 WHERE id = $1', [known.id, passwordHash]);
        return { personId: known.id };
      }
      // Added, then removed from every account before signing up: a new person like any other.
      if (invitationCode) return 'invitation_invalid';
      await tx.query('UPDATE people SET password_hash = $2 WHERE id = $1', [known.id, passwordHash]);
      await ownAccount(tx, known.id, address);
      return { personId: known.id };
    }
    if (invitationCode) return 'invitation_invalid';
    const personId = newId('per');
    // A concurrent sign-up with the same email loses on the unique email and sees 'exists'.
    const inserted = await tx.query('INSERT INTO people (id, email, password_hash) VALUES ($1, $2, $3) ON CONFLICT (email) DO NOTHING', [
      personId,
      address,
      passwordHash,
    ]);
    if (inserted.rowCount === 0) return 'exists';
    await ownAccount(tx, personId, address);
    return { personId };
  });
}

/** A new person's own account, named from their email domain, linked at once. */
async function ownAccount(db: Queryable, personId: string, email: string): Promise<void> {
  const accountId = newId('acc');
  await db.query('INSERT INTO accounts (id, name) VALUES ($1, $2)', [accountId, accountNameFor(email)]);
  await db.query('INSERT INTO memberships (account_id, person_id, accepted_at) VALUES ($1, $2, now())', [accountId, personId]);
}

/** A signed-in person joins an account they were invited to. */
export function redeemInvitation(db: Queryable, personId: string, code: string): Promise<boolean> {
  return acceptInvitation(db, personId, code);
}

export const SIGN_IN_LOCK = { failures: 10, minutes: 15 } as const;

/**
 * The person, when the email and password match; 'locked' after too many attempts in a row without
 * success (see SIGN_IN_LOCK). The attempt is counted before the password is checked, in one
 * statement, so that parallel guesses cannot all pass the lock check first. A wrong email costs as
 * much time as a wrong password.
 */
export async function signIn(db: Queryable, email: string, password: string): Promise<{ personId: string } | 'locked' | undefined> {
  const address = normalizeEmail(email);
  const { rows } = await db.query<{ id: string; password_hash: string }>(
    `UPDATE people SET failed_sign_ins = failed_sign_ins + 1,
            sign_in_locked_until = CASE WHEN failed_sign_ins + 1 >= $2 THEN now() + make_interval(mins => $3) END
      WHERE email = $1 AND password_hash IS NOT NULL AND NOT coalesce(sign_in_locked_until > now(), false)
      RETURNING id, password_hash`,
    [address, SIGN_IN_LOCK.failures, SIGN_IN_LOCK.minutes],
  );
  const person = rows[0];
  if (!person) {
    const locked = await db.query('SELECT 1 FROM people WHERE email = $1 AND sign_in_locked_until > now()', [address]);
    if (locked.rowCount !== 0) return 'locked';
  }
  const matches = await verifyPassword(password, person?.password_hash ?? (await decoyHash));
  if (!person || !matches) return undefined;
  await db.query('UPDATE people SET failed_sign_ins = 0, sign_in_locked_until = NULL WHERE id = $1', [person.id]);
  return { personId: person.id };
}

/** Lets a locked-out person sign in again at once (operator). */
export async function unlockSignIn(db: Queryable, email: string): Promise<boolean> {
  const { rowCount } = await db.query('UPDATE people SET failed_sign_ins = 0, sign_in_locked_until = NULL WHERE email = $1', [normalizeEmail(email)]);
  return rowCount === 1;
}

export async function emailOf(db: Queryable, personId: string): Promise<string | undefined> {
  const { rows } = await db.query<{ email: string }>('SELECT email FROM people WHERE id = $1', [personId]);
  return rows[0]?.email;
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
