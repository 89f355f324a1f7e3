// Requests that cannot be understood get their 4xx, never a 500 (a retry of the same bytes could
// never succeed); every HTML page carries its security headers; registration keeps plain-http
// redirect URIs to loopback hosts.
import { createHash } from 'node:crypto';
import { connect } from 'node:net';
import { gzipSync } from 'node:zlib';
import { expect } from 'chai';
import { type Reply, useService } from './support/service.ts';

const CSP = /default-src 'none'.*frame-ancestors 'none'/;

function expectPageHeaders(headers: Headers, what: string) {
  expect(headers.get('content-type'), what).to.match(/^text\/html/);
  expect(headers.get('content-security-policy'), what).to.match(CSP);
  expect(headers.get('x-frame-options'), what).to.equal('DENY');
  expect(headers.get('x-content-type-options'), what).to.equal('nosniff');
}

describe('requests that cannot be understood, and the pages\' headers', function () {
  this.timeout(30_000);
  let key: string;
  let datasetId: string;
  const svc = useService({ worker: false });
  before(async () => {
    ({ key } = await svc.tenant());
    datasetId = (await svc.request('/v1/datasets', { key, json: { externalRef: 'malformed' } })).json.id;
  });

  const expectBadRequest = (reply: Reply, what: string, code?: string) => {
    expect(reply.status, `${what}: ${reply.text}`).to.equal(400);
    expect(reply.headers.get('content-type'), what).to.match(/^application\/problem\+json/);
    expect(reply.json.type, what).to.equal(`${svc.config.errorsBase}/bad-request`);
    if (code) expect(reply.json.errors.map((e: { code: string }) => e.code), what).to.include(code);
  };

  describe('requests Node cannot parse', () => {
    /** Sends raw bytes on a socket and returns everything the server answers until it closes. */
    const raw = (bytes: string) =>
      new Promise<string>((resolve, reject) => {
        const url = new URL(svc.url);
        const socket = connect(Number(url.port), url.hostname, () => socket.end(bytes));
        let answer = '';
        socket.on('data', (chunk) => (answer += chunk.toString('latin1')));
        socket.on('close', () => resolve(answer));
        socket.on('error', reject);
      });

    it('when a request line or header is malformed, or the headers are too large, then 400 bad-request as a problem document, not a bare 400', async () => {
      const cases = [
        ['a header without a colon', 'GET /v1/datasets HTTP/1.1\r\nHost: x\r\nNot a header\r\n\r\n'],
        ['a request line that is not HTTP', 'HELLO\r\n\r\n'],
        ['headers over the limit', `GET / HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`],
      ];
      for (const [what, bytes] of cases) {
        const answer = await raw(bytes!);
        const [head, body] = answer.split('\r\n\r\n');
        expect(head, what).to.match(/^HTTP\/1\.1 400 Bad Request\r\n/);
        expect(head, what).to.match(/\r\nContent-Type: application\/problem\+json\r\n/);
        expect(JSON.parse(body!), what).to.include({ type: `${svc.config.errorsBase}/bad-request`, title: 'Bad Request', status: 400 });
      }
    });
  });

  describe('paths and queries', () => {
    it('when a path or a query holds a NUL or bad percent-encoding, then 400 bad-request, on /v1 and elsewhere', async () => {
      const cases: [string, string][] = [
        ['/v1/datasets/%00', 'invalid_character'],
        ['/v1/datasets/%ff', 'malformed_url'],
        ['/v1/datasets/ab%e2%82', 'malformed_url'],
        ['/v1/datasets?cursor=%00', 'invalid_character'],
        ['/v1/datasets?cursor=%ff', 'malformed_url'],
        ['/v1/datasets?%00=1', 'invalid_character'],
        [`/v1/datasets/${datasetId}/versions/%00`, 'invalid_character'],
        ['/problems/%ff', 'malformed_url'],
        ['/uploads/%00?expires=1&signature=x', 'invalid_character'],
        ['/exports/ex%ff/download', 'malformed_url'],
      ];
      for (const [path, code] of cases) expectBadRequest(await svc.request(path, { key }), path, code);
    });

    it('when a mutating /v1 call has a malformed path, then the filters answer first (401, then the key) and the 400 is not kept', async () => {
      expect((await svc.request('/v1/datasets/%ff/uploads', { json: {} })).status).to.equal(401);
      const noKey = await svc.request('/v1/datasets/%ff/uploads', { key, json: {}, idempotencyKey: null });
      expect(noKey.json.type).to.equal(`${svc.config.errorsBase}/idempotency-key-required`);
      const first = await svc.request('/v1/datasets/%ff/uploads', { key, json: {}, idempotencyKey: 'malformed-path' });
      expectBadRequest(first, 'with a key', 'malformed_url');
      const again = await svc.request('/v1/datasets/%ff/uploads', { key, json: {}, idempotencyKey: 'malformed-path' });
      expect(again.headers.get('idempotent-replayed')).to.equal(null);
    });

    it('when metrics are sliced from year 0000, then 400 bad-request naming the field', async () => {
      const reply = await svc.request(`/v1/datasets/${datasetId}/metrics?from=0000-01`, { key });
      expectBadRequest(reply, 'from=0000-01');
      expect(reply.json.errors[0].field).to.equal('from');
      expect((await svc.request(`/v1/datasets/${datasetId}/metrics?from=0001-01&to=9999-12`, { key })).status).to.equal(404);
    });

    it('when an OAuth page\'s address is malformed, then the flow\'s HTML page answers 400', async () => {
      const page = await fetch(`${svc.url}/oauth/interaction/%ff`);
      expect(page.status).to.equal(400);
      expectPageHeaders(page.headers, '/oauth/interaction/%ff');
      expect(await page.text()).to.include('cannot be read');
    });
  });

  it('when the OpenAPI document is read, then every /v1 and public operation lists 400 bad-request with examples of what cannot be understood', async () => {
    const doc = (await svc.request('/openapi.json')).json;
    for (const [path, item] of Object.entries(doc.paths as Record<string, Record<string, { responses: Record<string, any> }>>)) {
      if (path.startsWith('/oauth/')) continue;
      for (const [method, op] of Object.entries(item)) {
        const problem = op.responses['400']?.content?.['application/problem+json'];
        expect(problem, `${method} ${path}`).to.be.an('object');
        expect(problem.examples, `${method} ${path}`).to.include.keys('malformedUrl', 'nulInJson');
      }
    }
  });

  describe('JSON bodies', () => {
    it('when any JSON body holds a NUL in a string or a member name, then 400 bad-request naming where', async () => {
      const cases: [string, unknown, string][] = [
        ['/v1/datasets', { externalRef: 'x\u0000y' }, 'externalRef'],
        ['/v1/datasets', { externalRef: 'ok', name: 'a\u0000' }, 'name'],
        ['/v1/datasets', { externalRef: 'ok', extra: { deep: ['\u0000'] } }, 'extra.deep.0'],
        ['/v1/datasets', { 'bad\u0000key': 1 }, ''],
        [`/v1/datasets/${datasetId}/uploads`, { filename: 'a\u0000.csv' }, 'filename'],
        [`/v1/datasets/${datasetId}/exports`, { format: 'csv', versionId: 'v\u0000' }, 'versionId'],
        [`/v1/datasets/${datasetId}/versions`, { uploadId: 'up\u0000' }, 'uploadId'],
      ];
      for (const [path, json, field] of cases) {
        const reply = await svc.request(path, { key, json });
        expectBadRequest(reply, `${path} ${JSON.stringify(json)}`, 'invalid_character');
        expect(reply.json.errors[0].field).to.equal(field);
      }
    });

    it('when a JSON body is nested a hundred thousand deep, then 400, and the service goes on', async () => {
      const deep = '['.repeat(100_000) + ']'.repeat(100_000);
      const reply = await svc.request('/v1/datasets', { key, body: `{"externalRef":"deep","name":${deep}}`, headers: { 'content-type': 'application/json' } });
      expectBadRequest(reply, 'deep');
      expect((await svc.request('/v1/datasets', { key })).status).to.equal(200);
    });
  });

  describe('multipart bodies', () => {
    const part = (header = '') =>
      `--XX\r\nContent-Disposition: form-data; name="file"; filename="a.csv"\r\nContent-Type: text/csv\r\n${header}\r\ncontractId,customer\r\n`;
    const post = (body: string, contentType: string) =>
      svc.request(`/v1/datasets/${datasetId}/versions`, { key, body, headers: { 'content-type': contentType, prefer: 'wait=0' } });

    it('when the boundary is missing, the body is cut short, or a part header is 100 kB, then 400 malformed_multipart', async () => {
      expectBadRequest(await post(`${part()}--XX--\r\n`, 'multipart/form-data'), 'no boundary', 'malformed_multipart');
      expectBadRequest(await post(part(), 'multipart/form-data; boundary=XX'), 'truncated', 'malformed_multipart');
      expectBadRequest(await post(`${part(`X-Big: ${'a'.repeat(100_000)}\r\n`)}\r\n--XX--\r\n`, 'multipart/form-data; boundary=XX'), 'part header', 'malformed_multipart');
      const { rows } = await svc.db.query('SELECT count(*)::int AS n FROM versions');
      expect(rows[0].n).to.equal(0);
    });
  });

  describe('dynamic client registration', () => {
    const register = async (metadata: Record<string, unknown>) => {
      const res = await fetch(`${svc.url}/oauth/register`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ token_endpoint_auth_method: 'none', ...metadata }),
      });
      return { status: res.status, json: (await res.json()) as Record<string, string> };
    };

    it('when client metadata holds a NUL, then 400 invalid_client_metadata in RFC 7591\'s format', async () => {
      const reply = await register({ client_name: 'robot\u0000', redirect_uris: ['http://127.0.0.1:9/cb'] });
      expect(reply.status).to.equal(400);
      expect(reply.json.error).to.equal('invalid_client_metadata');
      expect(reply.json.error_description).to.include('client_name');
      const inList = await register({ redirect_uris: ['http://127.0.0.1:9/cb'], contacts: ['ops\u0000@example.com'] });
      expect(inList.status).to.equal(400);
      expect(inList.json.error).to.equal('invalid_client_metadata');
      const inRedirect = await register({ redirect_uris: ['http://127.0.0.1:9/cb\u0000'] });
      expect(inRedirect.status).to.equal(400);
      expect(inRedirect.json.error).to.equal('invalid_redirect_uri');
    });

    it('when a redirect URI is plain http to another host, then 400 invalid_redirect_uri; loopback hosts on any port and https pass', async () => {
      for (const uri of ['http://app.example/cb', 'http://192.168.1.2:8080/cb', 'http://127.0.0.1.evil.example/cb', 'http://localhost.evil.example/cb']) {
        const reply = await register({ redirect_uris: ['https://ok.example/cb', uri] });
        expect(reply.status, uri).to.equal(400);
        expect(reply.json.error, uri).to.equal('invalid_redirect_uri');
      }
      for (const uri of ['http://127.0.0.1/cb', 'http://127.0.0.1:53682/cb', 'http://[::1]:8080/cb', 'http://localhost:6274/oauth/callback', 'https://app.example/cb']) {
        const reply = await register({ redirect_uris: [uri] });
        expect(reply.status, uri).to.equal(201);
      }
    });
  });

  describe('the OAuth endpoints\' methods', () => {
    it('when an OAuth endpoint gets a method it does not take, then 405 method-not-allowed with Allow; a CORS preflight still reaches the provider', async () => {
      const cases: [string, string, string][] = [
        ['GET', '/oauth/token', 'POST'],
        ['OPTIONS', '/oauth/token', 'POST'],
        ['PUT', '/oauth/register', 'POST'],
        ['POST', '/oauth/authorize', 'GET, HEAD'],
        ['DELETE', '/oauth/revoke', 'POST'],
      ];
      for (const [method, path, allow] of cases) {
        const reply = await svc.request(path, { method });
        expect(reply.status, `${method} ${path}`).to.equal(405);
        expect(reply.json.type, `${method} ${path}`).to.equal(`${svc.config.errorsBase}/method-not-allowed`);
        expect(reply.headers.get('allow'), `${method} ${path}`).to.equal(allow);
      }
      const preflight = await fetch(`${svc.url}/oauth/token`, { method: 'OPTIONS', headers: { origin: 'https://app.example', 'access-control-request-method': 'POST' } });
      expect(preflight.status).to.equal(204);
    });
  });

  describe('the OAuth pages\' forms', () => {
    const submit = (body: string | Buffer, headers: Record<string, string> = {}) =>
      fetch(`${svc.url}/oauth/interaction/some-uid/login`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers },
        body,
      });

    it('when a form is over 16 kB, has over 20 fields, is in another charset or is compressed, then the flow\'s page with 413 or 415', async () => {
      const cases: [string, Response, number][] = [
        ['over 16 kB', await submit(`email=${'a'.repeat(20_000)}`), 413],
        ['over 20 fields', await submit(Array.from({ length: 25 }, (_, i) => `f${i}=1`).join('&')), 413],
        ['utf-16', await submit('email=a', { 'content-type': 'application/x-www-form-urlencoded; charset=utf-16' }), 415],
        ['gzip', await submit(gzipSync('email=a&password=b'), { 'content-encoding': 'gzip' }), 415],
      ];
      for (const [what, res, status] of cases) {
        expect(res.status, what).to.equal(status);
        expectPageHeaders(res.headers, what);
        expect(await res.text(), what).to.include('Dataset Service');
      }
    });
  });

  describe('security headers on every page', () => {
    it('when the reference, the problem pages or any page of the OAuth flow is served, then it carries CSP, X-Frame-Options and nosniff', async () => {
      const registered = await fetch(`${svc.url}/oauth/register`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ redirect_uris: ['http://127.0.0.1:9/cb'], token_endpoint_auth_method: 'none' }),
      });
      const clientId = ((await registered.json()) as { client_id: string }).client_id;
      const authorize = new URLSearchParams({
        client_id: clientId,
        redirect_uri: 'http://127.0.0.1:9/cb',
        response_type: 'code',
        scope: 'service.read',
        code_challenge: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM',
        code_challenge_method: 'S256',
      });
      const started = await fetch(`${svc.url}/oauth/authorize?${authorize}`, { redirect: 'manual' });
      const cookies = started.headers.getSetCookie().map((c) => c.split(';')[0]).join('; ');
      const signIn = await fetch(new URL(started.headers.get('location')!, svc.url), { headers: { cookie: cookies } });
      expect(await signIn.text()).to.include('Sign in');

      const pages: [string, Response][] = [
        ['/docs', await fetch(`${svc.url}/docs`)],
        ['problem index', await fetch(`${svc.config.errorsBase}/`)],
        ['problem page', await fetch(`${svc.config.errorsBase}/bad-request`)],
        ['sign-in page', signIn],
        ['expired interaction', await fetch(`${svc.url}/oauth/interaction/unknown-uid`)],
        ['provider error page', await fetch(`${svc.url}/oauth/authorize?client_id=unknown&response_type=code`)],
        ['refused form', await fetch(`${svc.url}/oauth/interaction/x/login`, { method: 'POST', headers: { origin: 'https://evil.example', 'content-type': 'application/x-www-form-urlencoded' }, body: 'csrf=x' })],
      ];
      for (const [what, res] of pages) {
        expectPageHeaders(res.headers, what);
        if (!res.bodyUsed) await res.arrayBuffer();
      }

      // response_mode=form_post: the provider's page posts the answer back with one inline
      // script, whose hash it adds to script-src; the rest of the policy stays.
      authorize.set('response_mode', 'form_post');
      authorize.set('scope', 'no-such-scope');
      authorize.set('prompt', 'none');
      const formPost = await fetch(`${svc.url}/oauth/authorize?${authorize}`, { redirect: 'manual' });
      const html = await formPost.text();
      expect(html).to.include('<form method="post" action="http://127.0.0.1:9/cb">');
      expectPageHeaders(formPost.headers, 'form_post page');
      const script = /<script>([\s\S]*?)<\/script>/.exec(html)![1]!;
      expect(formPost.headers.get('content-security-policy')).to.include(`'sha256-${createHash('sha256').update(script).digest('base64')}'`);
    });
  });
});
