// `npm run bench -- <scenario>`: benchmarks that print a table against a baseline measured in the
// same run. Scenarios: api, ingest, export.
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import autocannon from 'autocannon';
import { createAccount } from '../../shared/accounts.ts';
import { issueKey } from '../../shared/apiKeys.ts';
import { createPool } from '../../shared/db.ts';
import { createDataset } from '../../shared/datasets.ts';
import { freePort } from '../../shared/embeddedPostgres.ts';
import { projectRoot } from '../../shared/paths.ts';
import { createTestDatabase, startTestDatabaseServer, stopTestDatabaseServer } from '../setup/database.ts';
import { benchExport } from './export.ts';
import { benchIngest } from './ingest.ts';

const DURATION_S = Number(process.env['BENCH_DURATION_S'] ?? 10);
const CONNECTIONS = 50;

/** Starts a server process (its logs read and dropped, as a log shipper would) and waits for /healthz. */
async function startProcess(script: string, env: Record<string, string>): Promise<ChildProcess> {
  const child = spawn(process.execPath, [script], { cwd: projectRoot, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'inherit'] });
  child.stdout!.resume();
  let exited = false;
  child.once('exit', () => (exited = true));
  const deadline = Date.now() + 30_000;
  while (!exited && Date.now() < deadline) {
    const up = await fetch(`http://127.0.0.1:${env['PORT']}/healthz`).then((r) => r.ok, () => false);
    if (up) return child;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`${script} did not become healthy`);
}

async function stopProcess(child: ChildProcess): Promise<void> {
  child.kill('SIGTERM');
  await once(child, 'exit');
}

type Measure = { name: string; rps: number; p50: number; p99: number; errors: number };

async function load(name: string, url: string, key: string, seconds: number): Promise<Measure> {
  const result = await autocannon({ url, connections: CONNECTIONS, duration: seconds, headers: { authorization: `Bearer ${key}` } });
  return { name, rps: result.requests.average, p50: result.latency.p50, p99: result.latency.p99, errors: result.errors + result.non2xx };
}

async function benchApi(): Promise<void> {
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
    const child = await startProcess(target.script, { ...env, PORT: String(port) });
    const url = `http://127.0.0.1:${port}${target.path}`;
    await load('warm-up', url, key, 2);
    measures.push(await load(target.name, url, key, DURATION_S));
    await stopProcess(child);
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

const scenarios: Record<string, () => Promise<void>> = { api: benchApi, ingest: () => benchIngest(process.argv.slice(3)), export: benchExport };
const name = process.argv[2] ?? 'api';
const scenario = scenarios[name];
if (!scenario) {
  console.error(`unknown scenario ${name}; one of: ${Object.keys(scenarios).join(', ')}`);
  process.exit(2);
}
await startTestDatabaseServer();
try {
  await scenario();
} finally {
  await stopTestDatabaseServer();
}
