// Property-based fuzzing of the running service over HTTP, each property for a few seconds:
// arbitrary paths (percent-encodings, NUL, unicode, dots), query strings, JSON bodies (deep,
// huge numbers, NULs, wrong types) and headers on every route. Never a 5xx, the process never
// dies, and every refusal is a problem document (or, under /oauth, the OAuth wire format or a
// page of the flow). A failure prints fast-check's seed and path to replay it.
import { request as httpRequest } from 'node:http';
import { expect } from 'chai';
import fc from 'fast-check';
import { operations } from '../api/routes/index.ts';
import { useService } from './support/service.ts';

const SECONDS_PER_PROPERTY = Number(process.env['FUZZ_SECONDS'] ?? 3);

type Sent = { method: string; path: string; headers: Record<string, string>; body?: string | Buffer };
type Answer = { status: number; contentType: string; body: string };

/** A raw request: the path goes out exactly as generated (fetch would normalise it). */
function send(base: URL, r: Sent): Promise<Answer> {
  return new Promise((resolve, reject) => {
    // Node's client sends a GET's body with no length at all: say it, or the body reads as the next request.
    const headers = r.body === undefined ? r.headers : { ...r.headers, 'content-length': String(Buffer.byteLength(r.body)) };
    const req = httpRequest({ host: base.hostname, port: base.port, method: r.method, path: r.path, headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode!, contentType: String(res.headers['content-type'] ?? ''), body: Buffer.concat(chunks).toString('utf8') }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(r.body);
  });
}

const segment = (ids: string[]) =>
  fc.oneof(
    fc.constantFrom(...ids),
    fc.constantFrom('%00', '%ff', '%e2%82', '%c0%80', '%ed%a0%80', '..', '.', '%2e%2e', '%2F', '%25', '%', '%zz', 'a%00b', '%F0%9F%92%A9', ''),
    fc.string({ unit: 'binary', maxLength: 12 }).map(encodeURIComponent),
    fc.uint8Array({ maxLength: 6 }).map((bytes) => [...bytes].map((b) => `%${b.toString(16).padStart(2, '0')}`).join('')),
    fc.string({ maxLength: 20 }).map((s) => s.replace(/[^\w.~-]/g, '')),
  );

const queryValue = fc.oneof(
  fc.constantFrom('%00', '%ff', '0000-01', '2026-13', '9999-12', '-1', '1e400', '0', '101', 'abc', '', '%e2%82', '+', '%2B'),
  fc.string({ unit: 'binary', maxLength: 30 }).map(encodeURIComponent),
  fc.uint8Array({ maxLength: 6 }).map((bytes) => [...bytes].map((b) => `%${b.toString(16).padStart(2, '0')}`).join('')),
);
const queryName = fc.oneof(
  fc.constantFrom('limit', 'cursor', 'from', 'to', 'externalRef', 'expires', 'signature', 'signup', 'client_id', 'redirect_uri', 'response_type', 'scope'),
  fc.string({ maxLength: 8 }).map(encodeURIComponent),
  fc.constantFrom('%00', '%ff', ''),
);
const query = fc.array(fc.tuple(queryName, queryValue), { maxLength: 4 }).map((pairs) => (pairs.length === 0 ? '' : `?${pairs.map(([n, v]) => `${n}=${v}`).join('&')}`));

/** JSON bodies as text: arbitrary values, values with our field names, deep nesting, huge numbers. */
const FIELDS = ['externalRef', 'name', 'filename', 'contentType', 'format', 'versionId', 'uploadId', 'client_name', 'redirect_uris', 'token_endpoint_auth_method'];
const nastyString = fc.oneof(fc.string({ unit: 'binary', maxLength: 40 }), fc.constantFrom('\u0000', 'a\u0000b', '\ud800', 'csv', 'jsonl', 'text/csv', 'none', 'http://127.0.0.1:9/cb', 'x'.repeat(300)));
const anyValue = fc.oneof(nastyString, fc.jsonValue({ maxDepth: 3 }), fc.constantFrom(1e308, -0, Number.MAX_SAFE_INTEGER + 2, true, null));
const jsonBody = fc.oneof(
  fc.dictionary(fc.constantFrom(...FIELDS), fc.oneof(anyValue, fc.array(anyValue, { maxLength: 3 }))).map((o) => JSON.stringify(o)),
  fc.jsonValue().map((v) => JSON.stringify(v)),
  fc.integer({ min: 1, max: 50_000 }).map((depth) => `{"externalRef":${'['.repeat(depth)}${']'.repeat(depth)}}`),
  fc.constantFrom('{"externalRef":1e400}', '{"externalRef":123456789012345678901234567890}', '{"name":"\\u0000"}', '{"\\u0000":1}', '{', '', 'null', '[]', '"\\ud800"', '{"format":"csv","versionId":"\\u0000"}'),
);

const headerValue = fc.oneof(fc.string({ unit: 'grapheme-ascii', maxLength: 40 }), fc.constantFrom('', ' ', 'Bearer', 'Bearer svc_test_x', 'Bearer svc_oauth_rt_x', 'wait=abc', 'wait=99999999999999999999'));
const contentType = fc.constantFrom(
  'application/json',
  'application/json; charset=utf-16',
  'text/csv',
  'multipart/form-data',
  'multipart/form-data; boundary=XX',
  'application/x-www-form-urlencoded',
  'application/octet-stream',
  'text/plain',
);

describe('fuzzing the running service (property-based, bounded in time)', function () {
  this.timeout(60_000);
  let base: URL;
  let key: string;
  let ids: string[];
  // The operations, and the pages that are not operations: the reference, problem pages, the OAuth flow's.
  const routes = [
    ...operations.map((op) => ({ method: op.method.toUpperCase(), path: op.path })),
    ...['/docs', '/openapi.json', '/problems/', '/problems/:type', '/oauth/authorize', '/oauth/interaction/:uid', '/account/connections'].map((path) => ({ method: 'GET', path })),
    ...['/account/sign-in', '/account/sign-out', '/account/connections/:grantId/disconnect'].map((path) => ({ method: 'POST', path })),
    ...['login', 'signup', 'consent', 'invitation', 'switch'].map((step) => ({ method: 'POST', path: `/oauth/interaction/:uid/${step}` })),
  ];
  const svc = useService({ worker: false });
  before(async () => {
    base = new URL(svc.url);
    ({ key } = await svc.tenant());
    const ds = (await svc.request('/v1/datasets', { key, json: { externalRef: 'fuzz' } })).json.id as string;
    const upload = (await svc.request(`/v1/datasets/${ds}/uploads`, { key, json: {} })).json.id as string;
    ids = [ds, upload, 'ver_0000000000000000000', 'exp_0000000000000000000', 'ds_does_not_exist'];
  });

  /** Never a 5xx; every refusal is a problem document, or under /oauth and /account one of their own formats. */
  function expectUnderstood(sent: Sent, answer: Answer): void {
    const what = `${sent.method} ${sent.path} → ${answer.status} ${answer.contentType} ${answer.body.slice(0, 300)}`;
    expect(answer.status, what).to.be.below(500);
    if (answer.status < 400) return;
    if (/^application\/problem\+json/.test(answer.contentType)) {
      if (sent.method === 'HEAD') return;
      const doc = JSON.parse(answer.body);
      expect(doc.status, what).to.equal(answer.status);
      expect(doc.type, what).to.be.a('string');
      return;
    }
    // The people's pages (the OAuth flow's and /account's) answer in HTML, the OAuth endpoints in their JSON.
    expect(sent.path.startsWith('/oauth/') || sent.path.startsWith('/account/'), what).to.equal(true);
    if (sent.method === 'HEAD') return;
    if (/^application\/json/.test(answer.contentType)) expect(JSON.parse(answer.body).error, what).to.be.a('string');
    else expect(answer.contentType, what).to.match(/^text\/html/);
  }

  const check = async (property: fc.IAsyncProperty<[Sent]>) => {
    await fc.assert(property, { numRuns: 100_000, plugins: [fc.interruptAfterTimeLimit(SECONDS_PER_PROPERTY * 1000)] });
    const health = await send(base, { method: 'GET', path: '/healthz', headers: {} });
    expect(health.status).to.equal(200);
    expect(svc.logs()).not.to.include('unhandled error');
  };

  const pathFor = (template: string, segments: string[]) => {
    let i = 0;
    return template.replace(/:\w+/g, () => segments[i++ % segments.length]!);
  };

  it('when paths and query strings are arbitrary on every route, then never a 5xx and every refusal is a problem', async () => {
    const sent = fc
      .tuple(fc.constantFrom(...routes), fc.array(segment(ids), { minLength: 1, maxLength: 3 }), query, fc.constantFrom('GET', 'HEAD', 'POST', 'PUT', 'DELETE', 'PATCH', 'OPTIONS'), fc.boolean(), fc.option(segment(ids)))
      .map(([route, segments, q, otherMethod, useOther, extra]): Sent => ({
        method: useOther ? otherMethod : route.method,
        path: `${pathFor(route.path, segments)}${extra === null ? '' : `/${extra}`}${q}`,
        headers: { authorization: `Bearer ${key}`, 'idempotency-key': `fuzz-${Math.random()}`, prefer: 'wait=0', 'content-type': 'application/json' },
        body: '{}',
      }));
    await check(fc.asyncProperty(sent, async (r) => expectUnderstood(r, await send(base, r))));
  });

  it('when JSON bodies are arbitrary (deep, huge numbers, NULs, wrong types) on every route that takes a body, then never a 5xx', async () => {
    const bodied = routes.filter((r) => r.method !== 'GET');
    const sent = fc.tuple(fc.constantFrom(...bodied), jsonBody, contentType).map(([route, body, type]): Sent => ({
      method: route.method,
      path: pathFor(route.path, ids),
      headers: { authorization: `Bearer ${key}`, 'idempotency-key': `fuzz-${Math.random()}`, prefer: 'wait=0', 'content-type': type },
      body,
    }));
    await check(fc.asyncProperty(sent, async (r) => expectUnderstood(r, await send(base, r))));
  });

  it('when headers are arbitrary (credentials, keys, content types, preferences), then never a 5xx', async () => {
    const sent = fc
      .tuple(fc.constantFrom(...routes), fc.dictionary(fc.constantFrom('authorization', 'idempotency-key', 'prefer', 'content-type', 'content-length', 'content-encoding', 'origin', 'x-request-id', 'accept', 'cookie'), headerValue), fc.boolean(), jsonBody)
      .map(([route, headers, withKey, body]): Sent => {
        const h = { ...headers };
        if (withKey) h['authorization'] = `Bearer ${key}`;
        // A wrong Content-Length is a different fault (the connection, not the request): keep it true.
        delete h['content-length'];
        return { method: route.method, path: pathFor(route.path, ids), headers: h, body: route.method === 'GET' ? undefined : body };
      });
    await check(fc.asyncProperty(sent, async (r) => expectUnderstood(r, await send(base, r))));
  });
});
