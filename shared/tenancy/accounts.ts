// Accounts: what datasets, keys and usage belong to. The only writer of `accounts`.
import type { Queryable } from '../platform/db.ts';
import { newId } from '../platform/ids.ts';

export type Account = { id: string; object: 'account'; name: string; createdAt: string };

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
