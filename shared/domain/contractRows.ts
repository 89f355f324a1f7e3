// The rows of versions (`contract_rows`): written only here, by a build's COPY; and the contract's
// fields (shared/contract/fields.ts) in SQL: the columns of contract_rows, and each field's value
// as the text the API shows it in (dates YYYY-MM-DD, amounts with their two decimals), for the
// catalog and the exports.
import type { Writable } from 'node:stream';
import { from as copyFrom } from 'pg-copy-streams';
import { CONTRACT_FIELDS, type ContractField, type FieldKind } from '../contract/fields.ts';
import { COPY_COLUMNS } from '../ingest/rowValidator.ts';
import type { Client, Queryable } from '../platform/db.ts';

/** Every field's column, in the contract's order. */
export const FIELD_COLUMNS = CONTRACT_FIELDS.map((f) => f.column).join(', ');

const AS_TEXT: Record<FieldKind, (sql: string) => string> = {
  string: (sql) => sql,
  date: (sql) => `to_char(${sql}, 'YYYY-MM-DD')`,
  decimal: (sql) => `${sql}::text`, // numeric(20, 2): always two decimals
  currency: (sql) => `${sql}::text`, // char(3), as text
};

/** A SQL expression of the field's value (its column by default) as text. */
export function fieldText(field: ContractField, sql: string = field.column): string {
  return AS_TEXT[field.kind](sql);
}

/**
 * A SQL expression of a row as a JSON object as exported (JSONL): every field under its name in
 * the contract's order, absent values as null, each as text (fieldText). `alias` names the row's
 * relation, when the columns need one.
 */
export function rowJson(alias?: string): string {
  return `json_build_object(${CONTRACT_FIELDS.map((f) => `'${f.name}', ${fieldText(f, alias ? `${alias}.${f.column}` : f.column)}`).join(', ')})`;
}

/**
 * Where a build streams its rows (binary COPY, in the rowValidator's column order), on the
 * build's client and inside its transaction: the rows are kept only if it commits.
 */
export function copyRowsIn(client: Client): Writable {
  return client.query(copyFrom(`COPY contract_rows (${COPY_COLUMNS}) FROM STDIN (FORMAT binary)`));
}

/** Rows deleted per statement by a purge (see deleteRowsOfVersion), about. */
export const PURGE_BATCH_ROWS = 20_000;

/** The BRIN index's pages per range (sql/015_contract_rows_brin.sql). */
const PAGES_PER_RANGE = 16;
/** The pages a purge counts its version's rows by, and deletes at least at once: 4 BRIN ranges (512 KiB). */
const SPAN_PAGES = 4 * PAGES_PER_RANGE;

/**
 * Deletes the rows of one version (a superseded version past its retention, a deleted dataset's),
 * about `batchRows` at a time, each batch a statement of its own: a purge of millions of rows never
 * holds a long transaction, locks or a snapshot that would keep the vacuum from other tables'
 * work, and one cut short (a worker killed) simply goes on the next time. How many were deleted.
 *
 * The version's pages are found once (through the BRIN index: one scan of its rows, the purge's
 * only statement that reads more than a batch), then each batch deletes within a run of pages
 * (a TID range scan): asking the index again for each batch would read the pages of the rows
 * already deleted again, every time. The BRIN ranges a batch touched are summarized anew at the
 * end (a summary only ever grows otherwise: over the years every range would match every version).
 */
