// `npm run bench -- soak [--seconds N]`: mixed load for N seconds (default 600) against a web and a
// worker process (dist/, the Procfile's flags) on a PostgreSQL of the bench's own, restarted once in
// the middle: uploads of every size and shape (text/csv, multipart, upload URL; good, with bad rows,
// and hostile files), reads, exports with downloads, and OAuth refreshes. Prints requests and
// latency per kind, 5xx outside the outage window (must be 0), RSS of each process over time,
// whether each stayed up, and how every version ended (all must be active, superseded or failed).
// Exits 1 when an invariant breaks. Loopback only; every loop is bounded by the run's deadline.
import type { ChildProcess } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { createAccount } from '../../shared/tenancy/accounts.ts';
import { addMember } from '../../shared/tenancy/memberships.ts';
import { issueKey } from '../../shared/tenancy/apiKeys.ts';
import { createPool } from '../../shared/platform/db.ts';
import { freePort } from '../../shared/platform/embeddedPostgres.ts';
import { migrate } from '../../shared/platform/migrate.ts';
import { CONTRACT_HEADER, contractsCsv } from '../support/contracts.ts';
import { startPrivateDatabase } from '../support/privateDatabase.ts';
import { oauthGrant } from './api.ts';
import { startServer, stopServers } from './support.ts';

type Sample = { kind: string; status: number; ms: number; at: number; problem?: string };
/** A request that failed: a 5xx, or no answer (status 0). */
const failed = (status: number) => status === 0 || status >= 500;

const OUTAGE_S = 5;
/** After the database is back, answers may still be 503 while pools reconnect. */
const RECOVERY_GRACE_S = 10;

