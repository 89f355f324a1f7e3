// People who sign in on the OAuth pages, the accounts they are linked to, and the account each
// grant acts for.
import type { Pool, Queryable } from '../db.ts';
import { withTransaction } from '../db.ts';
import { newId } from '../ids.ts';
import { decoyHash, hashPassword, verifyPassword } from '../passwords.ts';

export type LinkedAccount = { id: string; name: string };

export const normalizeEmail = (email: string) => email.trim().toLowerCase();

/** The account name for a new person: their email's domain, in lower case. */
export const accountNameFor = (email: string) => normalizeEmail(email).split('@').pop()!;

/**
 * Sign-up. A new person gets an account named from their email domain, linked at once; a person
 * the operator linked earlier (no password yet) sets their password and gets no new account.
 * `exists` when the email already has a password: that person should sign in instead.
 */
export async function signUp(pool: Pool, email: string, password: string): Promise<{ personId: string } | 'exists'> {
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
      await tx.query('UPDATE people SET password_hash = $2 WHERE id = $1', [known.id, passwordHash]);
      return { personId: known.id };
    }
    const personId = newId('per');
    // A concurrent sign-up with the same email loses on the unique email and sees 'exists'.
    const inserted = await tx.query('INSERT INTO people (id, email, password_hash) VALUES ($1, $2, $3) ON CONFLICT (email) DO NOTHING', [
      personId,
      address,
      passwordHash,
    ]);
    if (inserted.rowCount === 0) return 'exists';
    const accountId = newId('acc');
    await tx.query('INSERT INTO accounts (id, name) VALUES ($1, $2)', [accountId, accountNameFor(address)]);
    await tx.query('INSERT INTO memberships (account_id, person_id) VALUES ($1, $2)', [accountId, personId]);
    return { personId };
  });
}

/** The person, when the email and password match. A wrong email costs as much time as a wrong password. */
export async function signIn(db: Queryable, email: string, password: string): Promise<{ personId: string } | undefined> {
  const { rows } = await db.query<{ id: string; password_hash: string | null }>('SELECT id, password_hash FROM people WHERE email = $1', [
    normalizeEmail(email),
  ]);
  const person = rows[0];
  const matches = await verifyPassword(password, person?.password_hash ?? (await decoyHash));
  return person?.password_hash && matches ? { personId: person.id } : undefined;
}

export async function emailOf(db: Queryable, personId: string): Promise<string | undefined> {
  const { rows } = await db.query<{ email: string }>('SELECT email FROM people WHERE id = $1', [personId]);
  return rows[0]?.email;
}

export async function accountsOf(db: Queryable, personId: string): Promise<LinkedAccount[]> {
  const { rows } = await db.query<LinkedAccount>(
    `SELECT a.id, a.name FROM memberships m JOIN accounts a ON a.id = m.account_id
      WHERE m.person_id = $1 ORDER BY a.name, a.id`,
    [personId],
  );
  return rows;
}

/** Binds a grant to the account it acts for, when the person is linked to that account. */
export async function bindGrantToAccount(db: Queryable, grantId: string, personId: string, accountId: string): Promise<boolean> {
  const { rowCount } = await db.query(
    `INSERT INTO oauth_grant_accounts (grant_id, account_id, person_id)
     SELECT $1, account_id, person_id FROM memberships WHERE person_id = $2 AND account_id = $3`,
    [grantId, personId, accountId],
  );
  return rowCount === 1;
}

export async function isMember(db: Queryable, personId: string, accountId: string): Promise<boolean> {
  const { rowCount } = await db.query('SELECT 1 FROM memberships WHERE person_id = $1 AND account_id = $2', [personId, accountId]);
  return rowCount === 1;
}

export async function accountOfGrant(db: Queryable, grantId: string): Promise<string | undefined> {
  const { rows } = await db.query<{ account_id: string }>('SELECT account_id FROM oauth_grant_accounts WHERE grant_id = $1', [grantId]);
  return rows[0]?.account_id;
}
