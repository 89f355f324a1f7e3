// The OAuth 2.0 authorization server: oidc-provider (pinned exactly; see the token prefix hook
// below) configured so that only what ../shared/spec/service-spec.md §4-5 offers exists:
// authorization code with PKCE S256, refresh tokens rotated on every use, public clients, dynamic
// registration and revocation.
// Tokens are opaque, for one resource (the API, $BASE_URL/v1), and bound to the API account the
// person chose on the consent page (oauth_grant_accounts, read on every request).
import Provider, { errors, type Configuration, type KoaContextWithOIDC } from 'oidc-provider';
import type { Config } from '../../shared/platform/config.ts';
import type { Pool } from '../../shared/platform/db.ts';
import type { Logger } from '../../shared/platform/log.ts';
import { postgresAdapter } from '../../shared/oauth/adapter.ts';
import type { OAuthKeys } from '../../shared/oauth/keys.ts';
import { accountOfGrant } from '../../shared/oauth/grantAccounts.ts';
import { scopes } from '../principal.ts';
import { nulIn } from '../malformed.ts';
import { renderOAuthError } from './pages.ts';

export const ACCESS_TOKEN_PREFIX = 'svc_oauth_';
export const REFRESH_TOKEN_PREFIX = 'svc_oauth_rt_';

const HOUR = 3600;
const DAY = 24 * HOUR;
export const lifetimes = {
  AccessToken: HOUR,
  AuthorizationCode: 60,
  RefreshToken: 30 * DAY,
  // The grant outlives its refresh tokens; after a year the person consents again.
  Grant: 365 * DAY,
  Interaction: HOUR,
  Session: 14 * DAY,
} as const;

/** The provider's own routes, relative to its mount at /oauth. */
export const oauthRoutes = { authorization: '/authorize', token: '/token', registration: '/register', revocation: '/revoke' } as const;

/** The one protected resource (RFC 8707 indicator and token audience): the API. */
export const resourceOf = (config: Config) => `${config.baseUrl}/v1`;
/** Where the API's RFC 9728 metadata is served (also at the root, see the metadata routes). */
export const PROTECTED_RESOURCE_METADATA_PATH = '/.well-known/oauth-protected-resource/v1';
export const resourceMetadataOf = (config: Config) => `${config.baseUrl}${PROTECTED_RESOURCE_METADATA_PATH}`;

export type AuthorizationServer = Provider;

export function createAuthorizationServer(config: Config, pool: Pool, log: Logger, keys: OAuthKeys): AuthorizationServer {
  const resource = resourceOf(config);
  const scope = scopes.join(' ');

  const configuration: Configuration = {
    adapter: postgresAdapter(pool),
    jwks: keys.jwks as Configuration['jwks'],
    cookies: { keys: keys.cookieKeys },
    routes: oauthRoutes,
    scopes: [...scopes],
    claims: { openid: ['sub'] },
    responseTypes: ['code'],
    clientAuthMethods: ['none'],
    // The validator sees the whole metadata whichever property it is called for; naming one
    // standard property makes it run once for every client the provider reads or registers.
    extraClientMetadata: { properties: ['redirect_uris'], validator: checkClientMetadata },
    clientDefaults: {
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: 'none',
      // No ID tokens are issued; this only matches the one signing key the provider insists on.
      id_token_signed_response_alg: 'ES256',
    },
    pkce: { required: () => true },
    ttl: lifetimes,
    interactions: { url: (_ctx, interaction) => `/oauth/interaction/${interaction.uid}` },
    features: {
      devInteractions: { enabled: false },
      userinfo: { enabled: false },
      rpInitiatedLogout: { enabled: false },
      pushedAuthorizationRequests: { enabled: false },
      dPoP: { enabled: false },
      introspection: { enabled: false },
      // Open registration; no registration access token (client management is not offered).
      registration: { enabled: true, initialAccessToken: false, issueRegistrationAccessToken: false },
      revocation: {
        enabled: true,
        // A client revokes only its own tokens.
        allowedPolicy: async (_ctx, client, token) => token.clientId === client.clientId,
      },
      resourceIndicators: {
        enabled: true,
        defaultResource: async () => resource,
        useGrantedResource: async () => true,
        getResourceServerInfo: async (_ctx, indicator) => {
          if (indicator !== resource) throw new errors.InvalidTarget(`the only resource is ${resource}`);
          return { scope, audience: resource, accessTokenTTL: lifetimes.AccessToken, accessTokenFormat: 'opaque' };
        },
      },
    },
    // The person is the provider's "account"; our API account is chosen at consent. A token whose
    // grant no longer acts for an account (the person was unlinked) finds nobody: refresh fails.
    findAccount: async (_ctx, sub, token) => {
      const grantId = (token as { grantId?: string } | undefined)?.grantId;
      if (grantId && !(await accountOfGrant(pool, grantId))) return undefined;
      return { accountId: sub, claims: async () => ({ sub }) };
    },
    // Refresh tokens for every client allowed the grant (not only with offline_access), rotated on
    // every use, and not tied to the browser session.
    issueRefreshToken: async (_ctx, client) => client.grantTypeAllowed('refresh_token'),
    rotateRefreshToken: true,
    expiresWithSession: async () => false,
    // Every authorization asks for consent (and so for the account): only the grant this
    // interaction's consent made counts.
    loadExistingGrant: async (ctx: KoaContextWithOIDC) => {
      const grantId = ctx.oidc.result?.consent?.grantId;
      return grantId ? ctx.oidc.provider.Grant.find(grantId) : undefined;
    },
    // Revoking either token of a grant revokes the grant.
    revokeGrantPolicy: () => true,
    renderError: async (ctx, out) => {
      ctx.type = 'html';
      ctx.set('Cache-Control', 'no-store');
      ctx.body = renderOAuthError(out);
    },
  };

  const provider = new Provider(config.baseUrl, configuration);
  // Behind a TLS-terminating proxy, URLs and Secure cookies follow X-Forwarded-Proto and -Host.
  provider.proxy = config.trustProxy;
  addTokenPrefixes(provider);

  // Clients see "grant request is invalid"; the reason is in error_detail. Log it (never a token).
  const refused = (what: string) => (_ctx: unknown, error: Error) => {
    const e = error as Error & { error_description?: string; error_detail?: string };
    log.info({ error: e.message, description: e.error_description, detail: e.error_detail }, `oauth ${what} refused`);
  };
  provider.on('grant.error', refused('grant'));
  provider.on('authorization.error', refused('authorization'));
  provider.on('registration_create.error', refused('registration'));
  provider.on('revocation.error', refused('revocation'));
  provider.on('server_error', (_ctx, error) => log.error({ err: error }, 'oauth server error'));
  return provider;
}

