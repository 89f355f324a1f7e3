// The authorization server's own endpoints, served by oidc-provider under /oauth. These entries
// only document them in the OpenAPI reference: they answer in the OAuth wire formats (RFC 6749,
// 7591, 7009), not with problem documents.
import { z } from 'zod';
import { defineOperation, type Operation } from '../../defineOperation.ts';

const served = async () => {
  throw new Error('served by the authorization server, not by this route');
};

const OAuthError = z
  .object({ error: z.string(), error_description: z.string().optional() })
  .meta({ id: 'OAuthError', description: 'RFC 6749 §5.2 error response.' });

const TokenResponse = z
  .object({
    access_token: z.string().meta({ description: 'svc_oauth_…, valid one hour, live mode, for the account chosen at consent.' }),
    token_type: z.literal('Bearer'),
    expires_in: z.number().int(),
    refresh_token: z.string().meta({ description: 'svc_oauth_rt_…, valid 30 days, rotated on every use.' }),
    scope: z.string(),
  })
  .meta({ id: 'TokenResponse' });

const doc = (op: Omit<Operation, 'surface' | 'handle' | 'tags'>): Operation =>
  defineOperation({ ...op, surface: 'oauth', tags: ['OAuth'], handle: served } as Operation);

/**
 * The person's side of the flow: browser pages, not API operations (they stay out of generated
 * clients). The reference describes them in the OAuth section's text.
 */
export const OAUTH_BROWSER_FLOW = [
  'Programs act for a person with the authorization code flow and PKCE (S256). The browser pages are not API operations:',
  '',
  '- **GET /oauth/authorize**: `response_type=code`, `client_id`, `redirect_uri`, `code_challenge` and `code_challenge_method=S256` ' +
    '(plain, or a challenge without a method, is refused), `scope` (`service.read` and/or `service.write`; any other scope is refused ' +
    'with `invalid_scope`, except `offline_access`, which is ignored: refresh tokens are always issued), `state`, `resource` (optional, ' +
    'only `$BASE_URL/v1`). The person signs in or signs up, chooses the account the token acts for, and allows or denies. The browser ' +
    'returns to `redirect_uri` with `code`, `state` and `iss` (RFC 9207), or with `error=access_denied`.',
  '- **/oauth/interaction/{uid}**: the sign-in, sign-up and consent pages it sends the browser to, and their forms (login, signup, ' +
    'consent, invitation, switch; each with a CSRF field, a foreign Origin refused). The pages are no-store and cannot be framed. ' +
    'Their answers never tell whether an email is known: a wrong email and a wrong password answer alike (401); ten failed sign-ins ' +
    'for one email from one client address lock that email for that address only, for 15 minutes, whether the email is known or ' +
    'not (another address is not affected; the count starts again when the lock expires); a refused sign-up answers one 400 for a ' +
    'taken email and for a missing or wrong invitation code. Password checks are shared fairly between client addresses: an ' +
    'address with too many checks already waiting is asked to retry (503 with Retry-After, never 429), nobody else.',
  '- **/account/connections**: where a person sees the programs they connected and disconnects one.',
  '',
  'Then the program exchanges the code at POST /oauth/token, and calls /v1 with the access token (`svc_oauth_…`).',
].join('\n');

export const oauthEndpoints: Operation[] = [
  doc({
    operationId: 'oauthToken',
    method: 'post',
    path: '/oauth/token',
    summary: 'Token endpoint',
    description:
      'grant_type=authorization_code (code, redirect_uri, code_verifier, client_id) or grant_type=refresh_token (refresh_token, client_id). ' +
      'Public clients: no client secret. A code is valid 60 seconds, once; presenting it again revokes what it issued. A refresh token ' +
      'is rotated on every use; presenting a rotated one revokes the grant. Of two concurrent exchanges of one code or refresh token, exactly one succeeds.',
    otherBodies: {
      'application/x-www-form-urlencoded': {
        schema: z.object({ grant_type: z.enum(['authorization_code', 'refresh_token']) }).catchall(z.string()),
        example: { grant_type: 'authorization_code', code: 'Xh3…', redirect_uri: 'http://127.0.0.1:8400/callback', code_verifier: '9vT…', client_id: 'UqL…' },
      },
    },
    responses: {
      200: {
        description: 'Tokens.',
        schema: TokenResponse,
        example: { access_token: 'svc_oauth_Qe2…', token_type: 'Bearer', expires_in: 3600, refresh_token: 'svc_oauth_rt_Lm8…', scope: 'service.read service.write' },
      },
      400: {
        description: 'invalid_grant, invalid_request, unsupported_grant_type, invalid_scope, invalid_target.',
        schema: OAuthError,
        example: { error: 'invalid_grant', error_description: 'grant request is invalid' },
      },
      401: { description: 'invalid_client.', schema: OAuthError, example: { error: 'invalid_client', error_description: 'client authentication failed' } },
    },
  }),
  doc({
    operationId: 'oauthRegister',
    method: 'post',
    path: '/oauth/register',
    summary: 'Dynamic client registration (RFC 7591)',
    description:
      'Public clients only: token_endpoint_auth_method none, grant types authorization_code and refresh_token, response type code. ' +
      'Confidential clients and other grants are refused with invalid_client_metadata, as is a NUL character in any value. ' +
      'Redirect URIs use https; plain http only to a loopback host (127.0.0.1, [::1] or localhost, any port, RFC 8252), ' +
      'else invalid_redirect_uri. Unused registrations expire: a client to which no authorization was granted for 7 days (since it ' +
      'registered, or since its last grant) and that holds no grant any more is deleted by a scheduled job; its client_id then ' +
      'answers invalid_client, and the client registers again.',
    otherBodies: {
      'application/json': {
        schema: z.object({
          redirect_uris: z.array(z.string()),
          client_name: z.string().optional(),
          scope: z.string().optional(),
          token_endpoint_auth_method: z.literal('none').optional(),
        }),
        example: { redirect_uris: ['http://127.0.0.1:8400/callback'], client_name: 'Quarterly Reports', token_endpoint_auth_method: 'none' },
      },
    },
    responses: {
      201: { description: 'The registered client, with client_id.' },
      400: {
        description: 'invalid_client_metadata, invalid_redirect_uri.',
        schema: OAuthError,
        example: { error: 'invalid_redirect_uri', error_description: 'redirect_uris must use https, or http to a loopback host' },
      },
    },
  }),
  doc({
    operationId: 'oauthRevoke',
    method: 'post',
    path: '/oauth/revoke',
    summary: 'Revocation (RFC 7009)',
    description: 'token (an access or refresh token) and client_id. Revokes the whole grant: every token of it fails from the very next request.',
    otherBodies: { 'application/x-www-form-urlencoded': { schema: z.object({ token: z.string(), client_id: z.string() }), example: { token: 'svc_oauth_rt_Lm8…', client_id: 'UqL…' } } },
    responses: {
      200: { description: 'Revoked, or the token was unknown (RFC 7009 answers both alike).' },
      400: { description: 'invalid_request.', schema: OAuthError, example: { error: 'invalid_request', error_description: 'missing required parameter(s) (token)' } },
    },
  }),
];
