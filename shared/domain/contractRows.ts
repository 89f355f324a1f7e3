// The contract's fields (shared/contract/fields.ts) in SQL: the columns of contract_rows, and each
// field's value as the text the API shows it in (dates YYYY-MM-DD, amounts with their two
// decimals), for the catalog and the exports.
import { CONTRACT_FIELDS, type ContractField, type FieldKind } from '../contract/fields.ts';

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
