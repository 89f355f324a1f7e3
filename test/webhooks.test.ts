// Events and webhooks with a real receiving server that verifies every delivery's signature with
// the standardwebhooks package, as a user's program does.
import { expect } from 'chai';
import { lookup } from 'node:dns/promises';
import { createServer } from 'node:net';
import { hostname } from 'node:os';
import type { AddressInfo } from 'node:net';
import { EVENT_TYPE_NAMES } from '../shared/contract/events.ts';
import { createExport } from '../shared/domain/exports.ts';
import { activateVersion, versionById } from '../shared/domain/versions.ts';
import { isPublicAddress } from '../shared/platform/addresses.ts';
import { queues } from '../shared/platform/queue.ts';
import { HEADER, newDataset, postCsv } from './support/ingest.ts';
import { runScript } from './support/processes.ts';
import { eventually } from './support/eventually.ts';
import { useService } from './support/service.ts';
import { WebhookReceiver } from './support/webhookReceiver.ts';

const GOOD = `${HEADER}\nc1,Acme,Pro,2026-01-01,2026-12-31,1200.00,EUR\n`;
const GOOD2 = `${HEADER}\nc1,Acme,Pro,2026-01-01,2026-12-31,1200.00,EUR\nc2,Beta,Pro,2026-01-01,2026-12-31,600.00,EUR\n`;
const BAD = `${HEADER}\nc1,,Pro,2026-01-01,2026-12-31,1,EUR\n`;

