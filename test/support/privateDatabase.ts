// A PostgreSQL server of a test's own, which the test may stop and start again (an outage) on the
// same port and data directory: an embedded one in a temporary directory, never the suite's shared
// server and never a server the machine runs for others. The web and worker run on it as real
// child processes, so a crash shows as a process that exited.
import type { ChildProcess } from 'node:child_process';
import { chmod, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createAccount } from '../../shared/tenancy/accounts.ts';
import { issueKey } from '../../shared/tenancy/apiKeys.ts';
import { createPool, type Pool } from '../../shared/platform/db.ts';
import { embeddedUrl, freePort, startEmbeddedPostgres } from '../../shared/platform/embeddedPostgres.ts';
import { createLogger } from '../../shared/platform/log.ts';
import { migrate } from '../../shared/platform/migrate.ts';
import { startScript } from './processes.ts';
import { callService, type Reply, type RequestOptions } from './service.ts';

export type PrivateDatabase = {
  url: string;
  /** Stops the server (connections are cut, as in a crash or a restart). */
  stop(): Promise<void>;
  /** Starts it again on the same port and data. */
  start(): Promise<void>;
  /** Stops it for good and removes its data. */
  destroy(): Promise<void>;
};

export async function startPrivateDatabase(): Promise<PrivateDatabase> {
  const dir = await mkdtemp(join(tmpdir(), 'dataset-service-outage-'));
  // PostgreSQL runs as its own user when we are root, and must reach its directory.
  await chmod(dir, 0o755);
  const log = createLogger({ logLevel: 'silent' }, 'private-db');
  const port = await freePort();
  let server: { stop(): Promise<void> } | undefined = await startEmbeddedPostgres(join(dir, 'data'), log, port);
  return {
    url: embeddedUrl(port),
    stop: async () => {
      await server?.stop();
      server = undefined;
    },
    start: async () => {
      server ??= await startEmbeddedPostgres(join(dir, 'data'), log, port);
    },
    destroy: async () => {
      await server?.stop().catch(() => {});
      server = undefined;
      await rm(dir, { recursive: true, force: true });
    },
  };
}

type Running = { child: ChildProcess; output: () => string; exited: Promise<number | null> };

export type Fleet = {
  url: string;
  db: Pool;
  web: Running;
  worker: Running;
  /** Whether each process is still running. */
  alive(): { web: boolean; worker: boolean };
  key(): Promise<string>;
  request(path: string, options?: RequestOptions): Promise<Reply>;
  stop(): Promise<void>;
};

/** The web and a worker on `database`, as separate processes, as the Procfile runs them. */
export async function startFleet(database: PrivateDatabase, env: Record<string, string> = {}): Promise<Fleet> {
  const db = createPool(database.url, 2, 'test-fleet');
  // Arrange and check state on a pool that survives the outage: idle clients are dropped quietly.
  await migrate(db);
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const common = { DATABASE_URL: database.url, LOG_LEVEL: 'info', SHUTDOWN_TIMEOUT_MS: '3000', BLOB_WRITER_TIMEOUT_MS: '5000', BLOB_HEARTBEAT_MS: '1000', SWEEP_INTERVAL_MS: '1000', ...env };
  const worker = await startScript('worker/main.ts', common, /worker started/);
  const web = await startScript('api/main.ts', { ...common, PORT: String(port), BASE_URL: url }, /api listening/);
  let exited = { web: false, worker: false };
  void web.exited.then(() => (exited = { ...exited, web: true }));
  void worker.exited.then(() => (exited = { ...exited, worker: true }));
  return {
    url,
    db,
    web,
    worker,
    alive: () => ({ web: !exited.web, worker: !exited.worker }),
    key: async () => (await issueKey(db, (await createAccount(db, 'Outage test')).id, 'test')).key,
    request: (path, options) => callService(url, path, options),
    stop: async () => {
      for (const p of [web, worker]) p.child.kill('SIGTERM');
      await Promise.all([web.exited, worker.exited]);
      await db.end();
    },
  };
}
