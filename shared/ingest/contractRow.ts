// The contract row (contract "Contract rows (CSV)"): its columns, their rules and error codes,
// and the COPY text line a row becomes. Kept allocation-light: it runs once per row.

export const COLUMNS = ['contractId', 'customer', 'product', 'startDate', 'endDate', 'amount', 'currency'] as const;
export type Column = (typeof COLUMNS)[number];
export const GATING: readonly Column[] = ['startDate', 'endDate', 'amount', 'currency'];
export const MAX_TEXT = 200;

export type RowError = { row: number; field: string; code: string; message: string };

/** Index of each known column in the file's header, -1 where absent. */
export type ColumnMap = Record<Column, number>;

export function mapHeader(header: string[]): ColumnMap {
  const names = header.map((h) => h.trim().toLowerCase());
  return Object.fromEntries(COLUMNS.map((c) => [c, names.indexOf(c.toLowerCase())])) as ColumnMap;
}

const currencies = new Set(Intl.supportedValuesOf('currency'));
const DATE = /^(\d{4})-(\d{2})-(\d{2})$/;
const AMOUNT = /^-?\d{1,18}(\.\d{1,2})?$/;

const DAYS_IN_MONTH = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];
function isRealDate(value: string): boolean {
  const m = DATE.exec(value);
  if (!m) return false;
  const year = Number(m[1]);
  const month = Number(m[2]);
  const day = Number(m[3]);
  if (month < 1 || month > 12 || day < 1) return false;
  const leap = month === 2 && year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0);
  return day <= DAYS_IN_MONTH[month - 1]! + (leap ? 1 : 0);
}

// Characters, not UTF-16 units, and only counted when the cheap length says it may be too long.
const tooLong = (value: string) => value.length > MAX_TEXT && [...value].length > MAX_TEXT;

const ESCAPES = /[\\\t\n\r]/;
function copyText(value: string): string {
  if (!ESCAPES.test(value)) return value;
  return value.replace(/[\\\t\n\r]/g, (c) => (c === '\\' ? '\\\\' : c === '\t' ? '\\t' : c === '\n' ? '\\n' : '\\r'));
}
const copyValue = (value: string | null) => (value === null ? '\\N' : copyText(value));

export type RowOutcome = {
  /** The COPY text line (with its newline). Invalid cells are written as NULL: a file with any
   *  error is rolled back, but its rows are still stored until then for the duplicate check. */
  line: string;
  valid: boolean;
};

export class RowValidator {
  private readonly map: ColumnMap;
  private readonly width: number;
  private readonly versionId: string;
  private readonly report: (error: RowError) => void;

  constructor(map: ColumnMap, width: number, versionId: string, report: (error: RowError) => void) {
    this.map = map;
    this.width = width;
    this.versionId = versionId;
    this.report = report;
  }

  private cell(cells: string[], column: Column): string | null {
    const i = this.map[column];
    if (i < 0) return null;
    const value = cells[i]!.trim();
    return value === '' ? null : value;
  }

  /** Undefined for a row with no line to store (a malformed record). */
  check(cells: string[], row: number): RowOutcome | undefined {
    if (cells.length !== this.width) {
      this.report({ row, field: '*', code: 'malformed_row', message: `Row ${row} has ${cells.length} cells; the header has ${this.width}.` });
      return undefined;
    }
    let valid = true;
    const fail = (field: Column, code: string, message: string) => {
      valid = false;
      this.report({ row, field, code, message });
    };

    let contractId = this.cell(cells, 'contractId');
    if (contractId !== null && tooLong(contractId)) {
      fail('contractId', 'too_long', `contractId is longer than ${MAX_TEXT} characters.`);
      contractId = null;
    }
    let customer = this.cell(cells, 'customer');
    if (customer === null) fail('customer', 'required', 'customer is required.');
    else if (tooLong(customer)) {
      fail('customer', 'too_long', `customer is longer than ${MAX_TEXT} characters.`);
      customer = null;
    }
    let product = this.cell(cells, 'product');
    if (product !== null && tooLong(product)) {
      fail('product', 'too_long', `product is longer than ${MAX_TEXT} characters.`);
      product = null;
    }
    let startDate = this.cell(cells, 'startDate');
    if (startDate !== null && !isRealDate(startDate)) {
      fail('startDate', 'not_a_date', `startDate ${JSON.stringify(startDate)} is not a date YYYY-MM-DD.`);
      startDate = null;
    }
    let endDate = this.cell(cells, 'endDate');
    if (endDate !== null && !isRealDate(endDate)) {
      fail('endDate', 'not_a_date', `endDate ${JSON.stringify(endDate)} is not a date YYYY-MM-DD.`);
      endDate = null;
    }
    if (startDate !== null && endDate !== null && endDate < startDate) {
      fail('endDate', 'end_before_start', `endDate ${endDate} is before startDate ${startDate}.`);
    }
    let amount = this.cell(cells, 'amount');
    if (amount !== null) {
      if (!AMOUNT.test(amount)) {
        fail('amount', 'not_a_number', `amount ${JSON.stringify(amount)} is not a decimal number with at most 2 decimals.`);
        amount = null;
      } else if (amount.charCodeAt(0) === 45 /* - */) {
        fail('amount', 'negative', `amount ${amount} is negative.`);
        amount = null;
      }
    }
    let currency = this.cell(cells, 'currency');
    if (currency !== null && !currencies.has(currency)) {
      fail('currency', 'not_a_currency', `currency ${JSON.stringify(currency)} is not an ISO 4217 currency code in use.`);
      currency = null;
    }

    const line =
      `${this.versionId}\t${row}\t${copyValue(contractId)}\t${customer === null ? '' : copyText(customer)}\t` +
      `${copyValue(product)}\t${startDate ?? '\\N'}\t${endDate ?? '\\N'}\t${amount ?? '\\N'}\t${currency ?? '\\N'}\n`;
    return { line, valid };
  }
}

export const COPY_COLUMNS = 'version_id, row_number, contract_id, customer, product, start_date, end_date, amount, currency';
