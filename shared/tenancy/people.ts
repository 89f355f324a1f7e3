// People who sign in on the OAuth pages: their email, password and sign-in throttling. The only
// writer of `people` and `sign_in_throttle`.
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

/**
 * Sign-in throttling (contract, "Sharing the service fairly"), per (email, client address): ten
 * failures, each within `minutes` of the one before, lock that pair for `minutes`; the lock
 * expires and the count starts again; a success clears the pair. Kept for any email typed, known
 * or not, so that the lock tells nothing about whether an email is known; and per client address,
 * so that wrong passwords sent from one address never keep the person from signing in from another.
 */
export const SIGN_IN_LOCK = { failures: 10, minutes: 15 } as const;

/**
 * The person, when the email and password match; 'locked' while this (email, client) pair is
 * locked (see SIGN_IN_LOCK). The attempt is counted before the password is checked, in one
 * statement, so that parallel guesses cannot all pass the lock check first. A wrong email costs as
 * much time as a wrong password. `client`: the key of the client's address (clientKeyOf).
 */
export async function signIn(db: Queryable, email: string, password: string, client: string): Promise<{ personId: string } | 'locked' | undefined> {
  const address = normalizeEmail(email);
  const counted = await db.query(
    `INSERT INTO sign_in_throttle AS t (email, client, failures, last_failure_at) VALUES ($1, $2, 1, now())
     ON CONFLICT (email, client) DO UPDATE SET
       -- A lock that expired, or a last failure older than the window: the count starts again.
       failures = CASE WHEN t.locked_until <= now() OR t.last_failure_at < now() - make_interval(mins => $4) THEN 1 ELSE t.failures + 1 END,
       locked_until = CASE WHEN t.locked_until <= now() OR t.last_failure_at < now() - make_interval(mins => $4) THEN NULL
                           WHEN t.failures + 1 >= $3 THEN now() + make_interval(mins => $4) END,
       last_failure_at = now()
     WHERE NOT coalesce(t.locked_until > now(), false)`,
    [address, client, SIGN_IN_LOCK.failures, SIGN_IN_LOCK.minutes],
  );
  if (counted.rowCount === 0) return 'locked';
  const { rows } = await db.query<{ id: string; password_hash: string }>('SELECT id, password_hash FROM people WHERE email = $1 AND password_hash IS NOT NULL', [
    address,
  ]);
  const person = rows[0];
  const matches = await verifyPassword(password, person?.password_hash ?? (await decoyHash), client);
  if (!person || !matches) return undefined;
  await db.query('DELETE FROM sign_in_throttle WHERE email = $1 AND client = $2', [address, client]);
  return { personId: person.id };
}

/** Lets a locked-out person sign in again at once, from every address (operator). False when no person has this email. */
export async function unlockSignIn(db: Queryable, email: string): Promise<boolean> {
  const address = normalizeEmail(email);
  await db.query('DELETE FROM sign_in_throttle WHERE email = $1', [address]);
  const { rowCount } = await db.query('SELECT 1 FROM people WHERE email = $1', [address]);
  return rowCount === 1;
}

/** Forgets throttling that no longer counts: no lock in force, and the last failure older than the window. */
export async function purgeSignInThrottle(db: Queryable): Promise<number> {
  const { rowCount } = await db.query(
    `DELETE FROM sign_in_throttle WHERE last_failure_at < now() - make_interval(mins => $1) AND coalesce(locked_until <= now(), true)`,
    [SIGN_IN_LOCK.minutes],
  );
  return rowCount ?? 0;
}

export async function emailOf(db: Queryable, personId: string): Promise<string | undefined> {
  const { rows } = await db.query<{ email: string }>('SELECT email FROM people WHERE id = $1', [personId]);
  return rows[0]?.email;
}