/**
 * Hosts a redirect URI may name over plain http (RFC 8252 §7.3): the loopback literals, where the
 * code never leaves the machine. `localhost` counts too, although RFC 8252 §8.3 advises against
 * it (the name could resolve elsewhere): the MCP authorization spec allows it and MCP clients
 * (the MCP Inspector among them) register http://localhost:<port>/… callbacks. Any port.
 */
const LOOPBACK_HOSTS = new Set(['127.0.0.1', '[::1]', 'localhost']);

/**
 * Our registration policy, in the provider's client schema (so refusals answer in RFC 7591's
 * wire format): no NUL in any value, and http redirect URIs only for loopback hosts. The redirect
 * rule applies when a client registers; clients registered earlier are not judged again here.
 */
function checkClientMetadata(ctx: KoaContextWithOIDC | undefined, _key: string, _value: unknown, metadata: Record<string, unknown>): void {
  // PostgreSQL's jsonb, where clients are kept, cannot hold a NUL.
  const nulAt = nulIn(metadata);
  if (nulAt !== undefined) throw new errors.InvalidClientMetadata(`${nulAt} must not contain a NUL character`);
  if (ctx?.oidc?.route !== 'registration') return;
  const uris = Array.isArray(metadata['redirect_uris']) ? metadata['redirect_uris'] : [];
  for (const uri of uris) {
    const parsed = typeof uri === 'string' ? URL.parse(uri) : null;
    if (parsed?.protocol === 'http:' && !LOOPBACK_HOSTS.has(parsed.hostname)) {
      throw Object.assign(new errors.InvalidRedirectUri(), {
        error_description: 'redirect_uris must use https, except for a loopback host (127.0.0.1, [::1] or localhost) over http',
      });
    }
  }
}

/**
 * Opaque token values carry our prefixes. No option sets one, so the models' token id generator
 * is wrapped (an undocumented hook: the version is pinned and a test fails if this stops
 * working). The stored id is the whole value, so find, revoke and refresh work unchanged.
 */
function addTokenPrefixes(provider: Provider): void {
  const prefix = (model: { prototype: { generateTokenId(): string } }, with_: string, unless?: string) => {
    const original = model.prototype.generateTokenId;
    model.prototype.generateTokenId = function generatePrefixedTokenId(this: unknown) {
      let id: string;
      // An access token must never read as a refresh token (svc_oauth_ + rt_…).
      do id = original.call(this);
      while (unless !== undefined && id.startsWith(unless));
      return with_ + id;
    };
  };
  prefix(provider.AccessToken as never, ACCESS_TOKEN_PREFIX, REFRESH_TOKEN_PREFIX.slice(ACCESS_TOKEN_PREFIX.length));
  prefix(provider.RefreshToken as never, REFRESH_TOKEN_PREFIX);
}
