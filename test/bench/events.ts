// `npm run bench -- events [--events N]`: webhook delivery on this machine, one worker, a local
// receiver that verifies every signature (test/bench/webhookSink.ts), same database, same run:
// - throughput: N events (10,000) recorded at once, delivered to one endpoint: deliveries per
//   second from the first to the last arrival; beside it the ceiling, the same number of signed
//   POSTs sent straight to the receiver by this process (no database, no queue);
// - latency from commit to the receiver's 200, for 200 datasets created one by one through the API;
// - the small-upload latency (200 sequential 10-row uploads, POST → 201) with no endpoint, then
//   with three endpoints subscribed to everything.
import { request, Agent } from 'node:http';
import { Webhook } from 'standardwebhooks';
import { createAccount } from '../../shared/tenancy/accounts.ts';
import { issueKey } from '../../shared/tenancy/apiKeys.ts';
import { createPool } from '../../shared/platform/db.ts';
import { createDataset } from '../../shared/domain/datasets.ts';
import { freePort } from '../../shared/platform/embeddedPostgres.ts';
import { createTestDatabase } from '../setup/database.ts';
import { CONTRACT_HEADER, contractBlocks } from '../support/contracts.ts';
import { startServer, stopServers } from './support.ts';

const pct = (xs: number[], p: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((p / 100) * xs.length))]!;

