// The whole OAuth flow as the MCP TypeScript SDK's client runs it: from a 401 on /v1 to
// protected-resource metadata, discovery, registration, authorization with PKCE, exchange,
// refresh; then a disconnect (revocation) that /v1 notices on the next request.
import { expect } from 'chai';
import { auth, extractWWWAuthenticateParams, type OAuthClientProvider } from '@modelcontextprotocol/sdk/client/auth.js';
import type { OAuthClientInformationMixed, OAuthClientMetadata, OAuthTokens } from '@modelcontextprotocol/sdk/shared/auth.js';
import { callbackParams, PageBrowser } from './support/oauth.ts';
import { useService } from './support/service.ts';

const REDIRECT_URI = 'http://127.0.0.1:9/mcp-callback';

/** An MCP client's storage, in memory, as an application would implement it. */
class MemoryClientProvider implements OAuthClientProvider {
  client: OAuthClientInformationMixed | undefined;
  saved: OAuthTokens | undefined;
  verifier = '';
  authorizationUrl: URL | undefined;

  get redirectUrl() {
    return REDIRECT_URI;
  }
  get clientMetadata(): OAuthClientMetadata {
    return {
      client_name: 'MCP test client',
      redirect_uris: [REDIRECT_URI],
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: 'none',
    };
  }
  clientInformation() {
    return this.client;
  }
  saveClientInformation(info: OAuthClientInformationMixed) {
    this.client = info;
  }
  tokens() {
    return this.saved;
  }
  saveTokens(tokens: OAuthTokens) {
    this.saved = tokens;
  }
  redirectToAuthorization(url: URL) {
    this.authorizationUrl = url;
  }
  saveCodeVerifier(verifier: string) {
    this.verifier = verifier;
  }
  codeVerifier() {
    return this.verifier;
  }
}

describe('OAuth with the MCP TypeScript SDK client', function () {
  this.timeout(30_000);
  const svc = useService({ worker: false });

  it('when an MCP client meets a 401, then it discovers, registers, gets the person\'s consent, calls /v1, refreshes, and a disconnect is effective at once', async () => {
    const serverUrl = `${svc.url}/v1`;
    const unauthorized = await fetch(`${serverUrl}/datasets`);
    expect(unauthorized.status).to.equal(401);
    const { resourceMetadataUrl } = extractWWWAuthenticateParams(unauthorized);
    expect(resourceMetadataUrl?.href).to.equal(`${svc.url}/.well-known/oauth-protected-resource/v1`);

    const client = new MemoryClientProvider();
    expect(await auth(client, { serverUrl, resourceMetadataUrl, scope: 'service.read service.write' })).to.equal('REDIRECT');
    expect(client.client?.client_id).to.be.a('string');
    const authorizationUrl = client.authorizationUrl!;
    expect(authorizationUrl.origin + authorizationUrl.pathname).to.equal(`${svc.url}/oauth/authorize`);
    expect(authorizationUrl.searchParams.get('code_challenge_method')).to.equal('S256');
    expect(authorizationUrl.searchParams.get('resource')).to.equal(serverUrl);

    const page = await new PageBrowser(svc.url).approve(authorizationUrl.href, {
      person: { email: 'mcp-user@tools.example', password: 'a long enough password', signUp: true },
    });
    const code = callbackParams(page, REDIRECT_URI).get('code')!;
    expect(await auth(client, { serverUrl, resourceMetadataUrl, authorizationCode: code })).to.equal('AUTHORIZED');
    const first = client.saved!;
    expect(first.access_token).to.match(/^svc_oauth_/);
    expect(first.refresh_token).to.match(/^svc_oauth_rt_/);

    const call = (token: string, init: RequestInit = {}) =>
      fetch(`${serverUrl}/datasets`, { ...init, headers: { authorization: `Bearer ${token}`, ...init.headers } });
    const created = await call(first.access_token, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'idempotency-key': 'mcp-1' },
      body: JSON.stringify({ externalRef: 'from-mcp' }),
    });
    expect(created.status).to.equal(201);

    // With tokens stored, the SDK refreshes instead of asking the person again.
    expect(await auth(client, { serverUrl, resourceMetadataUrl })).to.equal('AUTHORIZED');
    const second = client.saved!;
    expect(second.refresh_token).to.match(/^svc_oauth_rt_/).and.not.equal(first.refresh_token);
    const listed = await call(second.access_token);
    expect(listed.status).to.equal(200);
    expect(((await listed.json()) as { data: { externalRef: string }[] }).data.map((d) => d.externalRef)).to.deep.equal(['from-mcp']);

    // Disconnecting: the client revokes its refresh token; the grant's access token fails next.
    const revoked = await fetch(`${svc.url}/oauth/revoke`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ token: second.refresh_token!, client_id: client.client!.client_id }),
    });
    expect(revoked.status).to.equal(200);
    const after = await call(second.access_token);
    expect(after.status).to.equal(401);
    expect(extractWWWAuthenticateParams(after).error).to.equal('invalid_token');
  });
});
