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

/** Deletes the rows of one version (a deleted dataset's purge); how many. */
export async function deleteRowsOfVersion(db: Queryable, versionId: string): Promise<number> {
  const { rowCount } = await db.query('DELETE FROM contract_rows WHERE version_id = $1', [versionId]);
  return rowCount ?? 0;
}
