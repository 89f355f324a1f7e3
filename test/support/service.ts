// A real service for a test file: its own database (cloned from the migrated template), the API
// listening on a free port, a worker, and helpers that call it over HTTP with real credentials.
import { randomUUID } from 'node:crypto';
import { Writable } from 'node:stream';
import { createAccount } from '../../shared/tenancy/accounts.ts';
import { issueKey, type Mode } from '../../shared/tenancy/apiKeys.ts';
import { type Config, loadConfig } from '../../shared/platform/config.ts';
import { createPool, type Pool } from '../../shared/platform/db.ts';
import { createLogger } from '../../shared/platform/log.ts';
import { freePort } from '../../shared/platform/embeddedPostgres.ts';
import { startApi, type RunningApi } from '../../api/server.ts';
import { startWorker, type RunningWorker, type WorkerOptions } from '../../worker/worker.ts';
import { createTestDatabase } from '../setup/database.ts';
import { blobStoreEnv } from '../setup/objectStore.ts';
import type { BlobStore } from '../../shared/blobs/blobStore.ts';
import { createBlobStore } from '../../shared/blobs/createBlobStore.ts';

export type Reply = { status: number; headers: Headers; text: string; json: any };

export type RequestOptions = {
  method?: string;
  key?: string;
  idempotencyKey?: string | null;
  json?: unknown;
  body?: string | Buffer;
  headers?: Record<string, string>;
};

export type TestService = {
  url: string;
  databaseUrl: string;
  config: Config;
  /** A pool on the service's database, for arranging and checking state directly. */
  db: Pool;
  api: RunningApi;
  worker: RunningWorker | undefined;
  /** The service's blob store (PostgreSQL, or S3 with TEST_BLOB_STORE=s3). */
  blobs: BlobStore;
  /** The environment for child processes (workers) of this service: its database and blob store. */
  childEnv: Record<string, string>;
  /** Everything the service logged so far. */
  logs(): string;
  account(name?: string): Promise<string>;
  key(accountId: string, mode?: Mode): Promise<string>;
  /** A new account with a test-mode key. */
  tenant(mode?: Mode): Promise<{ accountId: string; key: string }>;
  request(path: string, options?: RequestOptions): Promise<Reply>;
  /** What has been metered for an account so far (usage is written in batches). */
  metered(accountId: string, metric: 'requests' | 'rows_ingested' | 'export_rows'): Promise<number>;
  stop(): Promise<void>;
};

/**
 * Calls a running service over HTTP: a bearer key, JSON bodies, and an Idempotency-Key on every
 * mutating call unless the test sets its own (or `null` for none).
 */
export async function callService(baseUrl: string, path: string, o: RequestOptions = {}): Promise<Reply> {
  const method = o.method ?? (o.json !== undefined || o.body !== undefined ? 'POST' : 'GET');
  const headers: Record<string, string> = { ...o.headers };
  if (o.key) headers['authorization'] = `Bearer ${o.key}`;
  if (o.json !== undefined) headers['content-type'] ??= 'application/json';
  const mutating = !['GET', 'HEAD', 'OPTIONS'].includes(method);
  if (mutating && o.idempotencyKey !== null) headers['idempotency-key'] = o.idempotencyKey ?? randomUUID();
  const body = o.json !== undefined ? JSON.stringify(o.json) : o.body;
  const res = await fetch(baseUrl + path, { method, headers, ...(body !== undefined && { body }) });
  const text = await res.text();
  let json: unknown;
  try {
    json = text ? JSON.parse(text) : undefined;
  } catch {
    json = undefined;
  }
  return { status: res.status, headers: res.headers, text, json };
}

export async function startService(
  options: { env?: Record<string, string>; worker?: boolean; onBuilt?: WorkerOptions['onBuilt'] } = {},
): Promise<TestService> {
  const database = await createTestDatabase();
  const port = String(await freePort());
  const childEnv = { DATABASE_URL: database.url, ...blobStoreEnv() };
  // A test's own env wins (a test may pin the blob store); its child processes keep the run's.
  const config = loadConfig({ PORT: port, BASE_URL: `http://127.0.0.1:${port}`, LOG_LEVEL: 'info', USAGE_FLUSH_MS: '100', SHUTDOWN_TIMEOUT_MS: '5000', ...childEnv, ...options.env });
  let logged = '';
  const sink = new Writable({
    write(chunk, _encoding, done) {
      logged += chunk.toString();
      done();
    },
  });
  const log = createLogger(config, 'test', sink);
  const worker = options.worker === false ? undefined : await startWorker(config, database.url, log, { onBuilt: options.onBuilt });
  const api = await startApi(config, database.url, log);
  // Called on its own port whatever BASE_URL says (a test may pose as a production instance).
  const url = `http://127.0.0.1:${port}`;
  const db = createPool(database.url, 4, 'test-arrange');
  const blobs = await createBlobStore(config, db);

  const service: TestService = {
    url,
    databaseUrl: database.url,
    config,
    db,
    api,
    worker,
    blobs,
    childEnv,
    logs: () => logged,
    account: async (name = 'Test account') => (await createAccount(db, name)).id,
    key: async (accountId, mode = 'test') => (await issueKey(db, accountId, mode)).key,
    tenant: async (mode = 'test') => {
      const accountId = await service.account();
      return { accountId, key: await service.key(accountId, mode) };
    },
    request: (path, o) => callService(url, path, o),
    metered: async (accountId, metric) => {
      const { rows } = await db.query('SELECT coalesce(sum(quantity), 0) AS n FROM usage_counters WHERE account_id = $1 AND metric = $2', [accountId, metric]);
      return Number(rows[0].n);
    },
    stop: async () => {
      await api.stop();
      await worker?.stop();
      await blobs.close();
      await db.end();
      await database.drop();
    },
  };
  return service;
}

/**
 * A running service for the calling `describe`: started before its tests (this hook first, so
 * later hooks can use it) and stopped after them. The handle reads whichever service is running;
 * touched outside a test or hook, it says so.
 */
export function useService(options: Parameters<typeof startService>[0] = {}): TestService {
  let running: TestService | undefined;
  before(async () => {
    running = await startService(options);
  });
  after(async function () {
    // Each part of the service may take SHUTDOWN_TIMEOUT_MS (5 s here) to stop: on a loaded
    // machine, the web process, the worker and its threads together can pass mocha's 20 s.
    this.timeout(60_000);
    await running?.stop();
    running = undefined;
  });
  return new Proxy({} as TestService, {
    get(_target, property) {
      if (!running) throw new Error(`the service is used outside a test or hook (${String(property)})`);
      return Reflect.get(running, property);
    },
  });
}
