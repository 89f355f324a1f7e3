// Signed URLs (upload PUTs, export downloads): an HMAC-SHA256 over the URL's path and expiry
// with the installation's signing secret (made by migration 002), checked in constant time.
import { createHmac, timingSafeEqual } from 'node:crypto';
import type { Queryable } from './db.ts';

export const SIGNED_URL_TTL_SECONDS = 3600;

const secrets = new WeakMap<object, Promise<Buffer>>();
/** The installation's URL signing secret, read once per pool. */
export function signingSecret(db: Queryable): Promise<Buffer> {
  let secret = secrets.get(db);
  if (!secret) {
    secret = db
      .query<{ value: Buffer }>(`SELECT value FROM service_secrets WHERE name = 'url_signing'`)
      .then((r) => r.rows[0]!.value);
    secret.catch(() => secrets.delete(db));
    secrets.set(db, secret);
  }
  return secret;
}

const mac = (secret: Buffer, path: string, expires: number) => createHmac('sha256', secret).update(`${path}\n${expires}`).digest('base64url');

/** `path?expires=…&signature=…`, valid until `expires` (Unix seconds). */
export function signPath(secret: Buffer, path: string, expires: number): string {
  return `${path}?expires=${expires}&signature=${mac(secret, path, expires)}`;
}

/** True for a signature we made for this path and expiry, when the expiry has not passed. */
export function signatureValid(secret: Buffer, path: string, expires: string | undefined, signature: string | undefined, now = Date.now()): boolean {
  if (!expires || !signature || !/^\d{1,12}$/.test(expires)) return false;
  const expected = Buffer.from(mac(secret, path, Number(expires)));
  const given = Buffer.from(signature);
  return given.length === expected.length && timingSafeEqual(given, expected) && Number(expires) * 1000 > now;
}