/** A small deterministic generator (mulberry32), so that two runs send the same mix. */
function random(seed: number) {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const vmRssMiB = async (pid: number) => Number(/VmRSS:\s+(\d+) kB/.exec(await readFile(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0) / 1024;
const pct = (values: number[], p: number) => (values.length ? values.toSorted((a, b) => a - b)[Math.min(values.length - 1, Math.floor((p / 100) * values.length))]! : 0);

export async function benchSoak(args: string[]): Promise<void> {
  const secondsArg = args.indexOf('--seconds');
  const seconds = secondsArg >= 0 ? Number(args[secondsArg + 1]) : 600;
  const database = await startPrivateDatabase();
  const db = createPool(database.url, 2, 'bench-soak');
  await migrate(db);
  const account = await createAccount(db, 'Soak');
  const { key } = await issueKey(db, account.id, 'live');
  const { invitationCode } = await addMember(db, account.id, 'soak@soak.example');

  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  const env = { DATABASE_URL: database.url, PORT: String(port), BASE_URL: base, LOG_LEVEL: 'warn', WORKER_CONCURRENCY: '2' };
  const exits: Record<string, number | null | 'running'> = { web: 'running', worker: 'running' };
  const worker = await startServer('dist/worker/main.js', { ...env, LOG_LEVEL: 'info' }, /worker started/);
  const web = await startServer('dist/api/main.js', env, 'healthz');
  const processes: Record<string, ChildProcess> = { web, worker };
  for (const [name, child] of Object.entries(processes)) child.once('exit', (code, signal) => (exits[name] = code ?? (signal as never)));

  const samples: Sample[] = [];
  const started = performance.now();
  const now = () => (performance.now() - started) / 1000;
  const deadline = seconds;
  const outageAt = seconds / 2;
  let outage = { from: Infinity, to: Infinity };

  async function call(kind: string, path: string, init: RequestInit & { key?: string } = {}): Promise<{ status: number; json: any }> {
    const t = performance.now();
    const headers = new Headers(init.headers);
    headers.set('authorization', `Bearer ${init.key ?? key}`);
    if (init.method && init.method !== 'GET' && !headers.has('idempotency-key')) headers.set('idempotency-key', crypto.randomUUID());
    let status = 0;
    let json: any;
    let cause = '';
    try {
      const res = await fetch(base + path, { ...init, headers, signal: AbortSignal.timeout(Math.round(Math.max(5, deadline + 90 - now()) * 1000)) });
      status = res.status;
      const text = await res.text();
      try {
        json = JSON.parse(text);
      } catch {
        json = undefined;
      }
    } catch (error) {
      status = 0; // the connection failed
      cause = `no answer: ${(error as Error).cause ?? (error as Error).message}`;
      if (process.env['SOAK_DEBUG']) console.error(kind, error);
    }
    samples.push({ kind, status, ms: performance.now() - t, at: now(), ...(failed(status) && { problem: cause || `${json?.type ?? ''} ${json?.detail ?? ''}`.trim() }) });
    return { status, json };
  }

  const datasets: string[] = [];
  for (let i = 0; i < 4; i++) {
    const reply = await call('create dataset', '/v1/datasets', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ externalRef: `soak-${i}` }) });
    if (reply.status !== 201) throw new Error(`dataset not created: ${reply.status} ${JSON.stringify(reply.json)}`);
    datasets.push(reply.json.id);
  }
  const versionIds = new Set<string>();

  const hostile = () => Buffer.from(`${CONTRACT_HEADER}c-1,"${'x'.repeat(8_000_000)}",Pro,2026-01-01,2026-12-31,1.00,EUR\nc-2,Acme,Pro,2026-01-01,2026-12-31,1.00,EUR\n`);

  async function uploader(seed: number): Promise<void> {
    const rand = random(seed);
    while (now() < deadline) {
      const ds = datasets[Math.floor(rand() * datasets.length)]!;
      const roll = rand();
      const rows = [10, 100, 1_000, 20_000, 200_000][Math.floor(rand() * 5)]!;
      const bad = rand() < 0.15;
      const body = roll < 0.05 ? hostile() : contractsCsv(rows, bad ? { badEvery: 97 } : {});
      const how = rand();
      let reply: { status: number; json: any };
      if (how < 0.6 || roll < 0.05) {
        reply = await call('upload text/csv', `/v1/datasets/${ds}/versions`, { method: 'POST', headers: { 'content-type': 'text/csv', prefer: 'wait=60' }, body });
      } else if (how < 0.8) {
        const form = new FormData();
        form.set('file', new Blob([body], { type: 'text/csv' }), 'contracts.csv');
        reply = await call('upload multipart', `/v1/datasets/${ds}/versions`, { method: 'POST', headers: { prefer: 'wait=60' }, body: form });
      } else {
        const made = await call('upload URL', `/v1/datasets/${ds}/uploads`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
        if (made.status !== 201) continue;
        const t = performance.now();
        const put = await fetch(made.json.url, { method: 'PUT', body }).then((r) => r.status, () => 0);
        samples.push({ kind: 'upload PUT', status: put, ms: performance.now() - t, at: now() });
        if (put !== 200) continue;
        reply = await call('upload from URL', `/v1/datasets/${ds}/versions`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', prefer: 'wait=60' },
          body: JSON.stringify({ uploadId: made.json.id }),
        });
      }
      const id = reply.json?.versionId ?? (reply.json?.object === 'version' ? reply.json.id : undefined);
      if (id) versionIds.add(id);
    }
  }

  async function reader(seed: number): Promise<void> {
    const rand = random(seed);
    while (now() < deadline) {
      const ds = datasets[Math.floor(rand() * datasets.length)]!;
      const paths = ['/v1/datasets', `/v1/datasets/${ds}`, `/v1/datasets/${ds}/metrics`, `/v1/datasets/${ds}/catalog`, `/v1/datasets/${ds}/versions`];
      const path = paths[Math.floor(rand() * paths.length)]!;
      await call(`GET ${path.replace(/ds_\w+/, '{id}')}`, path);
      await new Promise((r) => setTimeout(r, 20));
    }
  }

  async function exporter(seed: number): Promise<void> {
    const rand = random(seed);
    while (now() < deadline) {
      const ds = datasets[Math.floor(rand() * datasets.length)]!;
      const format = rand() < 0.5 ? 'csv' : 'jsonl';
      const requested = await call('export request', `/v1/datasets/${ds}/exports`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ format }) });
      if (requested.status === 202) {
        let status = requested.json.status;
        const until = now() + 60;
        while (!['ready', 'failed'].includes(status) && now() < Math.min(until, deadline + 60)) {
          await new Promise((r) => setTimeout(r, 250));
          status = (await call('export poll', `/v1/datasets/${ds}/exports/${requested.json.id}`)).json?.status ?? status;
        }
        if (status === 'ready') {
          const t = performance.now();
          const got = await fetch(`${base}/v1/datasets/${ds}/exports/${requested.json.id}/content`, { headers: { authorization: `Bearer ${key}` } })
            .then(async (r) => (await r.arrayBuffer(), r.status))
            .catch(() => 0);
          samples.push({ kind: 'export download', status: got, ms: performance.now() - t, at: now() });
        }
      }
      await new Promise((r) => setTimeout(r, 1_000));
    }
  }

  async function oauthClient(): Promise<void> {
    let grant = await oauthGrant(base, invitationCode!, 'soak@soak.example');
    while (now() < deadline) {
      await call('GET with OAuth token', `/v1/datasets/${datasets[0]}`, { key: grant.access_token! });
      await new Promise((r) => setTimeout(r, 2_000));
      const t = performance.now();
      const res = await fetch(`${base}/oauth/token`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ grant_type: 'refresh_token', refresh_token: grant.refresh_token!, client_id: grant.client_id! }),
      }).catch(() => undefined);
      samples.push({ kind: 'OAuth refresh', status: res?.status ?? 0, ms: performance.now() - t, at: now() });
      // A refresh that failed for the outage leaves the old refresh token valid; keep the newest one.
      if (res?.ok) grant = { ...((await res.json()) as Record<string, string>), client_id: grant.client_id! };
    }
  }

  async function restartDatabase(): Promise<void> {
    while (now() < outageAt) await new Promise((r) => setTimeout(r, 200));
    outage.from = now();
    await database.stop();
    await new Promise((r) => setTimeout(r, OUTAGE_S * 1000));
    await database.start();
    outage.to = now() + RECOVERY_GRACE_S;
    console.log(`database restarted: down from ${outage.from.toFixed(1)} s to ${(outage.to - RECOVERY_GRACE_S).toFixed(1)} s`);
  }

  const rss: { at: number; web: number; worker: number }[] = [];
  const sampler = setInterval(async () => {
    if (exits['web'] !== 'running' || exits['worker'] !== 'running') return;
    rss.push({ at: now(), web: await vmRssMiB(web.pid!).catch(() => 0), worker: await vmRssMiB(worker.pid!).catch(() => 0) });
  }, 5_000);

  console.log(`bench soak: ${seconds} s of mixed load; the database restarts at ${outageAt} s for ${OUTAGE_S} s`);
  await Promise.all([uploader(1), uploader(2), reader(3), reader(4), exporter(5), oauthClient(), restartDatabase()]);
  clearInterval(sampler);

  // Stragglers: every version must end active, superseded or failed.
  const waitUntil = now() + 60;
  let states: { status: string; n: number }[] = [];
  for (;;) {
    const { rows } = await db.query<{ status: string; n: number }>('SELECT status, count(*)::int AS n FROM versions GROUP BY status ORDER BY status');
    states = rows;
    if (!rows.some((r) => r.status === 'queued' || r.status === 'building') || now() > waitUntil) break;
    await new Promise((r) => setTimeout(r, 1_000));
  }
  const upAtEnd = { web: exits['web'] === 'running', worker: exits['worker'] === 'running' };
  await stopServers(Object.values(processes));
  await db.end();
  await database.destroy();

  const inWindow = (s: Sample) => s.at >= outage.from && s.at <= outage.to;
  const kinds = [...new Set(samples.map((s) => s.kind))].sort();
  console.table(
    kinds.map((kind) => {
      const of = samples.filter((s) => s.kind === kind);
      const ok = of.filter((s) => s.status > 0 && s.status < 500).map((s) => s.ms);
      return {
        kind,
        requests: of.length,
        '2xx': of.filter((s) => s.status >= 200 && s.status < 300).length,
        '4xx': of.filter((s) => s.status >= 400 && s.status < 500).length,
        '5xx/cut outside outage': of.filter((s) => failed(s.status) && !inWindow(s)).length,
        '5xx/cut in outage': of.filter((s) => failed(s.status) && inWindow(s)).length,
        'p50 ms': Math.round(pct(ok, 50)),
        'p99 ms': Math.round(pct(ok, 99)),
      };
    }),
  );
  const third = (i: number) => rss[Math.min(rss.length - 1, Math.floor((i * rss.length) / 3))];
  console.table(
    (['web', 'worker'] as const).map((p) => ({
      process: p,
      'RSS start MiB': Math.round(third(0)?.[p] ?? 0),
      'RSS middle MiB': Math.round(third(1)?.[p] ?? 0),
      'RSS end MiB': Math.round(rss.at(-1)?.[p] ?? 0),
      'peak MiB': Math.round(Math.max(0, ...rss.map((r) => r[p]))),
      'up the whole run': upAtEnd[p] ? 'yes' : `no (exit ${exits[p]})`,
    })),
  );
  console.table(states.map((r) => ({ 'versions ended': r.status, count: r.n })));

  const failedOutside = samples.filter((s) => failed(s.status) && !inWindow(s));
  const outside = failedOutside.length;
  // Each one told, for whoever looks into it: when it was sent and answered, and what it said.
  for (const s of failedOutside.slice(0, 20)) {
    console.log(`failed outside the outage: ${s.kind} ${s.status}, sent at ${(s.at - s.ms / 1000).toFixed(1)} s, answered at ${s.at.toFixed(1)} s: ${s.problem}`);
  }
  const unfinished = states.filter((r) => r.status === 'queued' || r.status === 'building').reduce((n, r) => n + r.n, 0);
  const broken = [
    outside > 0 && `${outside} requests failed (5xx or cut) outside the outage window`,
    !upAtEnd.web && 'the web process exited',
    !upAtEnd.worker && 'the worker process exited',
    unfinished > 0 && `${unfinished} versions never finished`,
  ].filter(Boolean);
  console.log(broken.length ? `INVARIANTS BROKEN: ${broken.join('; ')}` : `invariants held: ${samples.length} requests, no 5xx outside the outage, both processes up, every version finished`);
  if (broken.length) process.exitCode = 1;
}
