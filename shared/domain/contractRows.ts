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
 * Where a build streams its rows (binary COPY, in the rowValidator's column order), on the
 * build's client and inside its transaction: the rows are kept only if it commits.
 */
export function copyRowsIn(client: Client): Writable {
  return client.query(copyFrom(`COPY contract_rows (${COPY_COLUMNS}) FROM STDIN (FORMAT binary)`));
}

/** Rows deleted per statement by a purge (see deleteRowsOfVersion). */
export const PURGE_BATCH_ROWS = 20_000;

/**
 * Deletes the rows of one version (a superseded version past its retention, a deleted dataset's),
 * `batchRows` at a time, each batch a statement of its own: a purge of millions of rows never
 * holds a long transaction, locks or a snapshot that would keep the vacuum from other tables'
 * work, and one cut short (a worker killed) simply goes on the next time. How many were deleted.
 */
export async function deleteRowsOfVersion(db: Queryable, versionId: string, batchRows = PURGE_BATCH_ROWS, onBatch?: (deleted: number) => void): Promise<number> {
  let total = 0;
  for (;;) {
    const { rowCount } = await db.query(
      'DELETE FROM contract_rows WHERE ctid = ANY(ARRAY(SELECT ctid FROM contract_rows WHERE version_id = $1 LIMIT $2))',
      [versionId, batchRows],
    );
    total += rowCount ?? 0;
    onBatch?.(total);
    if ((rowCount ?? 0) < batchRows) return total;
  }
}