export async function benchEvents(args: string[]): Promise<void> {
  const eventsArg = args.indexOf('--events');
  const count = eventsArg >= 0 ? Number(args[eventsArg + 1]) : 10_000;
  const database = await createTestDatabase();
  const pool = createPool(database.url, 4, 'bench');
  const account = await createAccount(pool, 'Bench');
  const { key } = await issueKey(pool, account.id, 'test');
  const port = await freePort();
  const sinkPort = await freePort();
  const base = `http://127.0.0.1:${port}`;
  const sinkBase = `http://127.0.0.1:${sinkPort}`;
  const env = { DATABASE_URL: database.url, PORT: String(port), BASE_URL: base, LOG_LEVEL: 'warn' };
  const worker = await startServer('dist/worker/main.js', { ...env, LOG_LEVEL: 'info' }, /worker started/);
  const web = await startServer('dist/api/main.js', env, 'healthz');

  const call = async (path: string, body?: unknown, method = body === undefined ? 'GET' : 'POST') => {
    const res = await fetch(`${base}${path}`, {
      method,
      headers: { authorization: `Bearer ${key}`, 'idempotency-key': crypto.randomUUID(), 'content-type': 'application/json' },
      ...(body !== undefined && { body: typeof body === 'string' ? body : JSON.stringify(body) }),
    });
    return { status: res.status, json: (await res.json()) as Record<string, any> };
  };
  const endpoint = async (path: string) => {
    const made = await call('/v1/webhook-endpoints', { url: `${sinkBase}${path}`, events: ['*'] });
    if (made.status !== 201) throw new Error(`endpoint: ${made.status} ${JSON.stringify(made.json)}`);
    return made.json as { id: string; secret: string };
  };
  const first = await endpoint('/one');
  // Three more, for the small uploads with endpoints subscribed to everything; paused until then.
  const more = [await endpoint('/a'), await endpoint('/b'), await endpoint('/c')];
  const setStatus = async (ids: string[], status: 'enabled' | 'disabled') => {
    for (const id of ids) if ((await call(`/v1/webhook-endpoints/${id}`, { status }, 'PATCH')).status !== 200) throw new Error('patch');
  };
  await setStatus(more.map((e) => e.id), 'disabled');
  const arrivals = new Map<string, number>();
  let badSignatures = 0;
  const sink = await startServer('test/bench/webhookSink.ts', { PORT: String(sinkPort), SECRETS: [first, ...more].map((e) => e.secret).join(',') }, 'healthz', (line) => {
    const said = JSON.parse(line) as { id: string; at: number; bad: number };
    if (!arrivals.has(said.id)) arrivals.set(said.id, said.at);
    badSignatures = said.bad;
  });
  const waitForArrivals = async (n: number, timeoutMs: number) => {
    const deadline = Date.now() + timeoutMs;
    while (arrivals.size < n && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    if (arrivals.size < n) throw new Error(`only ${arrivals.size} of ${n} deliveries arrived`);
  };

  try {
    // The ceiling: signed POSTs straight from here to the receiver, 50 at a time, keep-alive.
    const webhook = new Webhook(first.secret);
    const agent = new Agent({ keepAlive: true, maxSockets: 50 });
    const body = JSON.stringify({ id: 'evt_x', object: 'event', type: 'dataset.created', mode: 'test', createdAt: new Date().toISOString(), data: { object: { id: 'ds_x' } } });
    const ceilingStarted = performance.now();
    let next = 0;
    await Promise.all(
      Array.from({ length: 50 }, async () => {
        while (next < count) {
          const id = `evt_ceiling_${next++}`;
          const now = new Date();
          const headers = { 'webhook-id': id, 'webhook-timestamp': String(Math.floor(now.getTime() / 1000)), 'webhook-signature': webhook.sign(id, now, body), 'content-type': 'application/json' };
          await new Promise<void>((resolve, reject) => {
            const req = request(`${sinkBase}/ceiling`, { method: 'POST', agent, headers }, (res) => res.resume().on('end', resolve));
            req.on('error', reject);
            req.end(body);
          });
        }
      }),
    );
    const ceilingSeconds = (performance.now() - ceilingStarted) / 1000;
    agent.destroy();
    await waitForArrivals(count, 30_000);
    arrivals.clear();

    // Throughput: N events recorded in one transaction (as a burst of changes would), one endpoint.
    const ds = await createDataset(pool, { accountId: account.id, mode: 'test' }, { externalRef: 'bench-events' });
    await waitForArrivals(1, 10_000);
    arrivals.clear();
    const recordedAt = Date.now();
    await pool.query(
      `INSERT INTO events (id, account_id, mode, type, data)
       SELECT 'evt_bench' || lpad(g::text, 15, '0'), $1, 'test', 'dataset.created', json_build_object('object', json_build_object('id', $3::text))
       FROM generate_series(1, $2) g`,
      [account.id, count, ds.id],
    );
    await pool.query(`NOTIFY events_recorded`);
    await waitForArrivals(count, 300_000);
    const times = [...arrivals.values()];
    const deliverySeconds = (Math.max(...times) - Math.min(...times)) / 1000;
    const endToEndSeconds = (Math.max(...times) - recordedAt) / 1000;
    arrivals.clear();

    // Latency: 200 datasets created one by one; commit → the receiver's 200 (the event's created_at
    // is taken inside the creating transaction, a little before its commit).
    const made: string[] = [];
    for (let i = 0; i < 200; i++) {
      const created = await call('/v1/datasets', { externalRef: `lat-${i}` });
      if (created.status !== 201) throw new Error(`dataset: ${created.status}`);
      made.push(created.json['id'] as string);
      await new Promise((r) => setTimeout(r, 10));
    }
    await waitForArrivals(200, 30_000);
    const { rows } = await pool.query<{ id: string; at: Date }>(`SELECT id, created_at AS at FROM events WHERE type = 'dataset.created' AND data->'object'->>'externalRef' LIKE 'lat-%'`);
    const latencies = rows.map((r) => arrivals.get(r.id)! - r.at.getTime());

    // Small uploads: without endpoints, then with three endpoints subscribed to everything.
    const small = CONTRACT_HEADER + [...contractBlocks(0, 10)].join('');
    const smallUploads = async (tag: string) => {
      const upload = await createDataset(pool, { accountId: account.id, mode: 'test' }, { externalRef: `small-${tag}` });
      const ms: number[] = [];
      for (let i = 0; i < 200; i++) {
        const started = performance.now();
        const res = await fetch(`${base}/v1/datasets/${upload.id}/versions`, {
          method: 'POST',
          headers: { authorization: `Bearer ${key}`, 'idempotency-key': `${tag}-${i}`, 'content-type': 'text/csv' },
          body: small,
        });
        await res.arrayBuffer();
        if (res.status !== 201) throw new Error(`small upload ${i}: ${res.status}`);
        ms.push(performance.now() - started);
      }
      return ms;
    };
    await setStatus([first.id], 'disabled');
    const quiet = await smallUploads('quiet');
    await setStatus(more.map((e) => e.id), 'enabled');
    const arrivedBefore = arrivals.size;
    const busy = await smallUploads('busy');
    await new Promise((r) => setTimeout(r, 2_000));
    const busyDeliveries = arrivals.size - arrivedBefore;

    console.log(`\nbench events: one worker (WEBHOOK_CONCURRENCY 50), a local receiver verifying every signature, same database, same run`);
    console.table([
      { measure: `${count} signed POSTs straight to the receiver (ceiling)`, value: `${Math.round(count / ceilingSeconds)}/s`, aim: '' },
      { measure: `${count} events → deliveries, first to last arrival`, value: `${Math.round(count / deliverySeconds)}/s`, aim: '≥ 500/s' },
      { measure: `${count} events → deliveries, from the commit of the burst`, value: `${Math.round(count / endToEndSeconds)}/s (${endToEndSeconds.toFixed(1)} s)`, aim: '' },
      { measure: 'commit → receiver 200, 200 events one by one: p50', value: `${pct(latencies, 50)} ms`, aim: '≤ 50 ms' },
      { measure: 'commit → receiver 200: p99', value: `${pct(latencies, 99)} ms`, aim: '≤ 250 ms' },
      { measure: '200 sequential 10-row uploads, no endpoint: p50 / p99', value: `${pct(quiet, 50).toFixed(1)} / ${pct(quiet, 99).toFixed(1)} ms`, aim: '' },
      { measure: 'the same with 3 endpoints subscribed to everything: p50 / p99', value: `${pct(busy, 50).toFixed(1)} / ${pct(busy, 99).toFixed(1)} ms`, aim: '≤ 50 / 250 ms' },
      { measure: 'events of those uploads delivered within 2 s of the last (each to 3 endpoints)', value: String(busyDeliveries), aim: '' },
      { measure: 'signatures that did not verify', value: String(badSignatures), aim: '0' },
    ]);
  } finally {
    await stopServers([web, worker, sink]);
    await pool.end();
    await database.drop();
  }
}

