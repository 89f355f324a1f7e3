// API keys: issued by the operator, shown once, stored as SHA-256 digests, revocable at once or
// later (a rotation leaves the old key working for a grace period).
import { randomBytes } from 'node:crypto';
import { prepared, type Queryable } from '../platform/db.ts';
import { newId, sha256 } from '../platform/ids.ts';

export type Mode = 'test' | 'live';
export const keyPrefixes = { test: 'svc_test_', live: 'svc_live_' } as const;
export const LABEL_LENGTH = 12;
// The prefix, then 256 bits as unpadded base64url (43 characters).
const keyPattern = /^svc_(test|live)_[A-Za-z0-9_-]{43}$/;

export type ApiKeyRecord = {
  id: string;
  object: 'api_key';
  accountId: string;
  label: string;
  mode: Mode;
  createdAt: string;
  lastUsedAt: string | null;
  revokedAt: string | null;
};

type KeyRow = {
  id: string;
  account_id: string;
  label: string;
  mode: Mode;
  created_at: Date;
  last_used_at: Date | null;
  revoked_at: Date | null;
};

const toRecord = (r: KeyRow): ApiKeyRecord => ({
  id: r.id,
  object: 'api_key',
  accountId: r.account_id,
  label: r.label,
  mode: r.mode,
  createdAt: r.created_at.toISOString(),
  lastUsedAt: r.last_used_at?.toISOString() ?? null,
  revokedAt: r.revoked_at?.toISOString() ?? null,
});

export const keyLabel = (key: string) => key.slice(0, LABEL_LENGTH);

export async function issueKey(db: Queryable, accountId: string, mode: Mode): Promise<ApiKeyRecord & { key: string }> {
  const key = keyPrefixes[mode] + randomBytes(32).toString('base64url');
  const { rows } = await db.query<KeyRow>(
    `INSERT INTO api_keys (id, account_id, mode, label, secret_sha256) VALUES ($1, $2, $3, $4, $5)
     RETURNING id, account_id, label, mode, created_at, last_used_at, revoked_at`,
    [newId('key'), accountId, mode, keyLabel(key), sha256(key)],
  );
  return { ...toRecord(rows[0]!), key };
}

export async function listKeys(db: Queryable, accountId: string): Promise<ApiKeyRecord[]> {
  const { rows } = await db.query<KeyRow>(
    `SELECT id, account_id, label, mode, created_at, last_used_at, revoked_at
     FROM api_keys WHERE account_id = $1 ORDER BY created_at, id`,
    [accountId],
  );
  return rows.map(toRecord);
}

/**
 * Revokes a key now (idempotent: revoking twice keeps the first time; a revocation scheduled by
 * a rotation is brought forward). Undefined if no such key.
 */
export async function revokeKey(db: Queryable, keyId: string): Promise<{ id: string; revokedAt: string } | undefined> {
  const { rows } = await db.query<{ id: string; revoked_at: Date }>(
    `UPDATE api_keys SET revoked_at = least(coalesce(revoked_at, now()), now()) WHERE id = $1 RETURNING id, revoked_at`,
    [keyId],
  );
  return rows[0] && { id: rows[0].id, revokedAt: rows[0].revoked_at.toISOString() };
}

/** The default grace period of a rotation: a day, for every program holding the old key to move. */
export const ROTATION_GRACE_SECONDS = 24 * 3600;

/**
 * Rotates a key: a new key of the same account and mode is issued (shown once), and the old one
 * stops working `graceSeconds` from now (0: at once), so that programs can move without an
 * outage. Undefined when the key does not exist or is revoked already.
 */
export async function rotateKey(
  db: Queryable,
  keyId: string,
  graceSeconds: number,
): Promise<{ issued: ApiKeyRecord & { key: string }; retired: { id: string; revokedAt: string } } | undefined> {
  const { rows } = await db.query<{ id: string; account_id: string; mode: Mode; revoked_at: Date }>(
    `UPDATE api_keys SET revoked_at = now() + make_interval(secs => $2)
     WHERE id = $1 AND (revoked_at IS NULL OR revoked_at > now() + make_interval(secs => $2))
     RETURNING id, account_id, mode, revoked_at`,
    [keyId, graceSeconds],
  );
  const old = rows[0];
  if (!old) return undefined;
  const issued = await issueKey(db, old.account_id, old.mode);
  return { issued, retired: { id: old.id, revokedAt: old.revoked_at.toISOString() } };
}

/** A key by id, for the operator (undefined if none). */
export async function findKey(db: Queryable, keyId: string): Promise<ApiKeyRecord | undefined> {
  const { rows } = await db.query<KeyRow>(
    'SELECT id, account_id, label, mode, created_at, last_used_at, revoked_at FROM api_keys WHERE id = $1',
    [keyId],
  );
  return rows[0] && toRecord(rows[0]);
}

const keyByDigest = prepared(
  'api-key-by-digest',
  'SELECT id, account_id, mode, label FROM api_keys WHERE secret_sha256 = $1 AND (revoked_at IS NULL OR revoked_at > now())',
);

export type KeyVerdict = { keyId: string; accountId: string; mode: Mode; label: string };

/**
 * Looks a presented key up by digest, on every call (no cache: revocation bites on the next
 * request). Undefined for a malformed, unknown or revoked key alike (a rotated key works until
 * its revocation time).
 */
export async function authenticateKey(db: Queryable, key: string): Promise<KeyVerdict | undefined> {
  if (!keyPattern.test(key)) return undefined;
  const { rows } = await db.query<{ id: string; account_id: string; mode: Mode; label: string }>(keyByDigest([sha256(key)]));
  const row = rows[0];
  // The stored mode must match the presented prefix; a digest collision across modes is impossible,
  // but the check keeps the two modes apart by construction.
  if (!row || !key.startsWith(keyPrefixes[row.mode])) return undefined;
  return { keyId: row.id, accountId: row.account_id, mode: row.mode, label: row.label };
}

/** Moves each key's last use forward to when it was used (batched: one statement for all of them). */
export async function recordKeysUsed(db: Queryable, usedAt: Map<string, Date>): Promise<void> {
  await db.query(
    `UPDATE api_keys k SET last_used_at = greatest(k.last_used_at, u.at)
     FROM unnest($1::text[], $2::timestamptz[]) AS u(id, at) WHERE k.id = u.id`,
    [[...usedAt.keys()], [...usedAt.values()]],
  );
}
