// The authentication filter in front of /v1 (../shared/spec/service-spec.md §5 "Authentication").
// Credentials are told apart by prefix before any lookup; API keys and OAuth access tokens are
// looked up on every request (no cached verdicts), so a revocation bites on the next request.
// Answers carry no `instance`.
import type { RequestHandler, Response } from 'express';
import { authenticateKey, keyLabel } from '../../shared/tenancy/apiKeys.ts';
import { authenticateAccessToken } from '../../shared/oauth/accessTokens.ts';
import { noteGrantUsed } from '../../shared/oauth/grantAccounts.ts';
import { Problem } from '../../shared/platform/problems.ts';

/**
 * When each grant's use was last written (for the person's page of connected programs): at most
 * once a minute per grant and process, so that a request made with a token costs no write, and
 * no query, otherwise.
 */
const grantUses = {
  noted: new Map<string, number>(),
  due(grantId: string): boolean {
    const now = Date.now();
    if (now - (this.noted.get(grantId) ?? 0) < 60_000) return false;
    if (this.noted.size > 10_000) this.noted.clear();
    this.noted.set(grantId, now);
    return true;
  },
};
import type { Deps } from '../defineOperation.ts';
import { ACCESS_TOKEN_PREFIX, REFRESH_TOKEN_PREFIX, resourceMetadataOf, resourceOf } from '../oauth/provider.ts';
import { principalOf, scopes, setPrincipal, type Scope } from '../principal.ts';
import { sendProblem } from '../problemResponses.ts';

const VALID_PREFIXES = 'svc_test_ (test-mode API key), svc_live_ (live-mode API key) or svc_oauth_ (OAuth access token)';

const details = {
  missing: 'Provide your API key as a bearer credential: send the header "Authorization: Bearer <API_KEY>".',
  notACredential: `The bearer credential is not a credential of this service. Valid credentials start with ${VALID_PREFIXES}.`,
  refreshToken:
    'The bearer credential is an OAuth refresh token (svc_oauth_rt_…). Exchange it at /oauth/token for an access token and send that instead.',
  oauthTokenInvalid:
    'The OAuth access token is expired, revoked or unknown. Get a new access token at /oauth/token with your refresh token, or connect again.',
};

export function authenticate({ config, pool, meter }: Deps): RequestHandler {
  const resource = resourceOf(config);
  const resourceMetadata = resourceMetadataOf(config);

  const refuse = (res: Response, detail: string, tokenPresented: boolean) => {
    const challenge = tokenPresented
      ? `Bearer error="invalid_token", resource_metadata="${resourceMetadata}"`
      : `Bearer resource_metadata="${resourceMetadata}"`;
    sendProblem(res, new Problem('unauthorized', detail, { headers: { 'WWW-Authenticate': challenge } }), config.errorsBase);
  };

  return async (req, res, next) => {
    const header = req.headers.authorization;
    if (header === undefined || header.trim() === '') return refuse(res, details.missing, false);
    const credential = /^Bearer +(\S+) *$/i.exec(header)?.[1];
    if (credential === undefined) return refuse(res, details.notACredential, true);

    // The refresh-token prefix is checked ahead of the general OAuth one.
    if (credential.startsWith(REFRESH_TOKEN_PREFIX)) return refuse(res, details.refreshToken, true);
    if (credential.startsWith('svc_test_') || credential.startsWith('svc_live_')) {
      const verdict = await authenticateKey(pool, credential);
      // Unknown, malformed and revoked keys get one and the same answer.
      if (!verdict) return refuse(res, details.notACredential, true);
      setPrincipal(res, {
        kind: 'api_key',
        credentialId: verdict.keyId,
        accountId: verdict.accountId,
        mode: verdict.mode,
        scopes: ['service.read', 'service.write'],
        label: keyLabel(credential),
      });
      meter.add(verdict.accountId, verdict.mode, 'requests');
      meter.keyUsed(verdict.keyId);
      return next();
    }
    if (credential.startsWith(ACCESS_TOKEN_PREFIX)) {
      // Unknown, revoked, expired, for another resource, or its person unlinked: one answer.
      const token = await authenticateAccessToken(pool, credential, resource);
      if (!token) return refuse(res, details.oauthTokenInvalid, true);
      setPrincipal(res, {
        kind: 'oauth_token',
        credentialId: token.grantId,
        accountId: token.accountId,
        mode: 'live',
        scopes: scopes.filter((s) => token.scopes.includes(s)),
        label: keyLabel(credential),
      });
      meter.add(token.accountId, 'live', 'requests');
      if (grantUses.due(token.grantId)) noteGrantUsed(pool, token.grantId).catch(() => {});
      return next();
    }
    return refuse(res, details.notACredential, true);
  };
}

/**
 * Reads need service.read, every mutating call service.write (403 `forbidden`, no `instance`). The
 * answer names the missing scope in `WWW-Authenticate` (RFC 6750 insufficient_scope), which OAuth
 * clients use to ask the person for more.
 */
export function requireScope({ config }: Deps): RequestHandler {
  const resourceMetadata = resourceMetadataOf(config);
  return (req, res, next) => {
    const needed: Scope = ['GET', 'HEAD'].includes(req.method) ? 'service.read' : 'service.write';
    if (principalOf(res).scopes.includes(needed)) return next();
    const challenge = `Bearer error="insufficient_scope", scope="${needed}", resource_metadata="${resourceMetadata}"`;
    sendProblem(
      res,
      new Problem('forbidden', `This call needs the ${needed} scope, which the credential was not granted.`, { headers: { 'WWW-Authenticate': challenge } }),
      config.errorsBase,
    );
  };
}