describe('events and webhooks', () => {
  const svc = useService({ env: { WEBHOOK_RETRY_DELAYS: '0.3,0.3,0.3', WEBHOOK_TIMEOUT_MS: '1500' } });
  let receiver: WebhookReceiver;
  before(async () => {
    receiver = await new WebhookReceiver().start();
  });
  after(async () => {
    await receiver.stop();
  });

  const createEndpoint = async (key: string, path: string, events: string[] = ['*'], answer?: Parameters<WebhookReceiver['expect']>[2]) => {
    const reply = await svc.request('/v1/webhook-endpoints', { key, json: { url: receiver.url(path), events } });
    expect(reply.status, reply.text).to.equal(201);
    receiver.expect(path, reply.json.secret, answer);
    return reply.json as { id: string; secret: string; url: string; status: string };
  };
  const attemptsOf = async (eventId: string) => {
    const { rows } = await svc.db.query(
      `SELECT a.attempt, a.response_status, a.error FROM webhook_attempts a JOIN webhook_deliveries d ON d.id = a.delivery_id
       WHERE d.event_id = $1 ORDER BY a.attempt`,
      [eventId],
    );
    return rows as { attempt: number; response_status: number | null; error: string | null }[];
  };
  const waitFor = async <T>(probe: () => T | undefined, what: string | (() => string), ms = 15_000): Promise<T> => {
    const deadline = Date.now() + ms;
    for (;;) {
      const found = probe();
      if (found !== undefined) return found;
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${typeof what === 'string' ? what : what()}`);
      await new Promise((r) => setTimeout(r, 25));
    }
  };

  it('when datasets, versions and exports change, then every event type reaches the endpoint signed, with the resource as its GET shows it, and the same as GET /v1/events/{id}', async function () {
    this.timeout(60_000);
    const { key } = await svc.tenant();
    const endpoint = await createEndpoint(key, '/all');
    expect(endpoint.secret).to.match(/^whsec_[A-Za-z0-9+/]{43}=$/);
    expect(Buffer.from(endpoint.secret.slice(6), 'base64')).to.have.length(32);
    expect(endpoint).to.include({ object: 'webhook_endpoint', status: 'enabled' });

    const ds = await newDataset(svc, key);
    const v1 = await postCsv(svc, key, ds, GOOD);
    const v2 = await postCsv(svc, key, ds, GOOD2);
    const v3 = await postCsv(svc, key, ds, BAD);
    expect([v1.status, v2.status, v3.status]).to.deep.equal([201, 201, 422]);
    const exported = await svc.request(`/v1/datasets/${ds}/exports`, { key, json: { format: 'csv' } });
    expect(exported.status).to.equal(202);
    // An export that cannot be built (a format no release knows), failed by the dead-letter consumer.
    const broken = await svc.db.connect();
    try {
      const exp = await createExport(broken, svc.worker!.boss, { datasetId: ds, versionId: v2.json.id, format: 'nope' as never });
      await svc.worker!.boss.send(queues.buildExportDead, { exportId: exp.id });
    } finally {
      broken.release();
    }
    // An export of a dataset deleted before it is built is never built (nor failed): both first.
    await waitFor(() => {
      const types = new Set(receiver.at('/all').map((r) => r.event.type));
      return types.has('export.ready') && types.has('export.failed') ? true : undefined;
    }, 'the exports to be built and failed');
    const deleted = await svc.request(`/v1/datasets/${ds}`, { key, method: 'DELETE' });
    expect(deleted.status, deleted.text).to.equal(200);
    const rates = await svc.request('/v1/exchange-rates', { key, json: { base: 'EUR', rates: [{ month: '2026-01', currency: 'USD', rate: '0.9235' }] } });
    expect(rates.status, rates.text).to.equal(201);

    const byType = await waitFor(() => {
      const at = receiver.at('/all');
      const types = new Set(at.map((r) => r.event.type));
      return EVENT_TYPE_NAMES.every((t) => types.has(t)) ? Map.groupBy(at, (r) => r.event.type) : undefined;
    }, () => `every event type (so far: ${[...new Set(receiver.at('/all').map((r) => r.event.type))].join(', ')})`);
    expect(receiver.unverified).to.deep.equal([]);
    expect(byType.get('version.active')!.map((r) => r.event.data.object.id)).to.deep.equal([v1.json.id, v2.json.id]);
    expect(byType.get('version.superseded')!.map((r) => r.event.data.object.id)).to.deep.equal([v1.json.id]);
    expect(byType.get('version.failed')![0]!.event.data.object).to.include({ id: v3.json.versionId, status: 'failed' });
    expect(byType.get('version.failed')![0]!.event.data.object.problem).to.include({ errorCount: 1 });
    expect(byType.get('export.ready')![0]!.event.data.object).to.include({ id: exported.json.id, status: 'ready' });
    expect(byType.get('dataset.deleted')![0]!.event.data.object).to.include({ id: ds, object: 'dataset' });
    expect(byType.get('exchange_rates.created')![0]!.event.data.object).to.deep.equal(rates.json);

    for (const got of receiver.at('/all')) {
      expect(got.headers['webhook-id']).to.equal(got.event.id);
      expect(Number(got.headers['webhook-timestamp'])).to.be.within(Date.now() / 1000 - 60, Date.now() / 1000 + 1);
      const read = await svc.request(`/v1/events/${got.event.id}`, { key });
      expect(read.status).to.equal(200);
      expect(read.text).to.equal(got.body);
    }
    // The version as its GET showed it when it became active: as the creation answered it.
    const activeEvent = byType.get('version.active')![1]!.event.data.object;
    expect(activeEvent).to.deep.equal({ ...v2.json, status: 'active' });
  });

  it('when the receiver answers 500 and then 200, then the event comes twice with the same webhook-id, and both attempts are recorded', async function () {
    this.timeout(30_000);
    const { key } = await svc.tenant();
    await createEndpoint(key, '/flaky', ['dataset.created'], (n) => ({ status: n === 1 ? 500 : 200 }));
    await newDataset(svc, key);
    const both = await waitFor(() => (receiver.at('/flaky').length >= 2 ? receiver.at('/flaky') : undefined), 'the retry');
    expect(both[0]!.headers['webhook-id']).to.equal(both[1]!.headers['webhook-id']);
    expect(both[0]!.body).to.equal(both[1]!.body);
    const attempts = await eventually(() => attemptsOf(both[0]!.event.id), (a) => a.length === 2);
    expect(attempts.map((a) => a.response_status)).to.deep.equal([500, 200]);
    expect(attempts[0]!.error).to.equal('answered 500');
  });

  it('when the receiver does not answer within the timeout, then the attempt fails and the event is sent again', async function () {
    this.timeout(30_000);
    const { key } = await svc.tenant();
    await createEndpoint(key, '/slow', ['dataset.created'], (n) => ({ status: 200, delayMs: n === 1 ? 2_500 : 0 }));
    await newDataset(svc, key);
    const both = await waitFor(() => (receiver.at('/slow').length >= 2 ? receiver.at('/slow') : undefined), 'the retry');
    const attempts = await eventually(() => attemptsOf(both[0]!.event.id), (a) => a.length === 2);
    expect(attempts[0]!.error).to.match(/no answer within 1500 ms/);
    expect(attempts[1]!.response_status).to.equal(200);
  });

  it('when the receiver answers with a redirect, then it is not followed: the attempt fails and is retried', async function () {
    this.timeout(30_000);
    const { key } = await svc.tenant();
    await createEndpoint(key, '/moved', ['dataset.created'], (n) => (n === 1 ? { status: 302, headers: { location: receiver.url('/target') } } : { status: 200 }));
    receiver.expect('/target', 'whsec_AAAA');
    await newDataset(svc, key);
    const both = await waitFor(() => (receiver.at('/moved').length >= 2 ? receiver.at('/moved') : undefined), 'the retry');
    expect(receiver.at('/target')).to.deep.equal([]);
    const attempts = await eventually(() => attemptsOf(both[0]!.event.id), (a) => a.length === 2);
    expect(attempts.map((a) => a.response_status)).to.deep.equal([302, 200]);
  });

  it('when events happen in the other mode or another account, then an endpoint never receives them and the events API never shows them', async function () {
    this.timeout(30_000);
    const { accountId, key } = await svc.tenant();
    const liveKey = await svc.key(accountId, 'live');
    const other = await svc.tenant();
    await createEndpoint(key, '/test-only', ['dataset.created']);
    const liveDs = await newDataset(svc, liveKey);
    const otherDs = await newDataset(svc, other.key);
    const testDs = await newDataset(svc, key);
    const got = await waitFor(() => receiver.at('/test-only').find((r) => r.event.data.object.id === testDs), 'the test-mode event');
    await new Promise((r) => setTimeout(r, 500));
    expect(receiver.at('/test-only').map((r) => r.event.data.object.id)).to.deep.equal([testDs]);
    expect(got.event.mode).to.equal('test');

    const liveEvents = await svc.request('/v1/events', { key: liveKey });
    expect(liveEvents.json.data.map((e: { data: { object: { id: string } } }) => e.data.object.id)).to.deep.equal([liveDs]);
    expect((await svc.request(`/v1/events/${got.event.id}`, { key: liveKey })).status).to.equal(404);
    expect((await svc.request(`/v1/events/${got.event.id}`, { key: other.key })).status).to.equal(404);
    expect(otherDs).to.be.a('string');
  });

  it('when a build rolls back, then its events are gone with it: nothing is recorded, nothing is sent', async () => {
    const { key } = await svc.tenant();
    const ds = await newDataset(svc, key);
    const failed = await postCsv(svc, key, ds, BAD);
    const version = await versionById(svc.db, failed.json.versionId);
    const client = await svc.db.connect();
    try {
      await client.query('BEGIN');
      expect(await activateVersion(client, version!, { rowCount: 0, contributing: 0, rowsProcessed: 0, bytesProcessed: 0 }, { columns: null, warnings: [] }, svc.config)).to.equal('active');
      const inside = await client.query(`SELECT type FROM events WHERE data::jsonb->'object'->>'id' = $1`, [version!.id]);
      expect(inside.rows.map((r) => r.type)).to.include('version.active');
      await client.query('ROLLBACK');
    } finally {
      client.release();
    }
    const after = await svc.db.query(`SELECT type FROM events WHERE data::jsonb->'object'->>'id' = $1`, [version!.id]);
    expect(after.rows.map((r) => r.type)).to.deep.equal(['version.failed']);
  });

  it('when an endpoint is deleted, then it receives nothing more, a retry under way included', async function () {
    this.timeout(30_000);
    const { key } = await svc.tenant();
    const endpoint = await createEndpoint(key, '/gone', ['dataset.created'], () => ({ status: 500 }));
    await newDataset(svc, key);
    await waitFor(() => (receiver.at('/gone').length >= 1 ? true : undefined), 'the first attempt');
    const deleted = await svc.request(`/v1/webhook-endpoints/${endpoint.id}`, { key, method: 'DELETE' });
    expect(deleted.json).to.deep.equal({ id: endpoint.id, object: 'webhook_endpoint', deleted: true });
    const before = receiver.at('/gone').length;
    await newDataset(svc, key);
    await new Promise((r) => setTimeout(r, 1_500));
    expect(receiver.at('/gone').length).to.be.at.most(before + 1); // one attempt may have been on the wire
    expect((await svc.request(`/v1/webhook-endpoints/${endpoint.id}`, { key })).status).to.equal(404);
    const { rows } = await svc.db.query(`SELECT status FROM webhook_deliveries WHERE endpoint_id = $1 ORDER BY id`, [endpoint.id]);
    expect(rows.at(-1)!.status).to.be.oneOf(['skipped', 'failed', 'delivered']);
    expect(rows.filter((r) => r.status === 'pending')).to.deep.equal([]);
  });

  it('when events are listed, then they come newest first, page by page, and filtered by type', async () => {
    const { key } = await svc.tenant();
    const made = [];
    for (let i = 0; i < 5; i++) made.push(await newDataset(svc, key));
    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const page: { json: { data: { type: string; data: { object: { id: string } } }[]; nextCursor: string | null } } = await svc.request(
        `/v1/events?limit=2${cursor ? `&cursor=${cursor}` : ''}`,
        { key },
      );
      expect(page.json.data.length).to.be.at.most(2);
      seen.push(...page.json.data.map((e) => e.data.object.id));
      cursor = page.json.nextCursor;
    } while (cursor);
    expect(seen).to.deep.equal([...made].reverse());
    const filtered = await svc.request('/v1/events?type=version.active', { key });
    expect(filtered.json.data).to.deep.equal([]);
    expect((await svc.request('/v1/events?type=nope', { key })).status).to.equal(400);
    expect((await svc.request('/v1/events?cursor=evt_nope', { key })).status).to.equal(400);
  });

  it('when a live endpoint is made, then it must be https and not a private address; at delivery, a name resolving to one is refused without connecting', async function () {
    this.timeout(30_000);
    const { accountId } = await svc.tenant();
    const liveKey = await svc.key(accountId, 'live');
    const refused = async (url: string) => {
      const reply = await svc.request('/v1/webhook-endpoints', { key: liveKey, json: { url, events: ['*'] } });
      expect(reply.status, url).to.equal(400);
      expect(reply.json.errors[0].field).to.equal('url');
    };
    await refused('http://hooks.example.com/x');
    await refused('https://127.0.0.1/x');
    await refused('https://10.1.2.3/x');
    await refused('https://[::1]/x');
    await refused('https://[fd00::1]/x');
    await refused('https://169.254.169.254/latest/meta-data');
    await refused('https://localhost/x');
    await refused('ftp://hooks.example.com/x');

    // This machine's own name resolves to an address of its own, not a public one: a live
    // endpoint naming it passes the URL check (it is a name) and is refused at delivery, after
    // resolving, before any connection is made (a trap server counts connections).
    const name = hostname();
    const resolved = await lookup(name);
    expect(isPublicAddress(resolved.address), `${name} resolves to ${resolved.address}`).to.equal(false);
    let connections = 0;
    const trap = createServer((socket) => {
      connections++;
      socket.destroy();
    });
    await new Promise<void>((r) => trap.listen(0, resolved.address, r));
    try {
      const port = (trap.address() as AddressInfo).port;
      const made = await svc.request('/v1/webhook-endpoints', { key: liveKey, json: { url: `https://${name}:${port}/hook`, events: ['dataset.created'] } });
      expect(made.status, made.text).to.equal(201);
      await newDataset(svc, liveKey);
      const { rows } = await eventually(
        () => svc.db.query(`SELECT a.error FROM webhook_attempts a JOIN webhook_deliveries d ON d.id = a.delivery_id WHERE d.endpoint_id = $1`, [made.json.id]),
        (r) => r.rows.length > 0,
      );
      expect(rows[0].error).to.match(/resolves to .*never sent to \(loopback, private/);
      expect(connections).to.equal(0);
    } finally {
      trap.close();
    }
  });

  it('when every delivery to an endpoint has failed for 3 days, then the next failure disables it', async function () {
    this.timeout(30_000);
    const { key } = await svc.tenant();
    const endpoint = await createEndpoint(key, '/down', ['dataset.created'], () => ({ status: 503 }));
    await svc.db.query(`UPDATE webhook_endpoints SET failing_since = now() - interval '3 days 1 minute' WHERE id = $1`, [endpoint.id]);
    await newDataset(svc, key);
    const read = await eventually(() => svc.request(`/v1/webhook-endpoints/${endpoint.id}`, { key }), (r) => r.json.status === 'disabled');
    expect(read.json.status).to.equal('disabled');
    const enabled = await svc.request(`/v1/webhook-endpoints/${endpoint.id}`, { key, method: 'PATCH', json: { status: 'enabled' } });
    expect(enabled.json.status).to.equal('enabled');
  });

  it('when an endpoint is created with a key, then its secret is kept sealed: not in the endpoint row, not in the kept answer; the replay shows it again', async () => {
    const { key } = await svc.tenant();
    const first = await svc.request('/v1/webhook-endpoints', { key, json: { url: receiver.url('/sealed'), events: ['*'] }, idempotencyKey: 'we-sealed' });
    expect(first.status).to.equal(201);
    const secret: string = first.json.secret;
    const stored = await svc.db.query(`SELECT secret_sealed FROM webhook_endpoints WHERE id = $1`, [first.json.id]);
    expect(stored.rows[0].secret_sealed.includes(Buffer.from(secret))).to.equal(false);
    expect(stored.rows[0].secret_sealed.includes(Buffer.from(secret.slice(6), 'base64'))).to.equal(false);
    const kept = await svc.db.query(`SELECT response_body::text || coalesce(response_streamed::text, '') AS kept FROM idempotency_keys WHERE key = 'we-sealed'`);
    expect(kept.rows[0].kept).not.to.include(secret.slice(6));
    const replay = await svc.request('/v1/webhook-endpoints', { key, json: { url: receiver.url('/sealed'), events: ['*'] }, idempotencyKey: 'we-sealed' });
    expect(replay.headers.get('idempotent-replayed')).to.equal('true');
    expect(replay.text).to.equal(first.text);
    expect((await svc.request(`/v1/webhook-endpoints/${first.json.id}`, { key })).json).not.to.have.property('secret');
  });

  it('when an endpoint is listed, read and updated, then it behaves like every resource: 404 across accounts and modes, 400 for bad events', async () => {
    const { accountId, key } = await svc.tenant();
    const liveKey = await svc.key(accountId, 'live');
    const made = await createEndpoint(key, '/crud', ['version.active']);
    expect((await svc.request(`/v1/webhook-endpoints/${made.id}`, { key: liveKey })).status).to.equal(404);
    const listed = await svc.request('/v1/webhook-endpoints', { key });
    expect(listed.json.data.map((e: { id: string }) => e.id)).to.deep.equal([made.id]);
    expect((await svc.request('/v1/webhook-endpoints', { key: liveKey })).json.data).to.deep.equal([]);
    const patched = await svc.request(`/v1/webhook-endpoints/${made.id}`, { key, method: 'PATCH', json: { events: ['export.ready', 'export.failed'], description: 'exports' } });
    expect(patched.json).to.include({ description: 'exports' });
    expect(patched.json.events).to.deep.equal(['export.ready', 'export.failed']);
    expect((await svc.request(`/v1/webhook-endpoints/${made.id}`, { key, method: 'PATCH', json: { events: ['nope'] } })).status).to.equal(400);
    expect((await svc.request('/v1/webhook-endpoints', { key, json: { url: receiver.url('/x'), events: ['*', 'version.active'] } })).status).to.equal(400);
    expect((await svc.request(`/v1/webhook-endpoints/${made.id}`, { key: liveKey, method: 'DELETE' })).status).to.equal(404);
  });

  it('when the operator lists recent deliveries and redelivers an event, then the endpoint gets it again with the same webhook-id', async function () {
    this.timeout(60_000);
    const { key } = await svc.tenant();
    let healthy = false;
    const endpoint = await createEndpoint(key, '/ops', ['dataset.created'], () => ({ status: healthy ? 200 : 500 }));
    await newDataset(svc, key);
    const operator = async (...args: string[]) => {
      const out = await runScript('bin/operator.ts', [...args, '--json'], { DATABASE_URL: svc.databaseUrl });
      expect(out.code, out.stderr).to.equal(0);
      return JSON.parse(out.stdout);
    };
    const failed = await eventually(
      () => operator('webhooks', 'deliveries', '--endpoint', endpoint.id),
      (d: { status: string; eventId: string }[]) => d[0]?.status === 'failed',
      { everyMs: 200, timeoutMs: 30_000 },
    );
    expect(failed[0]).to.include({ endpointId: endpoint.id, eventType: 'dataset.created', attempts: 4, lastStatus: 500, lastError: 'answered 500' });
    healthy = true;
    const before = receiver.at('/ops').length;
    const redelivered = await operator('webhooks', 'redeliver', failed[0]!.eventId);
    expect(redelivered.deliveries).to.have.length(1);
    const again = await waitFor(() => receiver.at('/ops')[before], 'the redelivery');
    expect(again.headers['webhook-id']).to.equal(failed[0]!.eventId);
    // /metrics counts deliveries by outcome.
    const scrape = await (await fetch(`${svc.url}/metrics`)).text();
    expect(scrape).to.match(/^webhook_deliveries\{outcome="failed"\} [1-9]/m);
    expect(scrape).to.match(/^webhook_deliveries\{outcome="delivered"\} [1-9]/m);
    const out = await runScript('bin/operator.ts', ['webhooks', 'redeliver', 'evt_nope'], { DATABASE_URL: svc.databaseUrl });
    expect(out.code).to.equal(3);
  });

  it('when the events and webhook endpoint operations are called without a credential or without an Idempotency-Key, then 401 and 400 as everywhere on /v1', async () => {
    const { key } = await svc.tenant();
    const calls: [string, string][] = [
      ['GET', '/v1/events'],
      ['GET', '/v1/events/evt_x'],
      ['POST', '/v1/webhook-endpoints'],
      ['GET', '/v1/webhook-endpoints'],
      ['GET', '/v1/webhook-endpoints/we_x'],
      ['PATCH', '/v1/webhook-endpoints/we_x'],
      ['DELETE', '/v1/webhook-endpoints/we_x'],
      ['DELETE', '/v1/datasets/ds_x'],
    ];
    for (const [method, path] of calls) {
      expect((await svc.request(path, { method, json: method === 'GET' ? undefined : {} })).status, `${method} ${path}`).to.equal(401);
      if (method === 'GET') continue;
      const unkeyed = await svc.request(path, { method, key, json: {}, idempotencyKey: null });
      expect(unkeyed.status, `${method} ${path}`).to.equal(400);
      expect(unkeyed.json.type).to.equal(`${svc.config.errorsBase}/idempotency-key-required`);
    }
  });

  it('when an event is older than 30 days, then it is no longer listed or readable, and the scheduled purge deletes it with its deliveries', async () => {
    const { key } = await svc.tenant();
    await newDataset(svc, key);
    const listed = await svc.request('/v1/events', { key });
    const old = listed.json.data[0].id as string;
    await svc.db.query(`UPDATE events SET created_at = now() - interval '31 days' WHERE id = $1`, [old]);
    expect((await svc.request('/v1/events', { key })).json.data).to.deep.equal([]);
    expect((await svc.request(`/v1/events/${old}`, { key })).status).to.equal(404);
    await svc.worker!.boss.send(queues.purgeEvents, {});
    await eventually(() => svc.db.query('SELECT 1 FROM events WHERE id = $1', [old]), (r) => r.rowCount === 0);
    expect((await svc.db.query('SELECT 1 FROM events WHERE id = $1', [old])).rowCount).to.equal(0);
  });
});
