// `npm run bench -- api`: authenticated GET /v1/datasets/{id} for 10 s at 50 connections, with an
// API key and with an OAuth access token, beside a bare Express 5 route doing the same two
// primary-key queries through pg, in the same run. Beside throughput and latency, the CPU each
// request cost the server process and PostgreSQL (the bench's own cluster): on a machine shared
// with other work, throughput moves with the neighbours, CPU per request much less.
import { createHash } from 'node:crypto';
import autocannon from 'autocannon';
import { createAccount } from '../../shared/tenancy/accounts.ts';
import { issueKey } from '../../shared/tenancy/apiKeys.ts';
import { createPool } from '../../shared/platform/db.ts';
import { createDataset } from '../../shared/domain/datasets.ts';
import { freePort } from '../../shared/platform/embeddedPostgres.ts';
import { createTestDatabase } from '../setup/database.ts';
import { addMember } from '../../shared/tenancy/memberships.ts';
import { callbackParams, PageBrowser } from '../support/oauth.ts';
import { cpuSeconds, cpuSpent, startServer, stopServers } from './support.ts';

const DURATION_S = Number(process.env['BENCH_DURATION_S'] ?? 10);
const CONNECTIONS = 50;

type Measure = { name: string; rps: number; p50: number; p99: number; errors: number; serverCpuMs: number; postgresCpuMs: number };

async function load(name: string, url: string, key: string, seconds: number, serverPid: number): Promise<Measure> {
  const before = await cpuSeconds({ server: serverPid }, { ownCluster: true });
  const result = await autocannon({ url, connections: CONNECTIONS, duration: seconds, headers: { authorization: `Bearer ${key}` } });
  const spent = cpuSpent(before, await cpuSeconds({ server: serverPid }, { ownCluster: true }));
  const perRequest = (cpuSeconds: number) => (cpuSeconds * 1000) / Math.max(1, result.requests.total);
  return {
    name,
    rps: result.requests.average,
    p50: result.latency.p50,
    p99: result.latency.p99,
    errors: result.errors + result.non2xx,
    serverCpuMs: perRequest(spent['server']!),
    postgresCpuMs: perRequest(spent['postgres']!),
  };
}

export async function benchApi(): Promise<void> {
  const database = await createTestDatabase();
  const pool = createPool(database.url, 2, 'bench');
  const account = await createAccount(pool, 'Bench');
  const { key } = await issueKey(pool, account.id, 'live');
  const dataset = await createDataset(pool, { accountId: account.id, mode: 'live' }, { externalRef: 'bench' });
  const { invitationCode } = await addMember(pool, account.id, 'bench@bench.example');
  await pool.end();

  const measures: Measure[] = [];
  const env = { DATABASE_URL: database.url, DATABASE_POOL_SIZE: '10', LOG_LEVEL: process.env['BENCH_LOG_LEVEL'] ?? 'info' };
  for (const target of [
    { name: 'bare express + pg (baseline)', script: 'test/bench/bareServer.ts', path: `/bare/datasets/${dataset.id}`, oauth: false },
    { name: 'GET /v1/datasets/{id}', script: 'dist/api/main.js', path: `/v1/datasets/${dataset.id}`, oauth: true },
  ]) {
    const port = await freePort();
    const base = `http://127.0.0.1:${port}`;
    const child = await startServer(target.script, { ...env, PORT: String(port), BASE_URL: base }, 'healthz');
    const url = `${base}${target.path}`;
    try {
      await load('warm-up', url, key, 2, child.pid!);
      measures.push(await load(`${target.name}${target.oauth ? ', API key' : ''}`, url, key, DURATION_S, child.pid!));
      if (target.oauth) measures.push(await load(`${target.name}, OAuth token`, url, await oauthToken(base, invitationCode!), DURATION_S, child.pid!));
    } finally {
      await stopServers([child]);
    }
  }
  await database.drop();

  const [bare, ours, viaOAuth] = measures as [Measure, Measure, Measure];
  console.log(`\nbench api: ${CONNECTIONS} connections, ${DURATION_S} s each, same database, same run`);
  console.table(
    measures.map((m) => ({
      target: m.name,
      'req/s': Math.round(m.rps),
      'p50 ms': m.p50,
      'p99 ms': m.p99,
      errors: m.errors,
      'vs baseline': `${(m.rps / bare.rps).toFixed(2)}x`,
      'server CPU ms/req': m.serverCpuMs.toFixed(3),
      'postgres CPU ms/req': m.postgresCpuMs.toFixed(3),
    })),
  );
  const ratio = ours.rps / bare.rps;
  console.log(`target: >= 0.85x baseline: ${ratio >= 0.85 ? 'met' : 'NOT met'} (${ratio.toFixed(2)}x, p99 ${ours.p99} ms beside ${bare.p99} ms)`);
  const cpu = (m: Measure) => m.serverCpuMs + m.postgresCpuMs;
  console.log(`CPU per request (server + postgres), baseline vs ours: ${(cpu(bare) / cpu(ours)).toFixed(2)}x`);
  console.log(`OAuth token vs API key: ${(viaOAuth.rps / ours.rps).toFixed(2)}x`);
}

/** An access token for the bench account, through registration, the person's pages and the code exchange. */
async function oauthToken(base: string, invitationCode: string): Promise<string> {
  return (await oauthGrant(base, invitationCode, 'bench@bench.example')).access_token!;
}

/** A grant for an invited person: the token answer (access and refresh token) and the client's id. */
export async function oauthGrant(base: string, invitationCode: string, email: string): Promise<Record<string, string>> {
  const redirectUri = 'http://127.0.0.1:9/callback';
  const post = async (path: string, init: { json?: unknown; form?: Record<string, string> }) => {
    const res = await fetch(base + path, {
      method: 'POST',
      headers: { 'content-type': init.json ? 'application/json' : 'application/x-www-form-urlencoded' },
      body: init.json ? JSON.stringify(init.json) : new URLSearchParams(init.form),
    });
    return (await res.json()) as Record<string, string>;
  };
  const { client_id } = await post('/oauth/register', { json: { redirect_uris: [redirectUri], token_endpoint_auth_method: 'none' } });
  const verifier = 'bench-verifier-bench-verifier-bench-verifier-0123456789';
  const challenge = createHash('sha256').update(verifier).digest('base64url');
  const query = new URLSearchParams({ client_id: client_id!, redirect_uri: redirectUri, response_type: 'code', scope: 'service.read', code_challenge: challenge, code_challenge_method: 'S256' });
  const page = await new PageBrowser(base).approve(`${base}/oauth/authorize?${query}`, {
    person: { email, password: 'bench-password', signUp: true, invitationCode },
  });
  const code = callbackParams(page, redirectUri).get('code')!;
  const tokens = await post('/oauth/token', { form: { grant_type: 'authorization_code', code, redirect_uri: redirectUri, code_verifier: verifier, client_id: client_id! } });
  return { ...tokens, client_id: client_id! };
}
