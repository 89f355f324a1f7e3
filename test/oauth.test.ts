// The embedded authorization server against a running service, driven by a real OAuth client
// library (oauth4webapi) and by a page-driving "browser" over HTTP.
import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import { operations } from '../api/routes/index.ts';
import { isMutating } from '../api/defineOperation.ts';
import * as oauth from 'oauth4webapi';
import { addMember, removeMember } from '../shared/tenancy/memberships.ts';
import { sha256 } from '../shared/platform/ids.ts';
import { queues } from '../shared/platform/queue.ts';
import { eventually } from './support/eventually.ts';
import { runScript } from './support/processes.ts';
import { accountsOffered, callbackParams, PageBrowser, type Person } from './support/oauth.ts';
import { startService, type TestService, useService } from './support/service.ts';

const insecure = { [oauth.allowInsecureRequests]: true } as const;
const REDIRECT_URI = 'http://127.0.0.1:9/callback';

describe('OAuth authorization server', function () {
  this.timeout(30_000);
  let as: oauth.AuthorizationServer;
  let client: oauth.Client;
  const svc = useService();
  before(async () => {
    const issuer = new URL(svc.url);
    as = await oauth.processDiscoveryResponse(issuer, await oauth.discoveryRequest(issuer, { algorithm: 'oauth2', ...insecure }));
    client = await register();
  });

  async function register(metadata: Partial<oauth.Client> = {}): Promise<oauth.Client> {
    const res = await oauth.dynamicClientRegistrationRequest(
      as,
      { redirect_uris: [REDIRECT_URI], client_name: 'Reporting robot', token_endpoint_auth_method: 'none', ...metadata },
      insecure,
    );
    return oauth.processDynamicClientRegistrationResponse(res);
  }

  let people = 0;
  const newPerson = (domain = 'example.com'): Person => ({ email: `person${++people}-${randomUUID().slice(0, 8)}@${domain}`, password: 'correct horse battery', signUp: true });

  type Flow = { url: string; verifier: string; state: string };
  async function authorizationUrl(params: Record<string, string> = {}, forClient = client): Promise<Flow> {
    const verifier = oauth.generateRandomCodeVerifier();
    const state = oauth.generateRandomState();
    const url = new URL(as.authorization_endpoint!);
    url.search = new URLSearchParams({
      client_id: forClient.client_id,
      redirect_uri: REDIRECT_URI,
      response_type: 'code',
      scope: 'service.read service.write',
      state,
      code_challenge: await oauth.calculatePKCECodeChallenge(verifier),
      code_challenge_method: 'S256',
      ...params,
    }).toString();
    return { url: url.href, verifier, state };
  }

  /** A person goes through the pages; the client validates the answer and exchanges the code. */
  async function connect(person: Person, options: { account?: string; scope?: string; browser?: PageBrowser } = {}) {
    const browser = options.browser ?? new PageBrowser(svc.url);
    const flow = await authorizationUrl(options.scope ? { scope: options.scope } : {});
    const page = await browser.approve(flow.url, { person, ...(options.account && { account: options.account }) });
    const params = oauth.validateAuthResponse(as, client, callbackParams(page, REDIRECT_URI), flow.state);
    const tokens = await exchange(params, flow.verifier);
    return { tokens, params, flow, browser, person };
  }

  const exchange = async (params: URLSearchParams, verifier: string) =>
    oauth.processAuthorizationCodeResponse(as, client, await oauth.authorizationCodeGrantRequest(as, client, oauth.None(), params, REDIRECT_URI, verifier, insecure));
  const refresh = async (refreshToken: string) =>
    oauth.processRefreshTokenResponse(as, client, await oauth.refreshTokenGrantRequest(as, client, oauth.None(), refreshToken, insecure));
  const tokenError = async (attempt: Promise<unknown>) => {
    const error = await attempt.then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error, 'the token endpoint should have refused').to.be.instanceOf(oauth.ResponseBodyError);
    return (error as oauth.ResponseBodyError).error;
  };
  const accountOf = async (email: string) =>
    (
      await svc.db.query<{ account_id: string; name: string }>(
        'SELECT m.account_id, a.name FROM memberships m JOIN people p ON p.id = m.person_id JOIN accounts a ON a.id = m.account_id WHERE p.email = lower($1)',
        [email],
      )
    ).rows;

  /** Seconds until a stored record (found by its value's digest) expires. */
  const secondsLeft = async (model: string, value: string) =>
    (
      await svc.db.query<{ seconds: number }>(`SELECT extract(epoch FROM expires_at - now())::int AS seconds FROM oauth_records WHERE model = $1 AND id_sha256 = $2`, [
        model,
        sha256(value),
      ])
    ).rows[0]!.seconds;
  /** Changes a stored record, to move it in time. */
  const alterRecord = (model: string, value: string, set: string) =>
    svc.db.query(`UPDATE oauth_records SET ${set} WHERE model = $1 AND id_sha256 = $2`, [model, sha256(value)]);

  describe('metadata', () => {
    it('when the RFC 8414 document is read, then it has exactly the spec\'s values plus response_types_supported', async () => {
      const reply = await svc.request('/.well-known/oauth-authorization-server');
      expect(reply.status).to.equal(200);
      expect(reply.json).to.include({
        issuer: svc.url,
        authorization_endpoint: `${svc.url}/oauth/authorize`,
        token_endpoint: `${svc.url}/oauth/token`,
        registration_endpoint: `${svc.url}/oauth/register`,
        revocation_endpoint: `${svc.url}/oauth/revoke`,
      });
      expect(reply.json.scopes_supported).to.deep.equal(['service.read', 'service.write']);
      expect(reply.json.grant_types_supported).to.deep.equal(['authorization_code', 'refresh_token']);
      expect(reply.json.code_challenge_methods_supported).to.deep.equal(['S256']);
      expect(reply.json.token_endpoint_auth_methods_supported).to.deep.equal(['none']);
      expect(reply.json.response_types_supported).to.deep.equal(['code']);
      expect(Object.keys(reply.json).sort()).to.deep.equal(
        [
          'issuer',
          'authorization_endpoint',
          'token_endpoint',
          'registration_endpoint',
          'revocation_endpoint',
          'scopes_supported',
          'response_types_supported',
          'grant_types_supported',
          'code_challenge_methods_supported',
          'token_endpoint_auth_methods_supported',
          'revocation_endpoint_auth_methods_supported',
          'authorization_response_iss_parameter_supported',
        ].sort(),
      );
      expect(reply.json.revocation_endpoint_auth_methods_supported).to.deep.equal(['none']);
      expect(reply.json.authorization_response_iss_parameter_supported).to.equal(true);
      expect(JSON.stringify(reply.json)).not.to.match(/openid|userinfo|jwks|client_credentials|id_token/);
    });

    it('when the protected-resource metadata is read at either address, then it names the API and this issuer', async () => {
      for (const path of ['/.well-known/oauth-protected-resource/v1', '/.well-known/oauth-protected-resource']) {
        const reply = await svc.request(path);
        expect(reply.status).to.equal(200);
        expect(reply.json).to.deep.equal({
          resource: `${svc.url}/v1`,
          authorization_servers: [svc.url],
          scopes_supported: ['service.read', 'service.write'],
          bearer_methods_supported: ['header'],
        });
      }
      const resource = new URL(`${svc.url}/v1`);
      const rs = await oauth.processResourceDiscoveryResponse(resource, await oauth.resourceDiscoveryRequest(resource, insecure));
      expect(rs.authorization_servers).to.deep.equal([svc.url]);
    });

    it('when the provider\'s own OpenID routes are asked for, then they do not exist', async () => {
      for (const path of ['/oauth/.well-known/openid-configuration', '/oauth/jwks', '/oauth/me', '/oauth/session/end', '/oauth/token/introspection', '/oauth/request']) {
        const reply = await svc.request(path);
        expect(reply.status, path).to.equal(404);
        expect(reply.json.type).to.equal(`${svc.config.errorsBase}/not-found`);
      }
    });
  });

  describe('the whole flow', () => {
    it('when a new person signs up and allows, then the client gets prefixed tokens bound to a new account named from the email domain, acting in live mode', async () => {
      const person = newPerson('Acme.Example');
      const { tokens, params } = await connect(person);
      expect(params.get('iss')).to.equal(svc.url);
      expect(tokens.access_token).to.match(/^svc_oauth_(?!rt_)[\w-]{40,}$/);
      expect(tokens.refresh_token).to.match(/^svc_oauth_rt_[\w-]{40,}$/);
      expect(tokens.token_type).to.equal('bearer');
      expect(tokens.expires_in).to.be.within(3590, 3600);
      expect(tokens.scope).to.equal('service.read service.write');

      const [account, ...others] = await accountOf(person.email);
      expect(others).to.have.length(0);
      expect(account!.name).to.equal('acme.example');

      const created = await svc.request('/v1/datasets', { key: tokens.access_token, json: { externalRef: 'made-by-oauth' } });
      expect(created.status).to.equal(201);
      expect(created.json.mode).to.equal('live');
      const { rows } = await svc.db.query('SELECT account_id, mode FROM datasets WHERE id = $1', [created.json.id]);
      expect(rows[0]).to.deep.equal({ account_id: account!.account_id, mode: 'live' });

      // Test-mode data of the same account stays invisible to the (live) token.
      const testKey = await svc.key(account!.account_id, 'test');
      const testOnly = await svc.request('/v1/datasets', { key: testKey, json: { externalRef: 'test-only' } });
      const listed = await svc.request('/v1/datasets', { key: tokens.access_token });
      expect(listed.status).to.equal(200);
      expect(listed.json.data.map((d: { id: string }) => d.id)).to.deep.equal([created.json.id]);
      expect((await svc.request(`/v1/datasets/${testOnly.json.id}`, { key: tokens.access_token })).status).to.equal(404);
      expect(await eventually(() => svc.metered(account!.account_id, 'requests'), (n) => n >= 3)).to.be.at.least(3);
    });

    it('when tokens are stored, then only digests of their values are in the database', async () => {
      const { tokens, params, browser } = await connect(newPerson());
      // An interaction still open in the same browser (it copies the session in).
      await browser.go((await authorizationUrl()).url);
      const { rows } = await svc.db.query<{ id_sha256: Buffer; payload: unknown }>('SELECT id_sha256, payload FROM oauth_records');
      const dump = JSON.stringify(rows.map((r) => r.payload));
      // The sign-in's cookie: whoever holds it acts as the person in this browser.
      const session = browser.cookie('_session');
      expect(session).to.have.length.greaterThan(20);
      expect(dump).not.to.include(session);
      for (const secret of [tokens.access_token, tokens.refresh_token!, params.get('code')!]) {
        expect(dump).not.to.include(secret);
        expect(rows.some((r) => r.id_sha256.equals(sha256(secret)))).to.equal(true);
      }
    });

    it('when a refresh token is used, then it is rotated; presenting the rotated one revokes the whole grant', async () => {
      const { tokens } = await connect(newPerson());
      const first = await refresh(tokens.refresh_token!);
      expect(first.refresh_token).to.match(/^svc_oauth_rt_/).and.not.equal(tokens.refresh_token);
      expect(first.access_token).to.match(/^svc_oauth_/).and.not.equal(tokens.access_token);
      expect((await svc.request('/v1/datasets', { key: first.access_token })).status).to.equal(200);

      expect(await tokenError(refresh(tokens.refresh_token!))).to.equal('invalid_grant');
      // Reuse detection: every token of the grant is gone, the newest ones included.
      expect((await svc.request('/v1/datasets', { key: first.access_token })).status).to.equal(401);
      expect(await tokenError(refresh(first.refresh_token!))).to.equal('invalid_grant');
    });

    it('when records expire and grants are revoked, then the scheduled purge deletes them and keeps the live ones', async () => {
      const expiring = await connect(newPerson());
      const live = await connect(newPerson());
      const revoked = await connect(newPerson());
      await oauth.revocationRequest(as, client, oauth.None(), revoked.tokens.refresh_token!, insecure);
      await svc.db.query(`UPDATE oauth_records SET expires_at = now() - interval '2 minutes' WHERE id_sha256 = $1`, [sha256(expiring.tokens.access_token)]);
      await svc.db.query(`UPDATE oauth_grant_accounts SET created_at = now() - interval '2 hours'`);
      const count = async (value: string) => (await svc.db.query('SELECT 1 FROM oauth_records WHERE id_sha256 = $1', [sha256(value)])).rowCount;

      expect((await svc.worker!.boss.getSchedules()).map((s) => s.name)).to.include(queues.purgeOAuthRecords);
      await svc.worker!.boss.send(queues.purgeOAuthRecords, {});
      expect(await eventually(() => count(expiring.tokens.access_token), (n) => n === 0)).to.equal(0);
      expect(await count(expiring.tokens.refresh_token!)).to.equal(1);
      expect(await count(live.tokens.access_token)).to.equal(1);
      const bindings = await svc.db.query<{ account_id: string }>('SELECT account_id FROM oauth_grant_accounts');
      const accounts = bindings.rows.map((r) => r.account_id);
      expect(accounts).to.include((await accountOf(live.person.email))[0]!.account_id);
      expect(accounts).not.to.include((await accountOf(revoked.person.email))[0]!.account_id);
      expect((await svc.request('/v1/datasets', { key: live.tokens.access_token })).status).to.equal(200);
    });

    it('when a client registration has had no authorization for 7 days, then the scheduled purge deletes it; one with a grant, or newer, is kept', async () => {
      await connect(newPerson());
      const unused = await register({ client_name: 'Never used' });
      const recent = await register({ client_name: 'Registered yesterday' });
      const clientRecord = (c: oauth.Client) => svc.db.query('SELECT 1 FROM oauth_records WHERE model = $1 AND id_sha256 = $2', ['Client', sha256(c.client_id)]);
      await alterRecord('Client', unused.client_id, `created_at = now() - interval '8 days'`);
      await alterRecord('Client', recent.client_id, `created_at = now() - interval '1 day'`);
      // The suite's client registered long ago and was last granted an authorization long ago, but holds grants.
      await alterRecord('Client', client.client_id, `created_at = now() - interval '30 days', used_at = now() - interval '8 days'`);
      await svc.worker!.boss.send(queues.purgeOAuthRecords, {});
      expect((await eventually(() => clientRecord(unused), (r) => r.rowCount === 0)).rowCount).to.equal(0);
      expect((await clientRecord(recent)).rowCount).to.equal(1);
      expect((await clientRecord(client)).rowCount).to.equal(1);
      // Its authorization requests are refused now, as for a client never registered.
      const refused = await new PageBrowser(svc.url).go((await authorizationUrl({}, unused)).url);
      expect(refused.html).to.include('invalid_client');
      const { tokens } = await connect(newPerson());
      expect((await svc.request('/v1/datasets', { key: tokens.access_token })).status).to.equal(200);
      const { rows } = await svc.db.query(`SELECT used_at > now() - interval '1 minute' AS fresh FROM oauth_records WHERE model = 'Client' AND id_sha256 = $1`, [sha256(client.client_id)]);
      expect(rows[0].fresh).to.equal(true);
    });

    it('when the same browser connects twice, then it asks for consent again and both grants keep working', async () => {
      const person = newPerson();
      const first = await connect(person);
      const second = await connect(person, { browser: first.browser });
      expect(second.tokens.access_token).not.to.equal(first.tokens.access_token);
      for (const tokens of [first.tokens, second.tokens]) {
        expect((await svc.request('/v1/datasets', { key: tokens.access_token })).status).to.equal(200);
        expect((await refresh(tokens.refresh_token!)).access_token).to.match(/^svc_oauth_/);
      }
    });

    it('when a refresh token is presented on /v1, then it gets the refresh-token 401', async () => {
      const { tokens } = await connect(newPerson());
      const reply = await svc.request('/v1/datasets', { key: tokens.refresh_token! });
      expect(reply.status).to.equal(401);
      expect(reply.json.detail).to.include('/oauth/token');
    });

    it('when the client revokes either token, then every token of the grant fails on the very next request', async () => {
      for (const which of ['access_token', 'refresh_token'] as const) {
        const { tokens } = await connect(newPerson());
        expect((await svc.request('/v1/datasets', { key: tokens.access_token })).status).to.equal(200);
        await oauth.processRevocationResponse(await oauth.revocationRequest(as, client, oauth.None(), tokens[which]!, insecure));
        const after = await svc.request('/v1/datasets', { key: tokens.access_token });
        expect(after.status, which).to.equal(401);
        expect(after.headers.get('www-authenticate')).to.include('error="invalid_token"').and.include('resource_metadata=');
        expect(await tokenError(refresh(tokens.refresh_token!))).to.equal('invalid_grant');
      }
    });

    it('when another client tries to revoke a token, then nothing is revoked', async () => {
      const { tokens } = await connect(newPerson());
      const other = await register({ client_name: 'Someone else' });
      await oauth.revocationRequest(as, other, oauth.None(), tokens.access_token, insecure);
      expect((await svc.request('/v1/datasets', { key: tokens.access_token })).status).to.equal(200);
    });

    it('when only service.read is granted, then reads work and every mutating call is 403 forbidden', async () => {
      const { tokens } = await connect(newPerson(), { scope: 'service.read' });
      expect(tokens.scope).to.equal('service.read');
      expect((await svc.request('/v1/datasets', { key: tokens.access_token })).status).to.equal(200);
      const write = await svc.request('/v1/datasets', { key: tokens.access_token, json: { externalRef: 'nope' } });
      expect(write.status).to.equal(403);
      expect(write.json.type).to.equal(`${svc.config.errorsBase}/forbidden`);
      expect(write.json).not.to.have.property('instance');
      expect(write.headers.get('www-authenticate')).to.include('error="insufficient_scope"').and.include('scope="service.write"');
      // Every mutating /v1 operation, whatever its path.
      for (const op of operations.filter((o) => o.surface === 'v1' && isMutating(o.method))) {
        const path = op.path.replace(/:(\w+)/g, (_m, name: string) => `${name}_x`);
        const reply = await svc.request(path, { key: tokens.access_token, method: op.method.toUpperCase(), json: {} });
        expect(reply.status, `${op.method} ${op.path}`).to.equal(403);
      }
    });

    it('when an access token has expired, then /v1 answers 401 invalid_token', async () => {
      const { tokens } = await connect(newPerson());
      await alterRecord('AccessToken', tokens.access_token, `expires_at = now() - interval '1 second'`);
      const reply = await svc.request('/v1/datasets', { key: tokens.access_token });
      expect(reply.status).to.equal(401);
      expect(reply.headers.get('www-authenticate')).to.include('error="invalid_token"');
    });
  });

  describe('authorization codes', () => {
    async function code(person = newPerson()) {
      const flow = await authorizationUrl();
      const page = await new PageBrowser(svc.url).approve(flow.url, { person });
      return { params: oauth.validateAuthResponse(as, client, callbackParams(page, REDIRECT_URI), flow.state), verifier: flow.verifier };
    }

    it('when a code is exchanged a second time, then it is refused and the tokens it gave are revoked', async () => {
      const { params, verifier } = await code();
      const tokens = await exchange(params, verifier);
      expect((await svc.request('/v1/datasets', { key: tokens.access_token })).status).to.equal(200);
      expect(await tokenError(exchange(params, verifier))).to.equal('invalid_grant');
      expect((await svc.request('/v1/datasets', { key: tokens.access_token })).status).to.equal(401);
      expect(await tokenError(refresh(tokens.refresh_token!))).to.equal('invalid_grant');
    });

    it('when a used code is presented again after its 60 seconds, then the tokens it gave are still revoked', async () => {
      const { params, verifier } = await code();
      const tokens = await exchange(params, verifier);
      // The used code is kept as long as its grant can live, to recognise a replay.
      expect(await secondsLeft('AuthorizationCode', params.get('code')!)).to.be.within(364 * 86_400, 365 * 86_400);
      // Its own 60 seconds have passed.
      await alterRecord('AuthorizationCode', params.get('code')!, `payload = jsonb_set(payload, '{exp}', to_jsonb(extract(epoch FROM now())::int - 120))`);
      expect(await tokenError(exchange(params, verifier))).to.equal('invalid_grant');
      expect((await svc.request('/v1/datasets', { key: tokens.access_token })).status).to.equal(401);
    });

    it('when one code is exchanged twice at the same moment, then exactly one exchange gets tokens, and, the second being a replay, they are revoked', async () => {
      for (let round = 0; round < 5; round++) {
        const { params, verifier } = await code();
        const outcomes = await Promise.allSettled([exchange(params, verifier), exchange(params, verifier)]);
        const won = outcomes.filter((o) => o.status === 'fulfilled');
        expect(won, `round ${round}`).to.have.length(1);
        const tokens = (won[0] as PromiseFulfilledResult<oauth.TokenEndpointResponse>).value;
        expect((await svc.request('/v1/datasets', { key: tokens.access_token })).status, `round ${round}`).to.equal(401);
        expect(await tokenError(refresh(tokens.refresh_token!)), `round ${round}`).to.equal('invalid_grant');
      }
    });

    it('when one refresh token is used twice at the same moment, then exactly one use gets tokens', async () => {
      for (let round = 0; round < 5; round++) {
        const { tokens } = await connect(newPerson());
        const outcomes = await Promise.allSettled([refresh(tokens.refresh_token!), refresh(tokens.refresh_token!)]);
        expect(outcomes.filter((o) => o.status === 'fulfilled'), `round ${round}`).to.have.length(1);
      }
    });

    it('when a code is older than 60 seconds, then it is refused', async () => {
      const { params, verifier } = await code();
      expect(await secondsLeft('AuthorizationCode', params.get('code')!)).to.be.within(55, 60);
      await alterRecord('AuthorizationCode', params.get('code')!, `expires_at = now() - interval '1 second'`);
      expect(await tokenError(exchange(params, verifier))).to.equal('invalid_grant');
    });

    it('when the code verifier does not match the challenge, then the exchange is refused', async () => {
      const { params } = await code();
      expect(await tokenError(exchange(params, oauth.generateRandomCodeVerifier()))).to.equal('invalid_grant');
    });
  });

  describe('refused requests', () => {
    const errorOf = async (params: Record<string, string>) => {
      const flow = await authorizationUrl(params);
      const page = await new PageBrowser(svc.url).go(flow.url);
      return new URL(page.url).searchParams;
    };

    it('when PKCE is plain, missing, or has a challenge without a method, then the client gets invalid_request', async () => {
      const verifier = oauth.generateRandomCodeVerifier();
      for (const params of [
        { code_challenge: verifier, code_challenge_method: 'plain' },
        { code_challenge: verifier, code_challenge_method: '' },
        { code_challenge: '', code_challenge_method: '' },
      ]) {
        const flow = await authorizationUrl({});
        const url = new URL(flow.url);
        for (const [k, v] of Object.entries(params)) v ? url.searchParams.set(k, v) : url.searchParams.delete(k);
        const page = await new PageBrowser(svc.url).go(url.href);
        expect(page.url.startsWith(REDIRECT_URI), JSON.stringify(params)).to.equal(true);
        expect(new URL(page.url).searchParams.get('error'), JSON.stringify(params)).to.equal('invalid_request');
      }
    });

    it('when an unknown scope, or none, is asked for, then the client gets invalid_scope with a description', async () => {
      for (const scope of ['service.admin', 'openid service.read', 'service.read profile', '', 'offline_access']) {
        const params = await errorOf({ scope });
        expect(params.get('error'), scope).to.equal('invalid_scope');
        expect(params.get('error_description'), scope).to.include('service.read');
      }
    });

    it('when offline_access comes with a known scope, with or without prompt=consent, then it is ignored and refresh tokens are issued anyway', async () => {
      for (const extra of [{}, { prompt: 'consent' }] as Record<string, string>[]) {
        const flow = await authorizationUrl({ scope: 'service.read offline_access', ...extra });
        const page = await new PageBrowser(svc.url).approve(flow.url, { person: newPerson() });
        const tokens = await exchange(oauth.validateAuthResponse(as, client, callbackParams(page, REDIRECT_URI), flow.state), flow.verifier);
        expect(tokens.scope, JSON.stringify(extra)).to.equal('service.read');
        expect(tokens.refresh_token).to.match(/^svc_oauth_rt_/);
      }
    });

    it('when another resource is named, then the client gets invalid_target', async () => {
      expect((await errorOf({ resource: 'https://elsewhere.example/api' })).get('error')).to.equal('invalid_target');
    });

    it('when a confidential client or another grant type registers, then registration is refused', async () => {
      for (const metadata of [
        { token_endpoint_auth_method: 'client_secret_basic' },
        { token_endpoint_auth_method: 'none', grant_types: ['client_credentials'] },
        { token_endpoint_auth_method: 'none', response_types: ['code id_token'] },
      ]) {
        const res = await fetch(as.registration_endpoint!, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ redirect_uris: [REDIRECT_URI], ...metadata }),
        });
        expect(res.status, JSON.stringify(metadata)).to.equal(400);
        expect(((await res.json()) as { error: string }).error, JSON.stringify(metadata)).to.equal('invalid_client_metadata');
      }
    });

    it('when the client_credentials grant is tried, then the token endpoint does not offer it', async () => {
      const res = await fetch(as.token_endpoint!, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ grant_type: 'client_credentials', client_id: client.client_id }),
      });
      expect(res.status).to.equal(400);
      expect(((await res.json()) as { error: string }).error).to.be.oneOf(['unsupported_grant_type', 'unauthorized_client']);
    });
  });

  describe('the person\'s pages', () => {
    it('when the person denies, then the client gets access_denied and no token exists', async () => {
      const flow = await authorizationUrl();
      const page = await new PageBrowser(svc.url).approve(flow.url, { person: newPerson(), decision: 'deny' });
      const params = callbackParams(page, REDIRECT_URI);
      expect(params.get('error')).to.equal('access_denied');
      expect(params.get('iss')).to.equal(svc.url);
      expect(params.has('code')).to.equal(false);
    });

    it('when a person linked to several accounts connects, then they choose one and the token acts for it', async () => {
      const person = newPerson();
      await new PageBrowser(svc.url).approve((await authorizationUrl()).url, { person, decision: 'deny' });
      const [own] = await accountOf(person.email);
      const team = await svc.account('Team account');
      const invitation = await addMember(svc.db, team, person.email);
      expect(invitation.status).to.equal('pending');

      const browser = new PageBrowser(svc.url);
      const flow = await authorizationUrl();
      let page = await browser.go(flow.url);
      page = await browser.submit(page, '/login', { email: person.email, password: person.password });
      // Until the person accepts the invitation, the account is not theirs to connect.
      expect(accountsOffered(page)).to.deep.equal([own!.account_id]);
      page = await browser.submit(page, '/invitation', { invitationCode: 'inv_not_the_code' });
      expect(page.status).to.equal(400);
      expect(page.html).to.include('not valid');
      page = await browser.submit(page, '/invitation', { invitationCode: invitation.invitationCode! });
      expect(accountsOffered(page).sort()).to.deep.equal([own!.account_id, team].sort());
      expect(page.html).to.include('Team account').and.include('Reporting robot');
      page = await browser.submit(page, '/consent', { decision: 'allow', account: team });
      const tokens = await exchange(oauth.validateAuthResponse(as, client, callbackParams(page, REDIRECT_URI), flow.state), flow.verifier);

      const created = await svc.request('/v1/datasets', { key: tokens.access_token, json: { externalRef: 'team-data' } });
      const { rows } = await svc.db.query('SELECT account_id FROM datasets WHERE id = $1', [created.json.id]);
      expect(rows[0].account_id).to.equal(team);
      // Refreshed tokens act for the same account.
      const refreshed = await refresh(tokens.refresh_token!);
      const listed = await svc.request('/v1/datasets', { key: refreshed.access_token });
      expect(listed.json.data.map((d: { id: string }) => d.id)).to.deep.equal([created.json.id]);
    });

    it('when the person names an account they are not linked to, then a 403 page answers and nothing is granted', async () => {
      const stranger = await svc.account('Not yours');
      const browser = new PageBrowser(svc.url);
      const flow = await authorizationUrl();
      const before = await svc.db.query(`SELECT count(*)::int AS n FROM oauth_records WHERE model IN ('Grant', 'AuthorizationCode')`);
      const page = await browser.approve(flow.url, { person: newPerson(), account: stranger });
      expect(page.status).to.equal(403);
      expect(page.html).to.include('nothing was granted');
      const after = await svc.db.query(`SELECT count(*)::int AS n FROM oauth_records WHERE model IN ('Grant', 'AuthorizationCode')`);
      expect(after.rows[0].n).to.equal(before.rows[0].n);
      expect((await svc.db.query('SELECT 1 FROM oauth_grant_accounts WHERE account_id = $1', [stranger])).rowCount).to.equal(0);
    });

    it('when a person the operator added signs up with the invitation code, then they get no new account and connect to the operator\'s one', async () => {
      const person = newPerson();
      const team = await svc.account('Operator-made');
      const { invitationCode } = await addMember(svc.db, team, person.email);
      const { tokens } = await connect({ ...person, invitationCode });
      expect((await accountOf(person.email)).map((a) => a.account_id)).to.deep.equal([team]);
      const created = await svc.request('/v1/datasets', { key: tokens.access_token, json: { externalRef: 'x' } });
      expect(created.status).to.equal(201);
      // The code was used up.
      expect((await svc.db.query('SELECT invitation_sha256 FROM memberships WHERE account_id = $1', [team])).rows[0].invitation_sha256).to.equal(null);
    });

    it('when someone signs up with an email the operator added but without its invitation code, then no password is set and nothing is granted', async () => {
      const victim = newPerson();
      const team = await svc.account('Victim team');
      const { invitationCode, signedUp } = await addMember(svc.db, team, victim.email);
      expect(signedUp).to.equal(false);
      const attacker = new PageBrowser(svc.url);
      for (const code of ['', 'inv_guessed', invitationCode!.slice(0, -1)]) {
        const page = await attacker.approve((await authorizationUrl()).url, { person: { ...victim, password: 'attacker password', invitationCode: code } });
        expect(page.status, code).to.equal(400);
        expect(page.html, code).to.include('could not create an account').and.include('invitation code');
      }
      const { rows } = await svc.db.query('SELECT password_hash FROM people WHERE email = $1', [victim.email]);
      expect(rows[0].password_hash).to.equal(null);
      // A code for another email does not work either, and a new person gets nothing from it.
      const other = await attacker.approve((await authorizationUrl()).url, { person: { ...newPerson(), invitationCode } });
      expect(other.status).to.equal(400);
      expect((await svc.db.query('SELECT accepted_at FROM memberships WHERE account_id = $1', [team])).rows[0].accepted_at).to.equal(null);
    });

    it('when an invitation has expired, then its code no longer works', async () => {
      const person = newPerson();
      const team = await svc.account('Late team');
      const { invitationCode } = await addMember(svc.db, team, person.email);
      await svc.db.query(`UPDATE memberships SET invitation_expires_at = now() - interval '1 second' WHERE account_id = $1`, [team]);
      const page = await new PageBrowser(svc.url).approve((await authorizationUrl()).url, { person: { ...person, invitationCode } });
      expect(page.status).to.equal(400);
      expect(page.html).to.include('expired');
    });

    it('when the operator removes the person from the account, then the grant\'s tokens fail on the next request and cannot be refreshed', async () => {
      const person = newPerson();
      const team = await svc.account('Leaving team');
      const { invitationCode } = await addMember(svc.db, team, person.email);
      const { tokens } = await connect({ ...person, invitationCode });
      expect((await svc.request('/v1/datasets', { key: tokens.access_token })).status).to.equal(200);
      const removed = await removeMember(svc.db, team, person.email);
      expect(removed).to.include({ removed: true, grantsRevoked: 1 });
      expect((await svc.request('/v1/datasets', { key: tokens.access_token })).status).to.equal(401);
      expect(await tokenError(refresh(tokens.refresh_token!))).to.equal('invalid_grant');
    });

    it('when only the membership row disappears, then the token stops acting at once (the binding goes with it)', async () => {
      const person = newPerson();
      const { tokens } = await connect(person);
      const [own] = await accountOf(person.email);
      await svc.db.query('DELETE FROM memberships WHERE account_id = $1', [own!.account_id]);
      expect((await svc.request('/v1/datasets', { key: tokens.access_token })).status).to.equal(401);
      expect(await tokenError(refresh(tokens.refresh_token!))).to.equal('invalid_grant');
    });

    it('when the person on the consent page is not the one at the keyboard, then "sign in as someone else" ends the sign-in and asks again', async () => {
      const first = newPerson();
      const browser = new PageBrowser(svc.url);
      await connect(first, { browser });
      const flow = await authorizationUrl();
      let page = await browser.go(flow.url);
      expect(page.html).to.include(`Signed in as ${first.email}`);
      page = await browser.submit(page, '/switch', {});
      expect(page.html).to.include('Sign in to continue');
      const second = newPerson();
      page = await browser.go(/href="([^"]+signup=1)"/.exec(page.html)![1]!.replace(/&amp;/g, '&'));
      page = await browser.submit(page, '/signup', { email: second.email, password: second.password, invitationCode: '' });
      expect(page.html).to.include(`Signed in as ${second.email}`);
      page = await browser.submit(page, '/consent', { decision: 'allow', account: accountsOffered(page)[0]! });
      const tokens = await exchange(oauth.validateAuthResponse(as, client, callbackParams(page, REDIRECT_URI), flow.state), flow.verifier);
      const created = await svc.request('/v1/datasets', { key: tokens.access_token, json: { externalRef: 'second-person' } });
      const { rows } = await svc.db.query('SELECT account_id FROM datasets WHERE id = $1', [created.json.id]);
      expect(rows[0].account_id).to.equal((await accountOf(second.email))[0]!.account_id);
    });

    it('when the password is wrong or the email is taken, then the page says so and the person can try again', async () => {
      const person = newPerson();
      await connect(person);
      const browser = new PageBrowser(svc.url);
      let page = await browser.go((await authorizationUrl()).url);
      page = await browser.submit(page, '/login', { email: person.email, password: 'wrong password' });
      expect(page.status).to.equal(401);
      expect(page.html).to.include('do not match').and.include('role="alert"');
      expect(page.html).not.to.include('wrong password');

      page = await browser.go(/href="([^"]+signup=1)"/.exec(page.html)![1]!.replace(/&amp;/g, '&'));
      page = await browser.submit(page, '/signup', { email: person.email, password: 'another password' });
      expect(page.status).to.equal(400);
      expect(page.html).to.include('could not create an account').and.include('sign in instead');

      page = await browser.submit(page, '/signup', { email: 'fresh@example.org', password: 'short' });
      expect(page.status).to.equal(400);
      expect(page.html).to.include('at least 8 characters');
    });

    it('when a password is wrong ten times in a row, then sign-in is refused for a while, even with the right one', async () => {
      const person = newPerson();
      await connect(person);
      const browser = new PageBrowser(svc.url);
      let page = await browser.go((await authorizationUrl()).url);
      for (let attempt = 0; attempt < 10; attempt++) {
        page = await browser.submit(page, '/login', { email: person.email, password: `wrong ${attempt}` });
        expect(page.html, `attempt ${attempt}`).to.include('do not match');
      }
      page = await browser.submit(page, '/login', { email: person.email, password: person.password });
      expect(page.status).to.equal(401);
      expect(page.html).to.include('Too many failed sign-ins');
      await svc.db.query(`UPDATE sign_in_throttle SET locked_until = now() - interval '1 second' WHERE email = $1`, [person.email]);
      page = await browser.submit(page, '/login', { email: person.email, password: person.password });
      expect(page.html).to.include('Allow Reporting robot');
      const { rows } = await svc.db.query('SELECT failures FROM sign_in_throttle WHERE email = $1', [person.email]);
      expect(rows).to.deep.equal([]);
    });

    it('when sixteen wrong passwords arrive at once, then only ten are checked and the rest find sign-in locked', async () => {
      const person = newPerson();
      await connect(person);
      const browser = new PageBrowser(svc.url);
      const page = await browser.go((await authorizationUrl()).url);
      const pages = await Promise.all(
        Array.from({ length: 16 }, (_, i) => browser.submit(page, '/login', { email: ` ${person.email.toUpperCase()} `, password: `wrong ${i}` })),
      );
      expect(pages.filter((p) => p.html.includes('do not match'))).to.have.length(10);
      expect(pages.filter((p) => p.html.includes('Too many failed sign-ins'))).to.have.length(6);
      const unlocked = await runScript('bin/operator.ts', ['people', 'unlock', '--email', person.email], svc.childEnv);
      expect(unlocked.code, unlocked.stderr).to.equal(0);
      const again = await browser.submit(page, '/login', { email: person.email, password: person.password });
      expect(again.html).to.include('Allow Reporting robot');
    });

    it('when a person the operator added and removed again signs up, then they get an account of their own', async () => {
      const person = newPerson('removed.example');
      const team = await svc.account('Short stay');
      await addMember(svc.db, team, person.email);
      await removeMember(svc.db, team, person.email);
      await connect(person);
      expect((await accountOf(person.email)).map((a) => a.name)).to.deep.equal(['removed.example']);
    });

    it('when the interaction is unknown or belongs to another browser, then an expired page answers, no-store', async () => {
      const page = await new PageBrowser(svc.url).go('/oauth/interaction/not-a-real-one');
      expect(page.status).to.equal(400);
      expect(page.html).to.include('expired');

      const flow = await authorizationUrl();
      const mine = new PageBrowser(svc.url);
      const started = await mine.go(flow.url);
      const res = await fetch(started.url);
      expect(res.status).to.equal(400);
      expect(res.headers.get('cache-control')).to.equal('no-store');
    });

    it('when a form is posted from another origin or without its token, then it is refused', async () => {
      const browser = new PageBrowser(svc.url);
      const page = await browser.go((await authorizationUrl()).url);
      const action = /action="([^"]+\/login)"/.exec(page.html)![1]!;
      const withoutToken = await browser.go(action, { method: 'POST', form: { email: 'a@b.c', password: 'x' } });
      expect(withoutToken.status).to.equal(403);
      const res = await fetch(new URL(action, svc.url), {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded', origin: 'https://evil.example' },
        body: 'email=a%40b.c&password=x&csrf=x',
      });
      expect(res.status).to.equal(403);
    });

    it('when a page is served, then it is no-store, not frameable, and has a viewport for phones', async () => {
      const res = await fetch((await new PageBrowser(svc.url).go((await authorizationUrl()).url)).url);
      // Without the interaction cookie this is the expired page; the headers are the same for every page.
      expect(res.headers.get('cache-control')).to.equal('no-store');
      expect(res.headers.get('x-frame-options')).to.equal('DENY');
      expect(await res.text()).to.include('name="viewport"');
    });
  });

  describe('the public doors (sign-in and sign-up for anyone)', () => {
    const alertOf = (page: { html: string }) => /role="alert" id="form-error">([^<]*)</.exec(page.html)?.[1];
    /** A sign-in page of a new authorization request, in a browser whose requests come from `localAddress`. */
    const signInPage = async (localAddress = '127.0.0.1') => {
      const browser = new PageBrowser(svc.url, { localAddress });
      return { browser, page: await browser.go((await authorizationUrl()).url) };
    };

    it('when wrong passwords from 127.0.0.2 lock the email there, then the person still signs in from 127.0.0.1; the lock expires, and a failure every 15 minutes never locks', async () => {
      const person = newPerson();
      await connect(person);
      const attacker = await signInPage('127.0.0.2');
      let page = attacker.page;
      for (let attempt = 0; attempt < 10; attempt++) {
        page = await attacker.browser.submit(page, '/login', { email: person.email, password: `wrong ${attempt}` });
        expect(page.html, `attempt ${attempt}`).to.include('do not match');
      }
      page = await attacker.browser.submit(page, '/login', { email: person.email, password: person.password });
      expect(page.status).to.equal(401);
      expect(page.html).not.to.include('do not match'); // locked, at 127.0.0.2

      const own = await signInPage('127.0.0.1');
      const signedIn = await own.browser.submit(own.page, '/login', { email: person.email, password: person.password });
      expect(signedIn.html, alertOf(signedIn)).to.include('Allow Reporting robot');

      // The lock at 127.0.0.2 expires, and the count starts again.
      await svc.db.query(`UPDATE sign_in_throttle SET locked_until = now() - interval '1 second' WHERE email = $1`, [person.email]);
      page = await attacker.browser.submit(page, '/login', { email: person.email, password: 'wrong again' });
      expect(page.html).to.include('do not match');
      const counted = async () => (await svc.db.query('SELECT failures, locked_until FROM sign_in_throttle WHERE email = $1', [person.email])).rows;
      expect(await counted()).to.deep.equal([{ failures: 1, locked_until: null }]);
      // One more failure each 15 minutes, after nine: the count starts again instead of locking.
      await svc.db.query(`UPDATE sign_in_throttle SET failures = 9, last_failure_at = now() - interval '15 minutes 1 second' WHERE email = $1`, [person.email]);
      page = await attacker.browser.submit(page, '/login', { email: person.email, password: 'wrong once more' });
      expect(page.html).to.include('do not match');
      expect(await counted()).to.deep.equal([{ failures: 1, locked_until: null }]);
    });

    it('when an email is unknown, then every sign-in answer is the one a known email gets, the lock included', async () => {
      const person = newPerson();
      await connect(person);
      const answers = async (email: string) => {
        const { browser, page: first } = await signInPage('127.0.0.3');
        let page = first;
        const seen = [];
        for (let attempt = 0; attempt < 12; attempt++) {
          page = await browser.submit(page, '/login', { email, password: `wrong ${attempt}` });
          seen.push(`${page.status} ${alertOf(page)}`);
        }
        return seen;
      };
      const known = await answers(person.email);
      expect(known.at(-1)).to.match(/^401 /).and.not.include('do not match');
      expect(await answers(`nobody-${randomUUID().slice(0, 8)}@example.com`)).to.deep.equal(known);
    });

    it('when sign-up is refused, then it answers the same whether the email has an account, was invited by an administrator, or is unknown', async () => {
      const existing = newPerson();
      await connect(existing);
      const invited = newPerson();
      const team = await svc.account('Invited team');
      await addMember(svc.db, team, invited.email);
      const refusal = async (email: string, invitationCode: string) => {
        const browser = new PageBrowser(svc.url);
        let page = await browser.go((await authorizationUrl()).url);
        page = await browser.go(/href="([^"]+signup=1)"/.exec(page.html)![1]!.replace(/&amp;/g, '&'));
        page = await browser.submit(page, '/signup', { email, password: 'another password', invitationCode });
        return `${page.status} ${alertOf(page)}`;
      };
      const answers = [
        await refusal(existing.email, ''),
        await refusal(existing.email, 'inv_guessed'),
        await refusal(invited.email, ''),
        await refusal(invited.email, 'inv_guessed'),
        await refusal(`nobody-${randomUUID().slice(0, 8)}@example.com`, 'inv_guessed'),
      ];
      expect(answers[0]).to.match(/^400 We could not create an account/);
      expect(new Set(answers).size, answers.join('\n')).to.equal(1);
    });

    it('when one address floods sign-in with random emails, then a person signing in from another address is served at once, never told to wait', async function () {
      this.timeout(60_000);
      const person = newPerson();
      await connect(person);
      const flood = await signInPage('127.0.0.2');
      const own = await signInPage('127.0.0.1');
      let answered = 0;
      const flooding = Promise.all(
        Array.from({ length: 80 }, (_, i) =>
          flood.browser.submit(flood.page, '/login', { email: `flood-${i}-${randomUUID().slice(0, 8)}@example.com`, password: 'guess' }).then((p) => {
            answered++;
            return p.status;
          }),
        ),
      );
      // The flood is under way: its first answers are back, most of its checks still wait.
      await eventually(() => answered, (n) => n > 0, { everyMs: 5 });
      const started = performance.now();
      const signedIn = await own.browser.submit(own.page, '/login', { email: person.email, password: person.password });
      const tookMs = performance.now() - started;
      const statuses = await flooding;
      expect(signedIn.status, alertOf(signedIn) ?? signedIn.html.slice(0, 300)).to.equal(200);
      expect(signedIn.html).to.include('Allow Reporting robot');
      expect(tookMs, `the sign-in took ${Math.round(tookMs)} ms`).to.be.below(1_500);
      // The flood's own excess is what waits or is asked to retry (503, never 429).
      expect(statuses.filter((s) => s !== 401 && s !== 503)).to.deep.equal([]);
    });
  });
});

