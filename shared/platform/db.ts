// PostgreSQL access: one pool per process, transactions, and the test for "database unreachable".
import pg from 'pg';

export type Pool = pg.Pool;
export type Client = pg.PoolClient;
/** Anything that runs a query: the pool or a client inside a transaction. */
export type Queryable = Pick<pg.Pool, 'query'>;

/**
 * A statement that each connection has PostgreSQL parse and plan once, then runs by name (a
 * prepared statement): for the few queries nearly every request runs (the credential lookup, the
 * dataset), whose parsing and planning cost PostgreSQL about as much as running them. Each name
 * must belong to one text.
 */
export function prepared(name: string, text: string): (values: unknown[]) => pg.QueryConfig {
  return (values) => ({ name, text, values });
}

// Return bigint columns (counts, sums) as JS numbers: they stay far below 2^53 here.
pg.types.setTypeParser(pg.types.builtins.INT8, (v) => Number(v));

/**
 * How long a pooled connection serves before it is ended (when next released, never mid-use) and
 * replaced. A PostgreSQL backend keeps what it learnt of every table it touched for its whole life:
 * about 30 KiB a table with its indexes, and each large version's customers have a table of their
 * own (sql/029), so a connection reading thousands of versions' customers would grow by tens of MiB.
 */
const CONNECTION_LIFETIME_SECONDS = 600;

export function createPool(connectionString: string, max: number, applicationName: string, lifetimeSeconds = CONNECTION_LIFETIME_SECONDS): Pool {
  const pool = new pg.Pool({
    connectionString,
    max,
    application_name: applicationName,
    connectionTimeoutMillis: 5_000,
    idleTimeoutMillis: 30_000,
    maxLifetimeSeconds: lifetimeSeconds,
  });
  // A connection lost (a database restart, a network cut) is reported to whatever query or COPY
  // stream was using it; node-postgres also emits it as an 'error' event on the client, and on the
  // pool for an idle client, which with no listener would end the process. Those events say
  // nothing the failing query does not, so they are only absorbed here.
  pool.on('error', () => {});
  pool.on('connect', (client) => client.on('error', () => {}));
  return pool;
}

/**
 * A FROM item that makes the statement around it commit without waiting for the WAL to reach the
 * disk (synchronous_commit off for that statement alone): `… FROM ${WITHOUT_WAITING_FOR_WAL} …`.
 * Only on a pool's connection, never in a transaction (the setting would hold for all of it), and
 * only for a write whose every use commits later, waiting for the WAL, which makes it durable
 * first: it is seen at once all the same, and only a crash of PostgreSQL within a moment can lose it.
 */
export const WITHOUT_WAITING_FOR_WAL = `(SELECT set_config('synchronous_commit', 'off', true)) AS without_waiting_for_wal`;

export async function withTransaction<T>(pool: Pool, work: (client: Client) => Promise<T>): Promise<T> {
  const client = await pool.connect();
  try {
    await client.query('BEGIN');
    const result = await work(client);
    await client.query('COMMIT');
    return result;
  } catch (error) {
    await client.query('ROLLBACK').catch(() => {});
    throw error;
  } finally {
    client.release();
  }
}

/** Asks PostgreSQL to cancel whatever statement `client` is running (from another connection). */
export async function cancelRunningStatement(pool: Pool, client: Client): Promise<void> {
  await pool.query('SELECT pg_cancel_backend($1)', [(client as unknown as { processID: number }).processID]);
}

const unavailableCodes = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'ENOTFOUND', 'EPIPE', 'EAI_AGAIN']);
// SQLSTATE classes 08 (connection exception), 53 (insufficient resources), 57P0x (shutdown).
const unavailableStates = /^(08|53|57P0[1-4])/;

export function isDatabaseUnavailable(error: unknown): boolean {
  if (!(error instanceof Error)) return false;
  const code = (error as { code?: unknown }).code;
  if (typeof code === 'string' && (unavailableCodes.has(code) || unavailableStates.test(code))) return true;
  return /timeout exceeded when trying to connect|Connection terminated|connection timeout|Client has encountered a connection error/i.test(
    error.message,
  );
}

/**
 * `COPY (select) TO STDOUT` for a select whose one column is a line of JSON text: sent as CSV with
 * a delimiter and quote that JSON never contains, so nothing is quoted or escaped (COPY's text
 * format would double every backslash). Each value arrives as one line.
 */
export const copyJsonLinesOut = (select: string) => `COPY (${select}) TO STDOUT WITH (FORMAT csv, DELIMITER E'\\x02', QUOTE E'\\x01')`;

/** Whether a statement gave up waiting for a lock (lock_timeout: lock_not_available). */
export const isLockNotAvailable = (error: unknown): boolean => (error as { code?: string } | undefined)?.code === '55P03';

export function isUniqueViolation(error: unknown, constraint?: string): boolean {
  const e = error as { code?: string; constraint?: string };
  return e?.code === '23505' && (constraint === undefined || e.constraint === constraint);
}
