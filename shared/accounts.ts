// Accounts and the people linked to them (the operator's side of tenancy).
import type { Queryable } from './db.ts';
import { newId } from './ids.ts';

export type Account = { id: string; object: 'account'; name: string; createdAt: string };
export type Membership = { object: 'membership'; accountId: string; personId: string; email: string; createdAt: string };

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

/** Links a person to an account, creating the person (without a password) when new. */
export async function addMember(db: Queryable, accountId: string, email: string): Promise<Membership> {
  const { rows } = await db.query<{ person_id: string; email: string; created_at: Date }>(
    `WITH person AS (
       INSERT INTO people (id, email) VALUES ($2, lower($3))
       ON CONFLICT (email) DO UPDATE SET email = EXCLUDED.email
       RETURNING id, email
     ), link AS (
       INSERT INTO memberships (account_id, person_id) SELECT $1, id FROM person
       ON CONFLICT (account_id, person_id) DO UPDATE SET account_id = EXCLUDED.account_id
       RETURNING person_id, created_at
     )
     SELECT link.person_id, person.email, link.created_at FROM link JOIN person ON person.id = link.person_id`,
    [accountId, newId('per'), email],
  );
  const r = rows[0]!;
  return { object: 'membership', accountId, personId: r.person_id, email: r.email, createdAt: r.created_at.toISOString() };
}
