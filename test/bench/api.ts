// `npm run bench -- api`: authenticated GET /v1/datasets/{id} for 10 s at 50 connections, beside a
// bare Express 5 route doing the same two primary-key queries through pg, in the same run.
import autocannon from 'autocannon';
import { createAccount } from '../../shared/accounts.ts';
import { issueKey } from '../../shared/apiKeys.ts';
import { createPool } from '../../shared/db.ts';
import { createDataset } from '../../shared/datasets.ts';
import { freePort } from '../../shared/embeddedPostgres.ts';
import { createTestDatabase } from '../setup/database.ts';
import { startServer, stopServers } from './support.ts';

const DURATION_S = Number(process.env['BENCH_DURATION_S'] ?? 10);
const CONNECTIONS = 50;

type Measure = { name: string; rps: number; p50: number; p99: number; errors: number };

async function load(name: string, url: string, key: string, seconds: number): Promise<Measure> {
  const result = await autocannon({ url, connections: CONNECTIONS, duration: seconds, headers: { authorization: `Bearer ${key}` } });
  return { name, rps: result.requests.average, p50: result.latency.p50, p99: result.latency.p99, errors: result.errors + result.non2xx };
}

export async function benchApi(): Promise<void> {
  const database = await createTestDatabase();
  const pool = createPool(database.url, 2, 'bench');
  const account = await createAccount(pool, 'Bench');
  const { key } = await issueKey(pool, account.id, 'live');
  const dataset = await createDataset(pool, { accountId: account.id, mode: 'live' }, { externalRef: 'bench' });
  await pool.end();

  const measures: Measure[] = [];
  const env = { DATABASE_URL: database.url, DATABASE_POOL_SIZE: '10', LOG_LEVEL: process.env['BENCH_LOG_LEVEL'] ?? 'info' };
  for (const target of [
    { name: 'bare express + pg (baseline)', script: 'test/bench/bareServer.ts', path: `/bare/datasets/${dataset.id}` },
    { name: 'GET /v1/datasets/{id}', script: 'dist/api/main.js', path: `/v1/datasets/${dataset.id}` },
  ]) {
    const port = await freePort();
    const child = await startServer(target.script, { ...env, PORT: String(port) }, 'healthz');
    const url = `http://127.0.0.1:${port}${target.path}`;
    await load('warm-up', url, key, 2);
    measures.push(await load(target.name, url, key, DURATION_S));
    await stopServers([child]);
  }
  await database.drop();

  const [bare, ours] = measures as [Measure, Measure];
  console.log(`\nbench api: ${CONNECTIONS} connections, ${DURATION_S} s each, same database, same run`);
  console.table(
    measures.map((m) => ({
      target: m.name,
      'req/s': Math.round(m.rps),
      'p50 ms': m.p50,
      'p99 ms': m.p99,
      errors: m.errors,
      'vs baseline': `${(m.rps / bare.rps).toFixed(2)}x`,
    })),
  );
  const ratio = ours.rps / bare.rps;
  console.log(`target: >= 0.80x baseline and p99 <= 25 ms: ${ratio >= 0.8 && ours.p99 <= 25 ? 'met' : 'NOT met'} (${ratio.toFixed(2)}x, p99 ${ours.p99} ms)`);
}
