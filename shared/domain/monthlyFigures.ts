// The monthly figures of a version (../shared/spec/contract.md, "Metrics and catalog"): month-end
// MRR and its movements, retention, cohorts, and each customer's changes, computed once when the
// version is built (shared/figures/book.ts) and stored with it. This file stores them, computes
// them from the stored rows when the build could not count them as they streamed, and reads them;
// the tables its customers' rows go to are made, indexed and dropped in customerTables.ts.
import { Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { StringDecoder } from 'node:string_decoder';
import { to as copyTo } from 'pg-copy-streams';
import { type CohortFigures, type ExactCells, MetricsBook } from '../figures/book.ts';
import { formatMonth, parseMonth } from '../figures/calendar.ts';
import { contractTerm, type ContractTerm, type CustomerMovement } from '../figures/definitions.ts';
import { asBuffer, customerMonth, CustomerLinesWriter, discardCustomerLines, moveCode, type MonthlyFigures, monthlyFigures, readCustomerLines, storedBytes, storedText, unpackChanges } from '../figures/customerChanges.ts';
import { formatScaled } from '../figures/exact.ts';
import { type Client, type Pool, type Queryable, withTransaction } from '../platform/db.ts';
import {
  BASIS_JSON_FORMAT,
  type BasisDoc,
  basisIsCurrent,
  type ExactStep,
  type FxBasis,
  FxBasisBuilder,
  packBasis,
  parseBasisJson,
  parseCells,
  unpackBasis,
} from '../figures/fxBasis.ts';
import { customersTableName, customersTableOf, openCustomersCopy } from './customerTables.ts';
import type { Tenant } from './datasets.ts';

const COPY_ESCAPES: Record<string, string> = { b: '\b', f: '\f', n: '\n', r: '\r', t: '\t', v: '\v', '\\': '\\' };
const unescapeCopy = (text: string) =>
  text.includes('\\')
    ? text.replace(/\\(x[0-9a-fA-F]{1,2}|[0-7]{1,3}|.)/g, (_, e: string) =>
        e[0] === 'x' ? String.fromCharCode(parseInt(e.slice(1), 16)) : /^[0-7]/.test(e) ? String.fromCharCode(parseInt(e, 8)) : (COPY_ESCAPES[e] ?? e),
      )
    : text;

/**
 * Stores a version's monthly figures, inside the build's transaction. Customers' rows held until
 * now go to a table of the version's own with `apart` (as streamed ones do, tallyResult in
 * worker/jobs/versionBuild.ts), else to the shared one. Answers whether they went to one of its own.
 */
export async function storeMonthlyFigures(
  client: Client,
  versionId: string,
  figures: MonthlyFigures,
  options: { apart?: boolean; lookupIndexRows?: number | undefined } = {},
): Promise<boolean> {
  // One statement, one round trip (a small build's figures were seven: 10-row files, 2-3 ms of a
  // 30 ms build). Each currency's series with its months, one JSON array from its first month to
  // its last (sql/032), each month's figures in it as they were made; all of them one JSON document
  // (json_to_recordset takes each array's text as it is). The cohorts compressed as the book's
  // thread made them, a bytes parameter each, kept as they come (sql/031). The basis for conversion
  // is made at the first reporting read, or ahead by the backfill job, from the cells; a version's
  // figures computed again (shared/domain/figuresBackfill.ts) replace what it had, its basis too.
  const months = new Map<string, string[]>();
  for (const m of figures.monthly) {
    let list = months.get(m.currency);
    if (list === undefined) months.set(m.currency, (list = []));
    list.push(m.figures);
  }
  const series = figures.bounds.map(({ currency, first, last }) => {
    const list = months.get(currency) ?? [];
    if (list.length !== last - first + 1) throw new Error(`the series of ${currency} has ${list.length} months from ${first} to ${last}`);
    return `{"c":${JSON.stringify(currency)},"f":${first},"l":${last},"m":[${list.join(',')}]}`;
  });
  const cohorts = figures.cohorts.map((_, i) => `($1, $${3 + 2 * i}, $${4 + 2 * i})`);
  await client.query(
    `WITH series AS (
       INSERT INTO version_series (version_id, currency, first_month, last_month, months)
       SELECT $1, x.c, x.f, x.l, x.m FROM json_to_recordset($2::json) AS x(c text, f int, l int, m json)
     )${cohorts.length === 0 ? '' : `, cohorts AS (INSERT INTO version_cohorts (version_id, currency, cohorts_zstd) VALUES ${cohorts.join(', ')})`}
     INSERT INTO version_fx (version_id, cells_zstd) VALUES ($1, $${3 + 2 * cohorts.length})
     ON CONFLICT (version_id) DO UPDATE SET cells = NULL, cells_zstd = excluded.cells_zstd, basis = NULL, basis_json = NULL`,
    [versionId, `[${series.join(',')}]`, ...figures.cohorts.flatMap(({ currency, zstd }) => [currency, asBuffer(zstd)]), asBuffer(figures.cellsZstd)],
  );
  const lines = figures.customers;
  let apart = false;
  if (lines.streamed) {
    // Stored already, as the book made them (tallyResult in worker/jobs/versionBuild.ts).
  } else if (lines.bytes === 0) discardCustomerLines(lines);
  else {
    const { copy, stored } = await openCustomersCopy(client, versionId, { apart: options.apart === true, lookupIndexRows: options.lookupIndexRows });
    await pipeline(readCustomerLines(lines), copy);
    await stored;
    apart = options.apart === true;
  }
  return apart;
}

/** Customers' rows read per fetch while the basis for conversion is made. */
const FX_FETCH = 10_000;

/**
 * Makes and stores the version's basis for conversion to a reporting currency (fxBasis.ts): from
 * the book's cells its build kept and the stored customers of several currencies, or from
 * every stored customer, read once in customer order (a version built before there were cells).
 * Inside a transaction.
 */
export async function storeFxBasis(client: Client, versionId: string, bounds: readonly { currency: string; first: number; last: number }[], cells?: ExactCells): Promise<FxBasis> {
  const builder = new FxBasisBuilder(bounds, cells);
  // From the cells, only customers of several currencies are read: a version of one currency has none.
  if (cells && bounds.length <= 1) return storeBasis(client, versionId, builder.done());
  const table = await customersTableOf(client, versionId);
  const several = `AND customer IN (SELECT customer FROM ${table} WHERE version_id = $1 GROUP BY customer HAVING count(*) > 1)`;
  // Every row is read: planned for all of them (for the first tenth, the several customers' subquery took seconds at 1M rows).
  await client.query('SET LOCAL cursor_tuple_fraction = 1');
  await client.query(
    `DECLARE fx_customers NO SCROLL CURSOR FOR
     SELECT customer, currency::text AS currency, first_month, changes FROM ${table}
     WHERE version_id = $1 ${cells ? several : ''} ORDER BY customer, currency`,
    [versionId],
  );
  let customer: string | undefined;
  let steps: Record<string, ExactStep[]> = {};
  for (;;) {
    const { rows } = await client.query<{ customer: string; currency: string; first_month: number; changes: Buffer }>(`FETCH ${FX_FETCH} FROM fx_customers`);
    for (const row of rows) {
      if (row.customer !== customer) {
        if (customer !== undefined) builder.addCustomer(steps);
        customer = row.customer;
        steps = {};
      }
      steps[row.currency] = unpackChanges(row.first_month, row.changes).map((c) => ({ month: c.month, movement: c.movement, n: c.mrr, den: c.den }));
    }
    if (rows.length < FX_FETCH) break;
  }
  await client.query('CLOSE fx_customers');
  if (customer !== undefined) builder.addCustomer(steps);
  return storeBasis(client, versionId, builder.done());
}

async function storeBasis(client: Client, versionId: string, basis: FxBasis): Promise<FxBasis> {
  await client.query('INSERT INTO version_fx (version_id, basis) VALUES ($1, $2) ON CONFLICT (version_id) DO UPDATE SET basis = excluded.basis, basis_json = NULL', [
    versionId,
    packBasis(basis),
  ]);
  return basis;
}

/** What tells a version's row of version_fx (its cells and basis) from any later state of it: its row version (xmin). */
export async function fxBasisTag(db: Queryable, versionId: string): Promise<string | undefined> {
  const { rows } = await db.query<{ tag: string }>('SELECT xmin::text AS tag FROM version_fx WHERE version_id = $1', [versionId]);
  return rows[0]?.tag;
}

/** Bytes of a packed basis read per statement: as hex text, a whole one at 10M rows (9.7 MB) took some 100 MB of a process' memory in flight. */
const BASIS_SLICE = 1 << 20;

/** The version's packed basis (read in slices of one snapshot), and whether it has one of the JSON layout instead. */
async function readPackedBasis(pool: Pool, versionId: string): Promise<{ basis: Buffer | undefined; json: boolean }> {
  return withTransaction(pool, async (client) => {
    await client.query('SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY');
    const { rows } = await client.query<{ bytes: number | null; json: boolean | null }>(
      `SELECT octet_length(basis) AS bytes, basis_json->>'format' = '${BASIS_JSON_FORMAT}' AS json FROM version_fx WHERE version_id = $1`,
      [versionId],
    );
    const bytes = rows[0]?.bytes ?? null;
    if (bytes === null) return { basis: undefined, json: rows[0]?.json === true };
    const basis = Buffer.allocUnsafe(bytes);
    for (let at = 0; at < bytes; at += BASIS_SLICE) {
      const slice = await client.query<{ part: Buffer }>('SELECT substring(basis FROM $2 FOR $3) AS part FROM version_fx WHERE version_id = $1', [versionId, at + 1, BASIS_SLICE]);
      slice.rows[0]!.part.copy(basis, at);
    }
    return { basis, json: false };
  });
}

/**
 * The version's basis for conversion; made now (and kept) at its first reporting read: from the
 * cells its build kept, or from every customer for a version built before there were any.
 */
export async function readFxBasis(pool: Pool, versionId: string): Promise<FxBasis> {
  const packed = await readPackedBasis(pool, versionId);
  if (packed.basis && basisIsCurrent(packed.basis)) return unpackBasis(packed.basis);
  if (packed.json) {
    // Kept as JSON by an earlier release: packed once, as it is (its customers may be purged).
    const legacy = await pool.query<{ doc: BasisDoc }>('SELECT basis_json AS doc FROM version_fx WHERE version_id = $1', [versionId]);
    return withTransaction(pool, (client) => storeBasis(client, versionId, parseBasisJson(legacy.rows[0]!.doc)));
  }
  // The cells only when the basis is to be made: megabytes at 10M rows (far more when kept exact, before their fixed point).
  const kept = await pool.query<{ cells: string | null; cells_zstd: Buffer | null }>('SELECT cells, cells_zstd FROM version_fx WHERE version_id = $1', [versionId]);
  const text = kept.rows[0] ? await storedText(kept.rows[0].cells, kept.rows[0].cells_zstd) : null;
  // Cells kept before they held the cohorts cannot make them: then every customer is read.
  const parsed = text ? parseCells(text) : undefined;
  const cells = parsed?.every((c) => c.cohorts !== undefined) ? parsed : undefined;
  return withTransaction(pool, async (client) => {
    const series = await client.query<{ currency: string; first: number; last: number }>(
      `SELECT currency::text AS currency, first_month AS first, last_month AS last FROM version_series WHERE version_id = $1 ORDER BY currency COLLATE "C"`,
      [versionId],
    );
    return storeFxBasis(client, versionId, series.rows, cells);
  });
}

/**
 * Computes the monthly figures from the version's stored rows, read in customer order: for a
 * build whose rows the tally could not count (it outgrew its limits). Inside the build's transaction.
 */
export async function computeMonthlyFigures(client: Client, versionId: string): Promise<MonthlyFigures> {
  const book = new MetricsBook();
  const customers = new CustomerLinesWriter(versionId);
  let group: { currency: string; customer: string; contracts: ContractTerm[] } | undefined;
  const flush = () => {
    if (!group) return;
    const changes = book.walk(group.currency, group.contracts, group.contracts.length);
    if (changes.length > 0) customers.add(group.currency, group.customer, changes);
  };
  let rest = '';
  const utf8 = new StringDecoder('utf8'); // a character may be cut between two chunks
  const rows = client.query(
    copyTo(
      `COPY (SELECT currency, customer, start_date - DATE '1970-01-01', end_date - DATE '1970-01-01', (amount * 100)::numeric(30, 0)
             FROM contract_rows
             WHERE version_id = ${client.escapeLiteral(versionId)} AND start_date IS NOT NULL AND end_date IS NOT NULL AND amount > 0 AND currency IS NOT NULL
             ORDER BY currency, customer) TO STDOUT`,
    ),
  );
  await pipeline(
    rows,
    new Writable({
      decodeStrings: false,
      write(chunk: Buffer, _encoding, done) {
        const text = rest + utf8.write(chunk);
        const end = text.lastIndexOf('\n');
        rest = text.slice(end + 1);
        for (const line of text.slice(0, end).split('\n')) {
          const [currency, customerText, start, endDay, cents] = line.split('\t') as [string, string, string, string, string];
          const customer = unescapeCopy(customerText);
          if (!group || group.currency !== currency || group.customer !== customer) {
            flush();
            group = { currency, customer, contracts: [] };
          }
          group.contracts.push(contractTerm(Number(start), Number(endDay), BigInt(cents)));
        }
        done();
      },
    }),
  );
  flush();
  return monthlyFigures(book, customers);
}

/** SQL: month `month`'s figures (json) in the series row `series` (sql/032: element i is its first month + i). */
export const seriesMonth = (series: string, month: string) => `${series}.months->(${month} - ${series}.first_month)`;

/** The monthly series of a version, sliced to [from, to] (months YYYY-MM, both optional), ordered by month then currency. */
export async function readMonthly(db: Queryable, versionId: string, range: { from?: string | undefined; to?: string | undefined }): Promise<unknown[]> {
  const { rows } = await db.query<{ currency: string; first: number; months: Record<string, unknown>[] }>(
    `SELECT currency::text AS currency, first_month AS first, months FROM version_series WHERE version_id = $1 ORDER BY currency COLLATE "C"`,
    [versionId],
  );
  const from = range.from === undefined ? -Infinity : parseMonth(range.from);
  const to = range.to === undefined ? Infinity : parseMonth(range.to);
  const docs: { at: number; doc: unknown }[] = [];
  for (const { currency, first, months } of rows) {
    for (let m = Math.max(first, from); m <= Math.min(first + months.length - 1, to); m++) docs.push({ at: m, doc: { month: formatMonth(m), currency, ...months[m - first] } });
  }
  // By month, then currency as the rows came (a stable sort).
  return docs.sort((a, b) => a.at - b.at).map((d) => d.doc);
}

/** A version's cohorts as stored: each currency's as JSON array elements joined by commas, in UTF-8, ordered by currency then cohort (to send as they are). */
export async function readCohortsTexts(db: Queryable, versionId: string, currency: string | undefined): Promise<Buffer[]> {
  const { rows } = await db.query<{ cohorts: string | null; cohorts_zstd: Buffer | null }>(
    `SELECT cohorts, cohorts_zstd FROM version_cohorts WHERE version_id = $1 AND ($2::text IS NULL OR currency = $2) ORDER BY currency COLLATE "C"`,
    [versionId, currency ?? null],
  );
  return (await Promise.all(rows.map((r) => storedBytes(r.cohorts, r.cohorts_zstd)))).filter((text): text is Buffer => text !== null);
}

/** A version's cohorts, ordered by currency then cohort. */
export async function readCohorts(db: Queryable, versionId: string, currency: string | undefined): Promise<CohortFigures[]> {
  return JSON.parse(`[${(await readCohortsTexts(db, versionId, currency)).join(',')}]`) as CohortFigures[];
}

export type CustomerMonth = { object: 'customer_month'; customer: string; currency: string; month: string; previousMrr: string; mrr: string; movement: CustomerMovement };

/** Where a page of customers goes on from: after this currency and customer. */
export type CustomerCursor = { currency: string; customer: string };

/** Rows read per query while a page fills (customers with no MRR at either month end are skipped). */
const SCAN_ROWS = 500;

/**
 * A page of the customers with MRR at the end of `month` or of the month before, ordered by
 * currency then customer (as UTF-8 bytes), after the cursor.
 */
export async function readCustomerMonths(
  db: Queryable,
  versionId: string,
  query: { month: string; currency?: string | undefined; movement?: CustomerMovement | undefined; limit: number; after?: CustomerCursor | undefined },
): Promise<{ data: CustomerMonth[]; next: CustomerCursor | undefined }> {
  const month = parseMonth(query.month);
  // A movement other than retained is a change in that month: SQL finds the customers who have it.
  const movedThen = query.movement && query.movement !== 'retained' ? moveCode(month, query.movement) : null;
  const data: CustomerMonth[] = [];
  // In one round trip: the currencies whose series hold the month (found first: joined, their few
  // rows were taken to filter most customers out, and PostgreSQL sorted tens of thousands where a
  // page was wanted); the version's customers; and those the month holds (with a movement, those
  // of that movement: their index finds them, sql/028). Few of them (near either end of the
  // series, or of one movement): all are taken from the month's or the movements' indexes (in a
  // table of its own, from LOOKUP_INDEX_ROWS rows; below, by a scan of them all) and sorted. Else the version's customers are walked in order until a page is found, which reads
  // about SCAN_ROWS × customers ÷ held rows: so they are taken apart when fewer than
  // √(SCAN_ROWS × customers) (10M rows: the last month 179 -> 10 ms).
  const { rows: shape } = await db.query<{ covering: string[]; customers: number | null; held: number | null; apart: boolean | null }>(
    `SELECT ARRAY(SELECT currency::text FROM version_series WHERE version_id = $1 AND first_month <= $3 AND last_month >= $3) AS covering,
            (SELECT customers_apart FROM versions WHERE id = $1) AS apart,
            (SELECT sum((c->>'customers')::int) FROM version_reads r, json_array_elements(r.currencies) c WHERE r.version_id = $1)::int AS customers,
            (SELECT sum(CASE WHEN $2::text IS NULL THEN (${seriesMonth('s', '$3')}->>'activeCustomers')::int
                             ELSE (${seriesMonth('s', '$3')}->'movements'->$2::text->>'customers')::int END)
             FROM version_series s WHERE s.version_id = $1 AND s.first_month <= $3 AND s.last_month >= $3)::int AS held`,
    [versionId, movedThen === null ? null : query.movement, month],
  );
  const { covering, customers, held, apart: ownTable } = shape[0]!;
  const apart = customers !== null && held !== null && held * held < SCAN_ROWS * customers;
  // Currencies as char(3), as the column (compared as text, the primary key went unused); a movement through its index (sql/028).
  const matching = `SELECT c.currency::text AS currency, c.customer, c.first_month, c.changes
       FROM ${customersTableName(versionId, ownTable === true)} c
       WHERE c.version_id = $1 AND ($2::char(3) IS NULL OR c.currency = $2::char(3)) AND c.currency = ANY ($7::char(3)[])
         AND c.first_month <= $3 AND c.last_month >= $3
         AND ($4::text IS NULL OR (c.currency, c.customer) > ($4::char(3), $5::text COLLATE "C"))
         AND ($6::int IS NULL OR c.moves @> ARRAY[$6::int])`;
  let after = query.after;
  for (;;) {
    const { rows } = await db.query<{ currency: string; customer: string; first_month: number; changes: Buffer }>(
      // OFFSET 0: planned whole, apart from the order and the page, so that the month indexes find them (where there are some).
      `${apart ? `SELECT * FROM (${matching} OFFSET 0) c` : matching} ORDER BY c.currency, c.customer LIMIT ${SCAN_ROWS}`,
      [versionId, query.currency ?? null, month, after?.currency ?? null, after?.customer ?? null, movedThen, covering],
    );
    for (const row of rows) {
      after = { currency: row.currency, customer: row.customer };
      const line = customerMonth(unpackChanges(row.first_month, row.changes), month);
      if (!line || (query.movement && line.movement !== query.movement)) continue;
      data.push({
        object: 'customer_month',
        customer: row.customer,
        currency: row.currency,
        month: formatMonth(month),
        previousMrr: formatScaled(line.previousCents, 2),
        mrr: formatScaled(line.cents, 2),
        movement: line.movement,
      });
      if (data.length > query.limit) {
        data.pop();
        const last = data.at(-1)!;
        return { data, next: { currency: last.currency, customer: last.customer } };
      }
    }
    if (rows.length < SCAN_ROWS) return { data, next: undefined };
  }
}

/** The dataset's active version, or undefined (missing dataset, or none active: the same 404). */
export async function activeVersionOf(db: Queryable, tenant: Tenant, datasetId: string): Promise<string | undefined> {
  const { rows } = await db.query<{ version_id: string }>(
    `SELECT active_version_id AS version_id FROM datasets
     WHERE id = $1 AND account_id = $2 AND mode = $3 AND deleted_at IS NULL AND active_version_id IS NOT NULL`,
    [datasetId, tenant.accountId, tenant.mode],
  );
  return rows[0]?.version_id;
}
