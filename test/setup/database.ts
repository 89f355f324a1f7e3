// One PostgreSQL server for the whole test run: DATABASE_URL when set, else an embedded one in a
// temporary directory. A template database is migrated once (our tables and pg-boss's schema);
// each test file clones its own database from it, so files never see each other's data.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { PgBoss } from 'pg-boss';
import { loadConfig } from '../../shared/platform/config.ts';
import { embeddedUrl, startEmbeddedPostgres } from '../../shared/platform/embeddedPostgres.ts';
import { createPool } from '../../shared/platform/db.ts';
import { createLogger } from '../../shared/platform/log.ts';
import { migrate } from '../../shared/platform/migrate.ts';

type Server = { adminUrl: string; template: string; stop(): Promise<void> };

let server: Server | undefined;
const runId = `${process.pid}_${Date.now().toString(36)}`;

export function databaseUrl(adminUrl: string, database: string): string {
  const url = new URL(adminUrl);
  url.pathname = `/${database}`;
  return url.toString();
}

async function admin<T>(adminUrl: string, work: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: adminUrl });
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end();
  }
}

export async function startTestDatabaseServer(): Promise<void> {
  const config = loadConfig();
  const log = createLogger({ logLevel: 'silent' }, 'test-db');
  let adminUrl: string;
  let stopServer = async () => {};
  if (config.databaseUrl) {
    adminUrl = config.databaseUrl;
  } else {
    const dir = await mkdtemp(join(tmpdir(), 'dataset-service-test-'));
    const embedded = await startEmbeddedPostgres(dir, log);
    adminUrl = embeddedUrl(embedded.port);
    stopServer = async () => {
      await embedded.stop();
      await rm(dir, { recursive: true, force: true });
    };
  }
  const template = `ds_test_template_${runId}`;
  await admin(adminUrl, (c) => c.query(`CREATE DATABASE ${template}`));
  const url = databaseUrl(adminUrl, template);
  const pool = createPool(url, 2, 'test-template');
  await migrate(pool);
  await pool.end();
  const boss = new PgBoss({ connectionString: url, schedule: false, supervise: false });
  await boss.start();
  await boss.stop({ graceful: false });
  server = {
    adminUrl,
    template,
    stop: async () => {
      await admin(adminUrl, (c) => c.query(`DROP DATABASE IF EXISTS ${template} WITH (FORCE)`));
      await stopServer();
    },
  };
}

export async function stopTestDatabaseServer(): Promise<void> {
  await server?.stop();
  server = undefined;
}

let counter = 0;

/** A fresh database cloned from the migrated template; drop it with the function returned. */
export async function createTestDatabase(): Promise<{ url: string; drop(): Promise<void> }> {
  if (!server) throw new Error('the test database server is not started (test/setup/hooks.ts)');
  const { adminUrl, template } = server;
  const name = `ds_test_${runId}_${++counter}`;
  await admin(adminUrl, (c) => c.query(`CREATE DATABASE ${name} TEMPLATE ${template}`));
  return {
    url: databaseUrl(adminUrl, name),
    drop: () => admin(adminUrl, (c) => c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)).then(() => {}),
  };
}
