// The contract row (contract "Contract rows (CSV)"): its columns, their rules and error codes,
// and the COPY row it becomes. Kept allocation-light: it runs once per row.
import type { BinaryCopyWriter } from './binaryCopy.ts';
import { dayNumber, isCalendarDate, monthNumber } from './calendar.ts';
import type { Tally, TalliedRow } from './tally.ts';

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
const digit = (value: string, i: number) => value.charCodeAt(i) - 48;
const isDigit = (value: string, i: number) => value.charCodeAt(i) - 48 >>> 0 < 10;
const DATE_DIGITS = [0, 1, 2, 3, 5, 6, 8, 9];

/** A date: its day number (days since 1970-01-01) and month number (year × 12 + month − 1). */
type ReadDate = { day: number; month: number };

/** Reads a real calendar date YYYY-MM-DD by arithmetic into `into`; false if it is not one. */
function readDate(value: string, into: ReadDate): boolean {
  if (value.length !== 10 || value.charCodeAt(4) !== 45 || value.charCodeAt(7) !== 45) return false;
  for (const i of DATE_DIGITS) if (!isDigit(value, i)) return false;
  const year = digit(value, 0) * 1000 + digit(value, 1) * 100 + digit(value, 2) * 10 + digit(value, 3);
  const month = digit(value, 5) * 10 + digit(value, 6);
  const day = digit(value, 8) * 10 + digit(value, 9);
  if (!isCalendarDate(year, month, day)) return false;
  into.day = dayNumber(year, month, day);
  into.month = monthNumber(year, month);
  return true;
}

const NOT_A_NUMBER = -1;
const NEGATIVE = -2;
/**
 * An amount as the contract allows it (-?, 1 to 18 digits, optionally `.` and 1 or 2 digits):
 * its cents (inexact past 2^53: the tally checks), or NOT_A_NUMBER, or NEGATIVE for a valid
 * negative one.
 */
function readAmount(value: string): number {
  const negative = value.charCodeAt(0) === 45;
  let i = negative ? 1 : 0;
  let whole = 0;
  const start = i;
  while (i < value.length && isDigit(value, i)) whole = whole * 10 + digit(value, i++);
  const digits = i - start;
  if (digits < 1 || digits > 18) return NOT_A_NUMBER;
  let fraction = 0;
  if (i < value.length) {
    const decimals = value.length - i - 1;
    if (value.charCodeAt(i) !== 46 || decimals < 1 || decimals > 2 || !isDigit(value, i + 1) || (decimals === 2 && !isDigit(value, i + 2))) return NOT_A_NUMBER;
    fraction = digit(value, i + 1) * 10 + (decimals === 2 ? digit(value, i + 2) : 0);
  }
  return negative ? NEGATIVE : whole * 100 + fraction;
}

// Characters, not UTF-16 units, and only counted when the cheap length says it may be too long.
const tooLong = (value: string) => value.length > MAX_TEXT && [...value].length > MAX_TEXT;

/** The COPY columns, in the order the validator writes them. */
export const COPY_COLUMNS = 'version_id, row_number, contract_id, customer, product, start_date, end_date, amount, currency';
const COPY_FIELDS = 9;

export class RowValidator {
  private readonly map: ColumnMap;
  private readonly width: number;
  private readonly versionId: Buffer;
  private readonly report: (error: RowError) => void;
  private readonly copy: BinaryCopyWriter;
  private readonly tally: Tally | undefined;
  /** Reused for every row: the tally reads it at once. */
  private readonly read: TalliedRow = {
    contractId: null, customer: '', product: null, startDay: NaN, startMonth: 0, endDay: NaN, endMonth: 0, cents: NaN, currency: null,
  };
  private row = 0;
  private valid = true;
  private readonly start: ReadDate = { day: 0, month: 0 };
  private readonly end: ReadDate = { day: 0, month: 0 };
  /**
   * Set once the file is known to hold a NUL byte: until then no cell is searched for one. (No
   * text column can store U+0000: it is reported, never sent to PostgreSQL.)
   */
  mayHoldNul = false;
  /** The current row's customer held a NUL (reported as such, not as missing). */
  private nulCustomer = false;

  constructor(
    map: ColumnMap,
    width: number,
    versionId: string,
    out: { report: (error: RowError) => void; copy: BinaryCopyWriter; tally?: Tally | undefined },
  ) {
    this.map = map;
    this.width = width;
    this.versionId = Buffer.from(versionId, 'utf8');
    this.report = out.report;
    this.copy = out.copy;
    this.tally = out.tally;
  }

