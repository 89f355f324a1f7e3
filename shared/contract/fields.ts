// The contract row, defined once (../shared/spec/contract.md, "Contract rows (CSV)" and "Fine
// points"): the fields of an uploaded file in the contract's order, what each holds, the rules a
// cell is checked by, and the row error codes. Whatever lists the fields reads this table: the
// header check and the validator (shared/ingest/rowValidator.ts), the COPY into contract_rows,
// the metrics and catalog (shared/ingest/tally.ts, shared/domain/metricsAndCatalog.ts), the
// export formats' columns (shared/domain/exportFormats.ts), the API's schemas and the test helpers.
//
// A new field: an entry here and a migration adding its column to contract_rows; then the
// compiler asks the tally for its catalog figures and the test files' generator
// (test/support/contracts.ts) for its cells. A new kind also needs its check in the validator and
// its text in SQL (shared/domain/contractRows.ts).

type KindRules = {
  /** The catalog shows the field's min and max. */
  minMax: boolean;
};

/** What a field holds; its name is also the field's `type` in the catalog. */
export const FIELD_KINDS = {
  /** Text of at most `maxLength` characters. Codes: too_long. */
  string: { minMax: false },
  /** A real calendar date, YYYY-MM-DD. Codes: not_a_date. */
  date: { minMax: true },
  /** A decimal number ≥ 0 with at most 2 decimals (the amount). Codes: not_a_number, negative. */
  decimal: { minMax: true },
  /** An ISO 4217 code in use: three upper-case letters. Codes: not_a_currency. */
  currency: { minMax: false },
} as const satisfies Record<string, KindRules>;

export type FieldKind = keyof typeof FIELD_KINDS;
export const FIELD_KIND_NAMES = Object.keys(FIELD_KINDS) as [FieldKind, ...FieldKind[]];

type FieldRules = {
  /** The header name (matched case-insensitively after trimming), the API's and the exports' name. */
  name: string;
  /** Its column in contract_rows. */
  column: string;
  /** An empty cell, or a missing column, is an error: `required`, `missing_column`. */
  required: boolean;
  /** One of the four fields without which a row contributes nothing to the metrics (no error). */
  gating: boolean;
  /** Two rows with one value: the later gets `duplicate` (one field is unique: contractId). */
  unique?: true;
  /** A value before this field's gets `end_before_start` (dates). */
  notBefore?: string;
  /** For the metrics a zero counts as absent: the row contributes nothing, counted as excluded. */
  zeroExcludes?: true;
};

export type ContractField = FieldRules & ({ kind: 'string'; maxLength: number } | { kind: Exclude<FieldKind, 'string'> });

const TABLE = [
  { name: 'contractId', column: 'contract_id', kind: 'string', maxLength: 200, required: false, gating: false, unique: true },
  { name: 'customer', column: 'customer', kind: 'string', maxLength: 200, required: true, gating: false },
  { name: 'product', column: 'product', kind: 'string', maxLength: 200, required: false, gating: false },
  { name: 'startDate', column: 'start_date', kind: 'date', required: false, gating: true },
  { name: 'endDate', column: 'end_date', kind: 'date', required: false, gating: true, notBefore: 'startDate' },
  { name: 'amount', column: 'amount', kind: 'decimal', required: false, gating: true, zeroExcludes: true },
  { name: 'currency', column: 'currency', kind: 'currency', required: false, gating: true },
] as const satisfies readonly ContractField[];

/** The fields, in the contract's order: the header's, the COPY's, the exports' and the catalog's. */
export const CONTRACT_FIELDS: readonly (ContractField & { name: FieldName })[] = TABLE;

export type FieldName = (typeof TABLE)[number]['name'];
export type GatingFieldName = Extract<(typeof TABLE)[number], { gating: true }>['name'];

/** The four fields a row needs to contribute to the metrics, in the contract's order. */
export const GATING_FIELDS = CONTRACT_FIELDS.filter((f): f is ContractField & { name: GatingFieldName } => f.gating);

/**
 * Every code a row error can have, in the order the API reference lists them; `note` is shown
 * there beside the code. Cell codes name their field; row and file codes have field `*`, except
 * `missing_column`, which names the missing column.
 */
export const ROW_ERROR_CODES = [
  { code: 'required', fix: 'Fill the cell: customer may not be empty.' }, // a required field's cell is empty
  { code: 'not_a_date', fix: 'Write a real calendar date as YYYY-MM-DD (2026-02-28, not 2026-02-30 or 28/02/2026).' },
  { code: 'not_a_number', fix: 'Write a plain decimal with at most two decimals and a point: 1234.50 (no thousands separator, comma or exponent).' },
  { code: 'negative', fix: 'Amounts are 0 or more: write a refund or credit as its own contract, or leave it out.' },
  { code: 'not_a_currency', fix: 'Use the ISO 4217 code in use, three upper-case letters: EUR, USD, GBP.' },
  { code: 'too_long', fix: 'Shorten the text to the field\'s limit (200 characters).' },
  { code: 'duplicate', fix: 'Give each row its own contractId: the later of two rows with one contractId is refused.' },
  { code: 'end_before_start', fix: 'Check the two dates: endDate may not be before startDate.' },
  { code: 'missing_column', fix: 'Add the column to the header (names match whatever their case and spaces).' },
  { code: 'malformed_row', fix: 'Give the row as many cells as the header, and close every quoted cell.' },
  { code: 'empty_file', fix: 'Send a file with a header and rows.' },
  { code: 'not_utf8', fix: 'Save the file as UTF-8 (spreadsheets: "CSV UTF-8").' },
  { code: 'row_too_long', note: 'a record over 1 MiB; reading goes on with the next', fix: 'Look for an unclosed quote that swallowed the following lines.' },
  { code: 'invalid_character', note: 'a NUL in a cell', fix: 'Remove the NUL character (U+0000): no text can hold it.' },
] as const satisfies readonly { code: string; note?: string; fix: string }[];

export type RowErrorCode = (typeof ROW_ERROR_CODES)[number]['code'];

/** A problem of an uploaded file: `row` as a spreadsheet counts it (the header is row 1). */
export type RowError = { row: number; field: string; code: RowErrorCode; message: string };