describe('OAuth behind a TLS-terminating proxy', function () {
  this.timeout(30_000);

  async function startAuthorization(svc: TestService, headers: Record<string, string>) {
    const registered = await fetch(`${svc.url}/oauth/register`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ redirect_uris: [REDIRECT_URI], token_endpoint_auth_method: 'none' }),
    });
    const { client_id } = (await registered.json()) as { client_id: string };
    const query = new URLSearchParams({
      client_id,
      redirect_uri: REDIRECT_URI,
      response_type: 'code',
      scope: 'service.read',
      code_challenge: await oauth.calculatePKCECodeChallenge(oauth.generateRandomCodeVerifier()),
      code_challenge_method: 'S256',
    });
    const res = await fetch(`${svc.url}/oauth/authorize?${query}`, { redirect: 'manual', headers });
    const { rows } = await svc.db.query<{ return_to: string }>(
      `SELECT payload->>'returnTo' AS return_to FROM oauth_records WHERE model = 'Interaction' ORDER BY expires_at DESC LIMIT 1`,
    );
    return { status: res.status, cookies: res.headers.getSetCookie(), returnTo: rows[0]!.return_to };
  }

  it('when TRUST_PROXY is set and the proxy says https, then the provider builds https addresses and sets Secure cookies; unset, it ignores the header', async () => {
    const forwarded = { 'x-forwarded-proto': 'https', 'x-forwarded-host': 'svc.example' };
    const trusting = await startService({ worker: false, env: { TRUST_PROXY: 'true' } });
    try {
      const behindProxy = await startAuthorization(trusting, forwarded);
      expect(behindProxy.status).to.equal(303);
      expect(behindProxy.returnTo).to.match(/^https:\/\/svc\.example\/oauth\/authorize\//);
      expect(behindProxy.cookies.filter((c) => c.startsWith('_interaction=')).every((c) => /;\s*secure/i.test(c))).to.equal(true);
    } finally {
      await trusting.stop();
    }
    const direct = await startService({ worker: false });
    try {
      const spoofed = await startAuthorization(direct, forwarded);
      expect(spoofed.returnTo).to.match(/^http:\/\/127\.0\.0\.1:\d+\/oauth\/authorize\//);
    } finally {
      await direct.stop();
    }
  });
});
