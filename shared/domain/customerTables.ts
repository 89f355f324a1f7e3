// Where a version's customers' rows are kept (sql/016, 029): the shared table version_customers,
// or, for a large version, a table of its own in the schema version_customers_apart, made by its
// build, indexed once full, and dropped by its purge. This file makes, indexes, names and drops
// them; monthlyFigures.ts stores the figures and reads them.
import { finished } from 'node:stream/promises';
import { type CopyStreamQuery, from as copyFrom } from 'pg-copy-streams';
import { type Client, type Pool, type Queryable, withTransaction } from '../platform/db.ts';
import { markCustomersApart } from './versions.ts';

/**
 * The COPY of a version's customers' rows as CustomerLinesWriter writes them (binary), inside the
 * build's transaction: into a table of the version's own (`apart`: made now, indexed once the COPY
 * ends) or into the shared one. `stored` resolves once they are in, and indexed; it rejects when
 * the COPY fails or is destroyed (then roll back: a table of its own is made).
 */
export async function openCustomersCopy(
  client: Client,
  versionId: string,
  { apart, lookupIndexRows }: { apart: boolean; lookupIndexRows?: number | undefined },
): Promise<{ copy: CopyStreamQuery; stored: Promise<void> }> {
  const table = apart ? await createCustomersApart(client, versionId) : SHARED_CUSTOMERS;
  const copy = client.query(copyFrom(`COPY ${table} (version_id, currency, customer, first_month, last_month, changes, moves) FROM STDIN (FORMAT binary)`));
  const stored = finished(copy).then(() => (apart ? indexCustomersApart(client, versionId, copy.rowCount, lookupIndexRows) : undefined));
  stored.catch(() => {}); // whoever writes the rows awaits it
  return { copy, stored };
}

/** Where small versions' customers are kept, all together. */
const SHARED_CUSTOMERS = 'version_customers';

/** The table of a version's customers: the shared one, or the version's own in version_customers_apart (sql/029). */
export function customersTableName(versionId: string, apart: boolean): string {
  return apart ? `version_customers_apart."${versionId.replaceAll('"', '""')}"` : SHARED_CUSTOMERS;
}

/** The table of a version's customers, as its record says (customersTableName). */
export async function customersTableOf(db: Queryable, versionId: string): Promise<string> {
  const { rows } = await db.query<{ apart: boolean }>('SELECT customers_apart AS apart FROM versions WHERE id = $1', [versionId]);
  return customersTableName(versionId, rows[0]?.apart === true);
}

/** Makes a version's own table of customers (sql/029), with no index yet, inside the build's transaction: COPY fills it, then indexCustomersApart. */
async function createCustomersApart(client: Client, versionId: string): Promise<string> {
  const table = customersTableName(versionId, true);
  await client.query(`CREATE TABLE ${table} (LIKE version_customers)`);
  return table;
}

/** The columns the reads of a version's own table of customers are planned by, and their statistics target (PostgreSQL's default: 100). */
const PLANNED_BY = ['version_id', 'currency', 'customer', 'first_month', 'last_month'];
const OWN_TABLE_STATISTICS = 10;

/**
 * Rows of its own table of customers from which a version's customers of a month (near either end
 * of its series) or of one movement are looked up by index (sql/024, 028) rather than found by a
 * scan of them all. Below it the scan is cheap and the indexes are not: at 107,000 rows (a
 * realistic 1M-row file) the slowest query of a page's scanned took 20 ms (5-22 with the indexes,
 * EXPLAIN ANALYZE on PostgreSQL 15; through the API, p99 under 30 ms: npm run bench -- figures),
 * and the indexes cost the build 0.28 s of PostgreSQL's CPU while the tally thread makes its
 * documents. A scan grows with the rows: 200,000 keep it near 40 ms.
 */
export const LOOKUP_INDEX_ROWS = 200_000;

