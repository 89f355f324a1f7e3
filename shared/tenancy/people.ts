// People who sign in on the OAuth pages: their email, password and sign-in lock. The only
// writer of `people`.
import type { Queryable } from '../platform/db.ts';
import { newId } from '../platform/ids.ts';
import { decoyHash, verifyPassword } from '../platform/passwords.ts';

export const normalizeEmail = (email: string) => email.trim().toLowerCase();

/** The person with this email, created (without a password) when new; signedUp when they have a password. */
export async function personByEmail(db: Queryable, email: string): Promise<{ id: string; email: string; signedUp: boolean }> {
  const { rows } = await db.query<{ id: string; email: string; signed_up: boolean }>(
    `INSERT INTO people (id, email) VALUES ($1, lower($2))
     ON CONFLICT (email) DO UPDATE SET email = EXCLUDED.email
     RETURNING id, email, password_hash IS NOT NULL AS signed_up`,
    [newId('per'), email],
  );
  const r = rows[0]!;
  return { id: r.id, email: r.email, signedUp: r.signed_up };
}

/** The person with this email, locked for the rest of the transaction (sign-up). */
export async function lockPerson(db: Queryable, address: string): Promise<{ id: string; hasPassword: boolean } | undefined> {
  const { rows } = await db.query<{ id: string; password_hash: string | null }>('SELECT id, password_hash FROM people WHERE email = $1 FOR UPDATE', [
    address,
  ]);
  return rows[0] && { id: rows[0].id, hasPassword: rows[0].password_hash !== null };
}

/** A new person with a password; undefined when the email is taken (a concurrent sign-up won). */
export async function insertPerson(db: Queryable, address: string, passwordHash: string): Promise<string | undefined> {
  const personId = newId('per');
  const inserted = await db.query('INSERT INTO people (id, email, password_hash) VALUES ($1, $2, $3) ON CONFLICT (email) DO NOTHING', [
    personId,
    address,
    passwordHash,
  ]);
  return inserted.rowCount === 0 ? undefined : personId;
}

export async function setPassword(db: Queryable, personId: string, passwordHash: string): Promise<void> {
  await db.query('UPDATE people SET password_hash = $2 WHERE id = $1', [personId, passwordHash]);
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
