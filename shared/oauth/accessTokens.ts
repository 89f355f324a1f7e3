// Access tokens on /v1: one query per request finds the token (by its digest), checks that it is
// unexpired and for this resource, and reads the account its grant acts for. This reads the
// record oidc-provider stored (its payload's aud, exp and scope: the version is pinned exactly
// and every OAuth test goes through here), instead of the provider's model plus a second query.
import { prepared, type Queryable } from '../platform/db.ts';
import { sha256 } from '../platform/ids.ts';

export type AccessTokenVerdict = { grantId: string; accountId: string; scopes: string[] };

const accessTokenByDigest = prepared(
  'access-token-by-digest',
  `SELECT r.grant_id, g.account_id, r.payload->>'scope' AS scope, r.payload->'aud' AS aud, (r.payload->>'exp')::bigint AS exp
     FROM oauth_records r JOIN oauth_grant_accounts g ON g.grant_id = r.grant_id
    WHERE r.model = 'AccessToken' AND r.id_sha256 = $1 AND r.expires_at > now()`,
);

export async function authenticateAccessToken(db: Queryable, value: string, resource: string): Promise<AccessTokenVerdict | undefined> {
  const { rows } = await db.query<{ grant_id: string; account_id: string; scope: string | null; aud: unknown; exp: number | null }>(
    accessTokenByDigest([sha256(value)]),
  );
  const token = rows[0];
  if (!token || token.exp === null || token.exp * 1000 <= Date.now()) return undefined;
  if (![token.aud].flat().includes(resource)) return undefined;
  return { grantId: token.grant_id, accountId: token.account_id, scopes: token.scope?.split(' ') ?? [] };
}
