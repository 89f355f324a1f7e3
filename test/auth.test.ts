import { expect } from 'chai';
import { revokeKey } from '../shared/tenancy/apiKeys.ts';
import { useService } from './support/service.ts';

describe('authentication filter (../shared/spec/service-spec.md §5)', () => {
  let key: string;
  const svc = useService();
  before(async () => {
    ({ key } = await svc.tenant());
  });

  const expectUnauthorized = (reply: { status: number; json: any; headers: Headers }) => {
    expect(reply.status).to.equal(401);
    expect(reply.headers.get('content-type')).to.match(/^application\/problem\+json/);
    expect(reply.json.type).to.equal(`${svc.config.errorsBase}/unauthorized`);
    expect(reply.json.title).to.equal('Unauthorized');
    expect(reply.json.status).to.equal(401);
    expect(reply.json).not.to.have.property('instance');
    expect(reply.json.detail).to.be.a('string');
  };

  it('when no Authorization header is sent, then 401 tells to provide an API key as a bearer credential', async () => {
    const reply = await svc.request('/v1/datasets');
    expectUnauthorized(reply);
    expect(reply.json.detail).to.match(/API key/).and.match(/bearer/i);
    expect(reply.headers.get('www-authenticate')).to.equal(
      `Bearer resource_metadata="${svc.url}/.well-known/oauth-protected-resource/v1"`,
    );
  });

  it('when the string is not a credential of this service, then 401 says so and states the valid prefixes', async () => {
    for (const junk of ['sk_live_abc', 'hello', 'svc_other_x']) {
      const reply = await svc.request('/v1/datasets', { headers: { authorization: `Bearer ${junk}` } });
      expectUnauthorized(reply);
      expect(reply.json.detail).to.match(/not a credential/);
      for (const prefix of ['svc_test_', 'svc_live_', 'svc_oauth_']) expect(reply.json.detail).to.include(prefix);
      expect(reply.headers.get('www-authenticate')).to.match(/^Bearer error="invalid_token", resource_metadata="/);
    }
  });

  it('when the header is not a bearer credential, then 401 as for a string that is not a credential', async () => {
    const reply = await svc.request('/v1/datasets', { headers: { authorization: `Basic ${Buffer.from('a:b').toString('base64')}` } });
    expectUnauthorized(reply);
    expect(reply.json.detail).to.match(/not a credential/);
  });

  it('when a refresh token is presented, then a 401 of its own says to exchange it at /oauth/token', async () => {
    const reply = await svc.request('/v1/datasets', { key: 'svc_oauth_rt_abcdefghijklmnopqrstuvwxyz' });
    expectUnauthorized(reply);
    expect(reply.json.detail).to.match(/refresh token/).and.include('/oauth/token');
  });

  it('when an OAuth access token that was never issued is presented, then a 401 with invalid_token says to get a new one', async () => {
    const reply = await svc.request('/v1/datasets', { key: 'svc_oauth_abcdefghijklmnopqrstuvwxyz' });
    expectUnauthorized(reply);
    expect(reply.json.detail).to.match(/expired, revoked or unknown/);
    expect(reply.headers.get('www-authenticate')).to.include('error="invalid_token"');
  });

  it('when a valid API key is presented, then the call is served', async () => {
    const reply = await svc.request('/v1/datasets', { key });
    expect(reply.status).to.equal(200);
    expect(reply.json.object).to.equal('list');
  });

  it('when a revoked key is used, then it answers exactly as a key that never existed, from the very next request', async () => {
    const accountId = await svc.account();
    const doomed = await svc.key(accountId);
    expect((await svc.request('/v1/datasets', { key: doomed })).status).to.equal(200);
    const { rows } = await svc.db.query('SELECT id FROM api_keys WHERE label = $1', [doomed.slice(0, 12)]);
    await revokeKey(svc.db, rows[0].id);

    const revoked = await svc.request('/v1/datasets', { key: doomed });
    const neverIssued = await svc.request('/v1/datasets', { key: `svc_test_${'A'.repeat(43)}` });
    expectUnauthorized(revoked);
    expect(revoked.text).to.equal(neverIssued.text);
    const comparable = (h: Headers) => [...h].filter(([n]) => !['date', 'request-id'].includes(n));
    expect(comparable(revoked.headers)).to.deep.equal(comparable(neverIssued.headers));
  });

  it('when the database is down, a string with no known prefix still gets its 401 (no lookup) while a key gets 503', async () => {
    const { createApp } = await import('../api/app.ts');
    const { createPool } = await import('../shared/platform/db.ts');
    const { UsageMeter } = await import('../shared/tenancy/usage.ts');
    const { createLogger } = await import('../shared/platform/log.ts');
    const { createServer } = await import('node:http');
    const deadPool = createPool('postgres://nobody:none@127.0.0.1:9/none', 1, 'dead');
    const log = createLogger({ logLevel: 'silent' }, 'dead');
    const { PgBoss } = await import('pg-boss');
    const { VersionOutcomes } = await import('../shared/domain/versionOutcomes.ts');
    const deadUrl = 'postgres://nobody:none@127.0.0.1:9/none';
    const deadBlobs = await (await import('../shared/blobs/createBlobStore.ts')).createBlobStore({ ...svc.config, blobStore: { kind: 'postgres' } }, deadPool);
    const server = createServer(
      createApp({
        config: svc.config,
        pool: deadPool,
        log,
        meter: new UsageMeter(deadPool, log, 60_000),
        boss: new PgBoss(deadUrl),
        outcomes: new VersionOutcomes(deadUrl, log),
        blobs: deadBlobs,
        resumable: (await import('../api/reception/resumable.ts')).createResumableReception({ config: svc.config, pool: deadPool, blobs: deadBlobs, log }, deadUrl),
        secrets: new (await import('../shared/platform/sealedSecrets.ts')).SecretBox(undefined, deadPool),
        oauth: svc.api.oauth,
      }),
    );
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const base = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
    try {
      const junk = await fetch(`${base}/v1/datasets`, { headers: { authorization: 'Bearer nope_123' } });
      expect(junk.status).to.equal(401);
      const keyed = await fetch(`${base}/v1/datasets`, { headers: { authorization: `Bearer ${key}` } });
      expect(keyed.status).to.equal(503);
      const problem = (await keyed.json()) as { type: string; title: string };
      expect(problem.type).to.equal(`${svc.config.errorsBase}/unavailable`);
      expect(problem.title).to.equal('Service Unavailable');
    } finally {
      server.close();
      await deadPool.end();
    }
  });

  it('when keys are used, then no credential reaches the log, only its 12-character label', async () => {
    await svc.request('/v1/datasets', { key });
    await svc.request('/v1/datasets', { key: 'svc_oauth_rt_secretsecretsecret' });
    const logs = svc.logs();
    expect(logs).to.include(key.slice(0, 12));
    expect(logs).not.to.include(key);
    expect(logs).not.to.include(key.slice(12));
    expect(logs).not.to.include('secretsecretsecret');
  });

  it('when keys are stored, then only their SHA-256 digest is kept, never the secret', async () => {
    const { rows } = await svc.db.query('SELECT * FROM api_keys');
    const dump = JSON.stringify(rows);
    expect(dump).not.to.include(key.slice(12));
    const { createHash } = await import('node:crypto');
    const digest = createHash('sha256').update(key).digest();
    expect(rows.some((r: { secret_sha256: Buffer }) => r.secret_sha256.equals(digest))).to.equal(true);
  });
});
