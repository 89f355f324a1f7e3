// Sign-up on the OAuth pages: a new person with their own account, or a person the operator
// invited setting their password with the invitation code. Writes through people.ts,
// accounts.ts and memberships.ts, in one transaction.
import { type Pool, type Queryable, withTransaction } from '../platform/db.ts';
import { hashPassword } from '../platform/passwords.ts';
import { createAccount } from './accounts.ts';
import { acceptInvitation, hasMemberships, linkOwner } from './memberships.ts';
import { insertPerson, lockPerson, normalizeEmail, setPassword } from './people.ts';

/** The account name for a new person: their email's domain, in lower case. */
export const accountNameFor = (email: string) => normalizeEmail(email).split('@').pop()!;

/**
 * A new person, or 'refused': the email already has a password, or an administrator added it to
 * an account and the invitation code is missing or not valid for it, or a code was given for an
 * email nobody added. One answer for all of them, so that sign-up never tells whether an email is
 * known (contract, "Sharing the service fairly").
 */
export type SignUpOutcome = { personId: string } | 'refused';

/**
 * Sign-up. A new person gets an account named from their email domain, linked at once. A person
 * the operator added (no password yet) sets their password with the invitation code they were
 * given, and gets no new account. `client`: the key of the client's address, for the fair queue
 * of password checks.
 */
export async function signUp(pool: Pool, email: string, password: string, invitationCode: string | undefined, client: string): Promise<SignUpOutcome> {
  const address = normalizeEmail(email);
  const passwordHash = await hashPassword(password, client);
  return withTransaction(pool, async (tx) => {
    const known = await lockPerson(tx, address);
    if (known?.hasPassword) return 'refused';
    if (known) {
      // Added by the operator: the code proves the email is theirs.
      if (await hasMemberships(tx, known.id)) {
        if (!invitationCode || !(await acceptInvitation(tx, known.id, invitationCode))) return 'refused';
        await setPassword(tx, known.id, passwordHash);
        return { personId: known.id };
      }
      // Added, then removed from every account before signing up: a new person like any other.
      if (invitationCode) return 'refused';
      await setPassword(tx, known.id, passwordHash);
      await ownAccount(tx, known.id, address);
      return { personId: known.id };
    }
    if (invitationCode) return 'refused';
    // A concurrent sign-up with the same email loses on the unique email, refused like any taken email.
    const personId = await insertPerson(tx, address, passwordHash);
    if (!personId) return 'refused';
    await ownAccount(tx, personId, address);
    return { personId };
  });
}

/** A new person's own account, named from their email domain, linked at once. */
async function ownAccount(db: Queryable, personId: string, email: string): Promise<void> {
  const account = await createAccount(db, accountNameFor(email));
  await linkOwner(db, account.id, personId);
}
