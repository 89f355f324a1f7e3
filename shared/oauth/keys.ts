// The authorization server's keys, one set per installation, shared by every web process: the
// cookie signing key (made by migration 004) and a signing JWK (made by the first process that
// needs it; the provider wants one even though we issue no ID tokens).
import { generateKeyPairSync } from 'node:crypto';
import type { Queryable } from '../platform/db.ts';

export type OAuthKeys = { cookieKeys: string[]; jwks: { keys: Record<string, unknown>[] } };

export async function loadOAuthKeys(db: Queryable): Promise<OAuthKeys> {
  const jwk = { ...generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey.export({ format: 'jwk' }), use: 'sig', alg: 'ES256' };
  await db.query(`INSERT INTO service_secrets (name, value) VALUES ('oauth_signing_jwk', $1) ON CONFLICT (name) DO NOTHING`, [
    Buffer.from(JSON.stringify(jwk)),
  ]);
  const { rows } = await db.query<{ name: string; value: Buffer }>(
    `SELECT name, value FROM service_secrets WHERE name IN ('oauth_cookies', 'oauth_signing_jwk')`,
  );
  const secret = (name: string) => rows.find((r) => r.name === name)!.value;
  return {
    cookieKeys: [secret('oauth_cookies').toString('base64url')],
    jwks: { keys: [JSON.parse(secret('oauth_signing_jwk').toString())] },
  };
}