/**
 * Indexes and analyzes a version's own table of `rows` customers' rows once it is full, and records
 * that it has one. The indexes of version_customers (sql/016, 024, 028) without its leading
 * version_id, which is the same in every row here (each comparison of a sort would compare it
 * first); those that look customers up by month or movement from `lookupIndexRows` rows.
 */
async function indexCustomersApart(client: Client, versionId: string, rows: number, lookupIndexRows = LOOKUP_INDEX_ROWS): Promise<void> {
  const table = customersTableName(versionId, true);
  await client.query(`ALTER TABLE ${table} ADD PRIMARY KEY (currency, customer)`);
  if (rows >= lookupIndexRows) {
    await client.query(`CREATE INDEX ON ${table} (first_month)`);
    await client.query(`CREATE INDEX ON ${table} (last_month)`);
    await client.query(`CREATE INDEX ON ${table} USING gin (moves)`);
  }
  // Its statistics, before the version's first read (after the commit, a read could come first and
  // be planned without them). Of the columns its reads are planned by: the moves' arrays took most
  // of the time (300k rows: 60 ms, 18 without); without version_id's, each row was taken for one in
  // 200, and a page of a middle month was read by its month's index and sorted (1M rows: 3 -> 26 ms).
  // From a sample of 300 × OWN_TABLE_STATISTICS rows: its columns have few values (one version,
  // ten-odd currencies, months) or are unique (customer), and a small sample plans every read the
  // same as the default 30,000 (EXPLAIN, realistic 1M rows), in 20-30 ms of the build instead of 120-180.
  await client.query(`ALTER TABLE ${table} ${PLANNED_BY.map((c) => `ALTER COLUMN ${c} SET STATISTICS ${OWN_TABLE_STATISTICS}`).join(', ')}`);
  await client.query(`ANALYZE ${table} (${PLANNED_BY.join(', ')})`);
  await markCustomersApart(client, versionId, true);
}

/** Rows past which an active build analyzes the shared customers' table. */
const ANALYZE_AFTER_ROWS = 500_000;

/**
 * After a build of `rows` rows is active, whose customers are in the shared table (a version's own
 * table is analyzed as it is indexed): its customers may be most of the table, and planned without
 * their statistics (autovacuum gathers them after its next nap), a customers read of a sparse month
 * scans every customer of the version in order.
 */
export async function analyzeSharedCustomersAfter(pool: Pool, rows: number): Promise<void> {
  if (rows >= ANALYZE_AFTER_ROWS) await pool.query(`ANALYZE ${SHARED_CUSTOMERS}`);
}

/**
 * How long the drop of a version's own table of customers waits for the reads that hold it: a drop
 * waiting on one (the basis for conversion read from every customer, seconds at 10M rows) queues
 * every read of the table after it.
 */
const DROP_LOCK_TIMEOUT_MS = 5_000;

/**
 * Deletes each customer's changes of a version whose rows are purged: the customers read needs the
 * rows' detail and answers 404 from then on. Its months, series and cohorts stay (contract,
 * "Deleting and keeping data"), as long as the version record. Make its basis for a reporting
 * currency first (versionRetention.ts): it is made from them. Throws lock_not_available (isLockNotAvailable), having
 * changed nothing, when a read held its own table for `lockTimeoutMs`.
 */
export async function deleteCustomerChanges(pool: Pool, versionId: string, lockTimeoutMs = DROP_LOCK_TIMEOUT_MS): Promise<void> {
  // The table and the mark together (read from the shared table, and found none, from then on):
  // a purge cut short between the two left a table that nothing would drop.
  await withTransaction(pool, async (client) => {
    await client.query(`SET LOCAL lock_timeout = ${Math.max(1, Math.round(lockTimeoutMs))}`);
    await client.query(`DROP TABLE IF EXISTS ${customersTableName(versionId, true)}`);
    await markCustomersApart(client, versionId, false);
  });
  await pool.query('DELETE FROM version_customers WHERE version_id = $1', [versionId]);
}