export async function deleteRowsOfVersion(
  db: Queryable,
  versionId: string,
  { batchRows = PURGE_BATCH_ROWS, onBatch }: { batchRows?: number | undefined; onBatch?: (deleted: number) => void } = {},
): Promise<number> {
  const { rows: spans } = await db.query<{ span: string; rows: string }>(
    `SELECT (ctid::text::point)[0]::bigint / ${SPAN_PAGES} AS span, count(*) AS rows
     FROM contract_rows WHERE version_id = $1 GROUP BY 1 ORDER BY 1`,
    [versionId],
  );
  // Kept before any row goes: a purge cut short, whose next run finds those rows gone, loses none.
  const ranges = spans.flatMap(({ span }) => Array.from({ length: SPAN_PAGES / PAGES_PER_RANGE }, (_, i) => Number(span) * (SPAN_PAGES / PAGES_PER_RANGE) + i));
  await keepRangesToSummarize(db, ranges);
  let total = 0;
  for (let i = 0; i < spans.length; ) {
    // Adjacent spans of pages, together up to about batchRows rows (a span of more on its own).
    const first = Number(spans[i]!.span);
    let last = first;
    let rows = Number(spans[i++]!.rows);
    while (i < spans.length && Number(spans[i]!.span) === last + 1 && rows + Number(spans[i]!.rows) <= batchRows) {
      rows += Number(spans[i++]!.rows);
      last++;
    }
    const fromPage = first * SPAN_PAGES;
    const toPage = (last + 1) * SPAN_PAGES;
    const { rows: done } = await db.query<{ n: number }>(
      `WITH deleted AS (DELETE FROM contract_rows WHERE version_id = $1 AND ctid >= $2::tid AND ctid < $3::tid RETURNING 1),
            emptied AS (SELECT brin_desummarize_range('contract_rows_version'::regclass, r * ${PAGES_PER_RANGE}) FROM generate_series($4::bigint, $5::bigint) r)
       SELECT (SELECT count(*) FROM deleted)::int AS n, (SELECT count(*) FROM emptied) AS ranges`,
      [versionId, `(${fromPage},0)`, `(${toPage},0)`, fromPage / PAGES_PER_RANGE, toPage / PAGES_PER_RANGE - 1],
    );
    total += done[0]!.n;
    onBatch?.(total);
  }
  // The ranges emptied are summarized again now (the rows left in them), not at the next vacuum:
  // until then every read by version would read them.
  if (spans.length > 0) await db.query(`SELECT brin_summarize_new_values('contract_rows_version'::regclass)`);
  return total;
}

/**
 * Summarizes ranges of the BRIN index again (desummarized, then summarized), after a vacuum took
 * the rows a purge deleted in them. A summary made while another session's snapshot could still
 * see the deleted rows (a build's transaction, an analyze: any, at the moment of the purge's own)
 * takes them in, and no vacuum narrows it: the range would match the purged version, and every
 * version between its and the rows' that come to its pages, for good.
 */
async function summarizeAgain(db: Queryable, ranges: readonly number[]): Promise<void> {
  if (ranges.length === 0) return;
  await db.query(`SELECT count(brin_desummarize_range('contract_rows_version'::regclass, r * ${PAGES_PER_RANGE})) FROM unnest($1::bigint[]) r`, [ranges]);
  await db.query(`SELECT brin_summarize_new_values('contract_rows_version'::regclass)`);
}

/** Keeps ranges a purge deletes rows in (sql/034), until vacuumAndSummarizeAgain forgets them; a range kept again is kept from now. */
async function keepRangesToSummarize(db: Queryable, ranges: readonly number[]): Promise<void> {
  if (ranges.length === 0) return;
  await db.query(
    `INSERT INTO contract_rows_ranges_to_summarize (range, kept_at) SELECT r, clock_timestamp() FROM unnest($1::bigint[]) r
     ON CONFLICT (range) DO UPDATE SET kept_at = excluded.kept_at`,
    [ranges],
  );
}

/**
 * Vacuums contract_rows and summarizes again every range the purges kept (none: nothing done),
 * then forgets those kept before every transaction now open that holds a snapshot or an xid (what
 * holds a vacuum back) began: none of them can see the rows deleted there, so the vacuum took them,
 * and their new summaries leave them out. Those kept later, or while such a transaction is open (a
 * build's, an analyze's), stay for the next run. Answers how many ranges were summarized, and how
 * many stay.
 */
export async function vacuumAndSummarizeAgain(db: Queryable): Promise<{ summarized: number; left: number }> {
  // As text: a Date would drop the microseconds (the cut-off earlier, which is safe, but needlessly so).
  const { rows: horizon } = await db.query<{ clear_before: string }>(
    `SELECT coalesce(min(xact_start), clock_timestamp())::text AS clear_before FROM pg_stat_activity
     WHERE datname = current_database() AND pid <> pg_backend_pid() AND (backend_xmin IS NOT NULL OR backend_xid IS NOT NULL)`,
  );
  const { rows } = await db.query<{ range: string }>('SELECT range FROM contract_rows_ranges_to_summarize');
  if (rows.length === 0) return { summarized: 0, left: 0 };
  const ranges = rows.map((r) => Number(r.range));
  await db.query('VACUUM (ANALYZE) contract_rows');
  await summarizeAgain(db, ranges);
  const { rowCount } = await db.query('DELETE FROM contract_rows_ranges_to_summarize WHERE range = ANY($1::bigint[]) AND kept_at < $2::timestamptz', [ranges, horizon[0]!.clear_before]);
  return { summarized: ranges.length, left: ranges.length - (rowCount ?? 0) };
}
