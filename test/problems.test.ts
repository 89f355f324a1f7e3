import { expect } from 'chai';
import { CONTRACT_FIELDS, ROW_ERROR_CODES } from '../shared/contract/fields.ts';
import { problemTypes } from '../shared/platform/problems.ts';
import { useService } from './support/service.ts';
import { eventually } from './support/eventually.ts';

describe('problem documents, routing, browser origins and the API reference', () => {
  let key: string;
  const svc = useService({ worker: false });
  before(async () => {
    ({ key } = await svc.tenant());
  });

  it('when a /v1 path does not exist, then 404 not-found as a problem document', async () => {
    const reply = await svc.request('/v1/nothing-here', { key });
    expect(reply.status).to.equal(404);
    expect(reply.headers.get('content-type')).to.match(/^application\/problem\+json/);
    expect(reply.json).to.include({ type: `${svc.config.errorsBase}/not-found`, title: 'Not found', status: 404, instance: '/v1/nothing-here' });
  });

  it('when a path outside /v1 does not exist, then 404 not-found too', async () => {
    const reply = await svc.request('/nowhere');
    expect(reply.status).to.equal(404);
    expect(reply.json.type).to.equal(`${svc.config.errorsBase}/not-found`);
  });

  it('when a known path gets another method, then 405 method-not-allowed with Allow', async () => {
    const reply = await svc.request('/v1/datasets', { key, method: 'DELETE' });
    expect(reply.status).to.equal(405);
    expect(reply.json).to.include({ type: `${svc.config.errorsBase}/method-not-allowed`, title: 'Method Not Allowed', status: 405 });
    expect(reply.headers.get('allow')).to.equal('POST, GET, HEAD');
    const health = await svc.request('/healthz', { method: 'POST', body: '' });
    expect(health.status).to.equal(405);
  });

  it('when a browser sends a CORS preflight to /v1, then it fails and nothing allows the origin', async () => {
    const preflight = await fetch(`${svc.url}/v1/datasets`, {
      method: 'OPTIONS',
      headers: { origin: 'https://evil.example', 'access-control-request-method': 'POST', 'access-control-request-headers': 'authorization' },
    });
    expect(preflight.status).to.be.greaterThanOrEqual(400);
    expect(preflight.headers.get('access-control-allow-origin')).to.equal(null);
    const simple = await fetch(`${svc.url}/v1/datasets`, { headers: { origin: 'https://evil.example', authorization: `Bearer ${key}` } });
    expect(simple.status).to.equal(200);
    expect(simple.headers.get('access-control-allow-origin')).to.equal(null);
  });

  it('when a problem type URI is fetched, then each type of the catalogue has a page describing it', async () => {
    for (const [type, t] of Object.entries(problemTypes)) {
      const page = await fetch(`${svc.config.errorsBase}/${type}`);
      expect(page.status, type).to.equal(200);
      expect(page.headers.get('content-type')).to.match(/^text\/html/);
      const html = await page.text();
      expect(html).to.include(type).and.include(String(t.status));
    }
    expect((await fetch(`${svc.config.errorsBase}/no-such-problem`)).status).to.equal(404);
    // The ingest problem's page describes the file and how to fix each code.
    const ingest = await (await fetch(`${svc.config.errorsBase}/ingest-validation-failed`)).text();
    for (const field of CONTRACT_FIELDS) expect(ingest).to.include(`<code>${field.name}</code>`);
    for (const code of ROW_ERROR_CODES) expect(ingest).to.include(`<code>${code.code}</code>`);
    expect(ingest).to.include('How to fix'.toLowerCase());
    // Its example is written as this server answers: its type under ERRORS_BASE.
    expect(ingest).to.include(`&quot;type&quot;: &quot;${svc.config.errorsBase}/ingest-validation-failed&quot;`);
    expect(ingest).not.to.include('api.example.com');
  });

  it('when health is asked, then /healthz and /readyz answer JSON without a credential', async () => {
    expect((await svc.request('/healthz')).json).to.deep.equal({ status: 'ok' });
    expect((await svc.request('/readyz')).json).to.deep.equal({ status: 'ready', database: 'ok', migrations: 'current' });
  });

  it('when migrations are pending, the latest or one before it, then /readyz answers 503', async () => {
    for (const which of ['(SELECT max(version) FROM schema_migrations)', '3']) {
      const { rows } = await svc.db.query<{ version: number; name: string }>(`DELETE FROM schema_migrations WHERE version = ${which} RETURNING version, name`);
      try {
        const reply = await svc.request('/readyz');
        expect(reply.status, `without ${rows[0]!.name}`).to.equal(503);
        expect(reply.json.type).to.equal(`${svc.config.errorsBase}/unavailable`);
      } finally {
        await svc.db.query('INSERT INTO schema_migrations (version, name) VALUES ($1, $2)', [rows[0]!.version, rows[0]!.name]);
      }
    }
    expect((await svc.request('/readyz')).status).to.equal(200);
  });

  it('when the OpenAPI document is fetched, then it is 3.1 and describes every operation with its problems', async () => {
    const doc = (await svc.request('/openapi.json')).json;
    expect(doc.openapi).to.equal('3.1.0');
    expect(doc.paths['/v1/datasets'].post.requestBody.content['application/json'].schema).to.be.an('object');
    expect(doc.paths['/v1/datasets'].post.responses).to.have.keys('201', '400', '401', '403', '409', '413', '415', '422', '500', '503');
    expect(doc.paths['/v1/datasets'].post.parameters.map((p: { name: string }) => p.name)).to.include('Idempotency-Key');
    expect(doc.paths['/v1/datasets'].get.parameters.map((p: { name: string }) => p.name)).to.include.members(['limit', 'cursor', 'externalRef']);
    expect(doc.paths['/v1/datasets/{id}'].get.responses).to.have.property('404');
    const versions = doc.paths['/v1/datasets/{id}/versions'];
    expect(versions.post.requestBody.content).to.have.keys('text/csv', 'multipart/form-data', 'application/json');
    expect(versions.post.responses).to.include.keys('201', '202', '404', '409', '413', '415', '422');
    expect(versions.get.responses).to.have.property('200');
    expect(doc.paths['/v1/datasets/{id}/versions/{versionId}'].get.responses).to.have.property('200');
    expect(doc.paths['/v1/datasets/{id}/uploads'].post.responses).to.have.property('201');
    expect(doc.paths['/uploads/{uploadId}'].put.responses).to.include.keys('200', '403', '409', '413');
    expect(doc.paths['/uploads/{uploadId}'].put.security).to.deep.equal([]); // no credential: the signed URL is the permission
    expect(doc.paths['/v1/datasets/{id}/metrics'].get.parameters.map((p: { name: string }) => p.name)).to.include.members(['from', 'to']);
    expect(doc.paths['/v1/datasets/{id}/catalog'].get.responses).to.include.keys('200', '404');
    expect(doc.components.schemas).to.include.keys('Version', 'Upload', 'Metrics', 'Catalog');
    expect(doc.components.schemas).to.have.property('Dataset');
    expect(doc.components.schemas).to.have.property('Problem');
    // /docs: the Scalar reference of this document, its script from this host (checked in Chromium: test/browser/).
    const docs = await fetch(`${svc.url}/docs`);
    const html = await docs.text();
    expect(html).to.include('<script src="/docs/scalar.standalone.js"').and.include('"url": "/openapi.json"');
    expect(html).not.to.match(/https?:\/\/(?!127\.0\.0\.1)[a-z0-9.-]+\//i);
    const script = await fetch(`${svc.url}/docs/scalar.standalone.js`);
    expect(script.status).to.equal(200);
    expect(script.headers.get('content-type')).to.match(/javascript/);
    await script.arrayBuffer();
  });
});

describe('metering', () => {
  const svc = useService({ worker: false });

  it('when live-mode requests are made, then they are counted per account in batches; test mode is not metered', async () => {
    const accountId = await svc.account();
    const live = await svc.key(accountId, 'live');
    const test = await svc.key(accountId, 'test');
    for (let i = 0; i < 3; i++) await svc.request('/v1/datasets', { key: live });
    for (let i = 0; i < 2; i++) await svc.request('/v1/datasets', { key: test });
    await eventually(() => svc.metered(accountId, 'requests'), (n) => n >= 3);
    // A few more flushes: the test-mode requests must not show up late.
    await new Promise((r) => setTimeout(r, 300));
    expect(await svc.metered(accountId, 'requests')).to.equal(3);
    const { rows: keys } = await svc.db.query('SELECT mode, last_used_at FROM api_keys WHERE account_id = $1 ORDER BY mode', [accountId]);
    expect(keys.every((k: { last_used_at: Date | null }) => k.last_used_at !== null)).to.equal(true);
  });
});