  /** The cell's trimmed text; null when absent, or when it holds a NUL (then reported). */
  private cell(cells: string[], column: Column): string | null {
    const i = this.map[column];
    if (i < 0) return null;
    const value = cells[i]!.trim();
    if (value === '') return null;
    if (this.mayHoldNul && value.includes('\0')) {
      this.fail(column, 'invalid_character', `${column} holds the NUL character (U+0000), which cannot be stored.`);
      if (column === 'customer') this.nulCustomer = true;
      return null;
    }
    return value;
  }

  private fail(field: Column, code: string, message: string): void {
    this.valid = false;
    this.report({ row: this.row, field, code, message });
  }

  /**
   * Checks a record, reports its problems and writes it to COPY (invalid cells as NULL: a file with
   * any error is rolled back, but its rows are stored until then for the duplicate check). A
   * record with the wrong number of cells is reported and not written.
   */
  check(cells: string[], row: number): void {
    if (cells.length !== this.width) {
      this.report({ row, field: '*', code: 'malformed_row', message: `Row ${row} has ${cells.length} cells; the header has ${this.width}.` });
      return;
    }
    this.row = row;
    this.valid = true;
    this.nulCustomer = false;
    const read = this.read;

    let contractId = this.cell(cells, 'contractId');
    if (contractId !== null && tooLong(contractId)) {
      this.fail('contractId', 'too_long', `contractId is longer than ${MAX_TEXT} characters.`);
      contractId = null;
    }
    let customer = this.cell(cells, 'customer');
    if (customer === null) {
      if (!this.nulCustomer) this.fail('customer', 'required', 'customer is required.');
    } else if (tooLong(customer)) {
      this.fail('customer', 'too_long', `customer is longer than ${MAX_TEXT} characters.`);
      customer = null;
    }
    let product = this.cell(cells, 'product');
    if (product !== null && tooLong(product)) {
      this.fail('product', 'too_long', `product is longer than ${MAX_TEXT} characters.`);
      product = null;
    }
    let startDate = this.cell(cells, 'startDate');
    const hasStart = startDate !== null && readDate(startDate, this.start);
    if (startDate !== null && !hasStart) {
      this.fail('startDate', 'not_a_date', `startDate ${JSON.stringify(startDate)} is not a date YYYY-MM-DD.`);
      startDate = null;
    }
    let endDate = this.cell(cells, 'endDate');
    const hasEnd = endDate !== null && readDate(endDate, this.end);
    if (endDate !== null && !hasEnd) {
      this.fail('endDate', 'not_a_date', `endDate ${JSON.stringify(endDate)} is not a date YYYY-MM-DD.`);
      endDate = null;
    }
    if (hasStart && hasEnd && this.end.day < this.start.day) {
      this.fail('endDate', 'end_before_start', `endDate ${endDate} is before startDate ${startDate}.`);
    }
    let amount = this.cell(cells, 'amount');
    let cents = NaN;
    if (amount !== null) {
      const read = readAmount(amount);
      if (read === NOT_A_NUMBER) {
        this.fail('amount', 'not_a_number', `amount ${JSON.stringify(amount)} is not a decimal number with at most 2 decimals.`);
        amount = null;
      } else if (read === NEGATIVE) {
        this.fail('amount', 'negative', `amount ${amount} is negative.`);
        amount = null;
      } else cents = read;
    }
    let currency = this.cell(cells, 'currency');
    if (currency !== null && !currencies.has(currency)) {
      this.fail('currency', 'not_a_currency', `currency ${JSON.stringify(currency)} is not an ISO 4217 currency code in use.`);
      currency = null;
    }

    if (this.tally) {
      if (contractId !== null) this.tally.addContractId(contractId);
      if (this.valid) {
        read.contractId = contractId;
        read.customer = customer!;
        read.product = product;
        read.startDay = hasStart ? this.start.day : NaN;
        read.startMonth = this.start.month;
        read.endDay = hasEnd ? this.end.day : NaN;
        read.endMonth = this.end.month;
        read.cents = cents;
        read.currency = currency;
        this.tally.add(read);
      }
    }
    const copy = this.copy;
    const textLength = (contractId?.length ?? 0) + (customer?.length ?? 0) + (product?.length ?? 0);
    copy.row(COPY_FIELDS, 128 + this.versionId.length + 3 * textLength);
    copy.bytes(this.versionId);
    copy.int8(row);
    copy.text(contractId);
    copy.text(customer ?? '');
    copy.text(product);
    copy.date(hasStart ? this.start.day : NaN);
    copy.date(hasEnd ? this.end.day : NaN);
    copy.numeric(amount);
    copy.text(currency);
  }
}
