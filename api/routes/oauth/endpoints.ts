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

export const oauthEndpoints: Operation[] = [
  doc({
    operationId: 'oauthAuthorize',
    method: 'get',
    path: '/oauth/authorize',
    summary: 'Authorization request (browser)',
    description:
      'Authorization code with PKCE: response_type=code, client_id, redirect_uri, code_challenge and code_challenge_method=S256 ' +
      '(plain, or a challenge without a method, is refused), scope (service.read and/or service.write; any other scope is refused with ' +
      'invalid_scope, except offline_access, which is ignored: refresh tokens are always issued), state, resource (optional, ' +
      'only $BASE_URL/v1). The person signs in or signs up, chooses the account the token acts for, and allows or denies. ' +
      'The browser returns to redirect_uri with code, state and iss (RFC 9207), or with error=access_denied.',
    responses: {
      303: { description: 'To the sign-in or consent page, then back to the client.', headers: { Location: 'Where the browser goes next.' } },
      400: { description: 'An HTML page when the client or redirect_uri cannot be trusted; otherwise the error goes back to redirect_uri.' },
    },
  }),
  doc({
    operationId: 'oauthToken',
    method: 'post',
    path: '/oauth/token',
    summary: 'Token endpoint',
    description:
      'grant_type=authorization_code (code, redirect_uri, code_verifier, client_id) or grant_type=refresh_token (refresh_token, client_id). ' +
      'Public clients: no client secret. A code is valid 60 seconds, once; presenting it again revokes what it issued. A refresh token ' +
      'is rotated on every use; presenting a rotated one revokes the grant. Of two concurrent exchanges of one code or refresh token, exactly one succeeds.',
    otherBodies: { 'application/x-www-form-urlencoded': { schema: z.object({ grant_type: z.enum(['authorization_code', 'refresh_token']) }) } },
    responses: {
      200: { description: 'Tokens.', schema: TokenResponse },
      400: { description: 'invalid_grant, invalid_request, unsupported_grant_type, invalid_scope, invalid_target.', schema: OAuthError },
      401: { description: 'invalid_client.', schema: OAuthError },
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
      'else invalid_redirect_uri.',
    otherBodies: {
      'application/json': {
        schema: z.object({ redirect_uris: z.array(z.string()), client_name: z.string().optional(), scope: z.string().optional() }),
      },
    },
    responses: {
      201: { description: 'The registered client, with client_id.' },
      400: { description: 'invalid_client_metadata, invalid_redirect_uri.', schema: OAuthError },
    },
  }),
  doc({
    operationId: 'oauthRevoke',
    method: 'post',
    path: '/oauth/revoke',
    summary: 'Revocation (RFC 7009)',
    description: 'token (an access or refresh token) and client_id. Revokes the whole grant: every token of it fails from the very next request.',
    otherBodies: { 'application/x-www-form-urlencoded': { schema: z.object({ token: z.string(), client_id: z.string() }) } },
    responses: { 200: { description: 'Revoked, or the token was unknown (RFC 7009 answers both alike).' }, 400: { description: 'invalid_request.', schema: OAuthError } },
  }),
  doc({
    operationId: 'oauthInteractionPage',
    method: 'get',
    path: '/oauth/interaction/:uid',
    summary: 'Sign-in, sign-up and consent pages (HTML, for the person)',
    description:
      'Where /oauth/authorize sends the browser. Shows the sign-in form (?signup=1: the sign-up form) or, once signed in, the consent ' +
      'page: the client\'s name, the scopes, the account to act for, Allow and Deny. Pages are no-store and cannot be framed; ' +
      'an unknown or expired interaction gets a 400 page. A request naming a scope other than service.read and service.write goes back ' +
      'to the client with error=invalid_scope.',
    params: z.object({ uid: z.string() }),
    responses: { 200: { description: 'The page.', contentType: 'text/html', schema: z.string() }, 400: { description: 'The expired page (HTML).' } },
  }),
  doc({
    operationId: 'oauthInteractionSubmit',
    method: 'post',
    path: '/oauth/interaction/:uid/:step',
    summary: 'The pages\' forms: login, signup, consent, invitation, switch',
    description:
      'Form posts of the pages (application/x-www-form-urlencoded, with the page\'s csrf field; a foreign Origin is refused). ' +
      'login: email, password (401 page when they do not match). signup: email, password of at least 8 characters, and ' +
      'invitationCode when an administrator added the email (400 page without a valid one; 409 when the email already has a ' +
      'password). consent: decision=allow|deny and account (403 page, nothing granted, when the person is not linked to it). ' +
      'invitation: invitationCode, to accept another account\'s invitation while signed in. switch: ends the sign-in and starts ' +
      'the same authorization again. On success, 303 back to the authorization endpoint, which sends the browser on to the client.',
    params: z.object({ uid: z.string(), step: z.enum(['login', 'signup', 'consent', 'invitation', 'switch']) }),
    otherBodies: { 'application/x-www-form-urlencoded': { schema: z.object({ csrf: z.string() }).catchall(z.string()) } },
    responses: {
      303: { description: 'Back to /oauth/authorize/{uid}, then to the client.', headers: { Location: 'Where the browser goes next.' } },
      400: { description: 'The form again, with what to fix, or the expired page.' },
      401: { description: 'Sign-in: the email and password do not match.' },
      403: { description: 'A foreign origin or missing csrf; or consent for an account the person is not linked to.' },
      409: { description: 'Sign-up: the email already has a password.' },
    },
  }),
];
