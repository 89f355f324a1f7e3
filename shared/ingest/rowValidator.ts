// The contract row's checks (../shared/spec/contract.md, "Contract rows (CSV)"), field by field as
// shared/contract/fields.ts lists them, and the COPY row each record becomes. It runs once per
// row, so it is kept allocation-light: what the table says is turned into arrays indexed by the
// field's position once, when the module loads, and each cell is checked by its field's kind.
import { CONTRACT_FIELDS, type FieldKind, type RowError, type RowErrorCode } from '../contract/fields.ts';
import type { BinaryCopyWriter } from './binaryCopy.ts';
import { dayNumber, isCalendarDate, monthNumber } from './calendar.ts';
import { currencyIndex } from './currencies.ts';
import type { TalliedRow } from './tallyBatch.ts';
import type { TallyFeed } from './tallyFeed.ts';

const FIELDS = CONTRACT_FIELDS;
const FIELD_COUNT = FIELDS.length;
const NAMES: readonly string[] = FIELDS.map((f) => f.name);
const position = (name: string) => {
  const i = NAMES.indexOf(name);
  if (i < 0) throw new Error(`the contract has no field ${name}`);
  return i;
};

// Kinds as small integers, for a switch per cell.
const STRING = 0;
const DATE = 1;
const DECIMAL = 2;
const CURRENCY = 3;
const KIND_NUMBERS: Record<FieldKind, number> = { string: STRING, date: DATE, decimal: DECIMAL, currency: CURRENCY };
const KIND = Uint8Array.from(FIELDS, (f) => KIND_NUMBERS[f.kind]);
const REQUIRED = FIELDS.map((f) => f.required);
const MAX_LENGTH = Int32Array.from(FIELDS, (f) => (f.kind === 'string' ? f.maxLength : 0));
/** Per field: the position of the field it may not come before (`end_before_start`), or -1. */
const NOT_BEFORE = Int32Array.from(FIELDS, (f, i) => {
  if (f.notBefore === undefined) return -1;
  const other = position(f.notBefore);
  // Compared with the value read earlier in the same row.
  if (other >= i) throw new Error(`${f.name} may only be compared with a field listed before it`);
  return other;
});
/** The field whose values are unique within a file (contractId): the tally hashes them. */
const UNIQUE = FIELDS.findIndex((f) => f.unique === true);
// What the tally reads of a valid row.
const CONTRACT_ID = position('contractId');
const CUSTOMER = position('customer');
const PRODUCT = position('product');
const START_DATE = position('startDate');
const END_DATE = position('endDate');
const AMOUNT = position('amount');
const CURRENCY_CODE = position('currency');
// The tally reads these fields' bytes back from the COPY row: text fields.
for (const f of [CONTRACT_ID, CUSTOMER, PRODUCT, ...(UNIQUE < 0 ? [] : [UNIQUE])]) {
  if (FIELDS[f]!.kind !== 'string') throw new Error(`the tally reads ${NAMES[f]} as text`);
}

/** The fields without which the header cannot be read. */
export const REQUIRED_COLUMNS: readonly string[] = FIELDS.filter((f) => f.required).map((f) => f.name);

/** Index of each field's column in the file's header (by the field's position), -1 where absent. */
export type ColumnMap = Int32Array;

export function mapHeader(header: string[]): ColumnMap {
  const names = header.map((h) => h.trim().toLowerCase());
  return Int32Array.from(FIELDS, (f) => names.indexOf(f.name.toLowerCase()));
}

/** The required fields the header has no column for. */
export function missingColumns(map: ColumnMap): string[] {
  return NAMES.filter((_, i) => REQUIRED[i] && map[i]! < 0);
}

/** ISO 4217 codes in use, by currencyIndex: looked up by arithmetic on three letters, not by hashing a new string every row. */
const CURRENCIES = new Uint8Array(1 << 15);
for (const code of Intl.supportedValuesOf('currency')) CURRENCIES[currencyIndex(code)] = 1;
const isUpper = (value: string, i: number) => value.charCodeAt(i) - 65 >>> 0 < 26;
const isCurrency = (value: string) => value.length === 3 && isUpper(value, 0) && isUpper(value, 1) && isUpper(value, 2) && CURRENCIES[currencyIndex(value)] === 1;

/** A printable ASCII character: never white space. */
const printable = (c: number) => c > 32 && c < 127;

/** The cell without the white space around it: most cells have none, which their two ends tell without a call. */
export function trimmed(cell: string): string {
  const n = cell.length;
  return n > 0 && printable(cell.charCodeAt(0)) && printable(cell.charCodeAt(n - 1)) ? cell : cell.trim();
}

const digit = (value: string, i: number) => value.charCodeAt(i) - 48;
const isDigit = (value: string, i: number) => value.charCodeAt(i) - 48 >>> 0 < 10;

/** A date: its day number (days since 1970-01-01) and month number (year × 12 + month − 1). */
type ReadDate = { day: number; month: number };

/** Reads a real calendar date YYYY-MM-DD by arithmetic into `into`; false if it is not one. */
function readDate(value: string, into: ReadDate): boolean {
  if (value.length !== 10 || value.charCodeAt(4) !== 45 || value.charCodeAt(7) !== 45) return false;
  const y0 = digit(value, 0);
  const y1 = digit(value, 1);
  const y2 = digit(value, 2);
  const y3 = digit(value, 3);
  const m0 = digit(value, 5);
  const m1 = digit(value, 6);
  const d0 = digit(value, 8);
  const d1 = digit(value, 9);
  // Taken as unsigned, a character below '0' is above 9 too.
  if (y0 >>> 0 > 9 || y1 >>> 0 > 9 || y2 >>> 0 > 9 || y3 >>> 0 > 9 || m0 >>> 0 > 9 || m1 >>> 0 > 9 || d0 >>> 0 > 9 || d1 >>> 0 > 9) return false;
  const year = y0 * 1000 + y1 * 100 + y2 * 10 + y3;
  const month = m0 * 10 + m1;
  const day = d0 * 10 + d1;
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


/** The COPY columns, in the order the validator writes them. */
export const COPY_COLUMNS = ['version_id', 'row_number', ...FIELDS.map((f) => f.column)].join(', ');
const COPY_FIELDS = FIELD_COUNT + 2;
/**
 * Room a COPY row needs besides the version id and the text of its string fields: the field
 * count, each field's length, the row number and each fixed-size value (a date: 4 bytes; a
 * numeric of up to 20 digits: 8 bytes of header and 6 base-10000 digits; a currency: 3 letters).
 */
const VALUE_BYTES: Record<FieldKind, number> = { string: 0, date: 4, decimal: 20, currency: 3 };
const ROW_BYTES = 2 + 4 + 12 + FIELDS.reduce((bytes, f) => bytes + 4 + VALUE_BYTES[f.kind], 0);

export class RowValidator {
  private readonly map: ColumnMap;
  private readonly width: number;
  private readonly versionId: Buffer;
  private readonly report: (error: RowError) => void;
  private readonly copy: BinaryCopyWriter;
  private readonly tally: TallyFeed | undefined;
  /** Reused for every row: the tally's feed packs it at once. */
  private readonly read: TalliedRow = {
    hasContractId: false, text: new Uint8Array(0), customerStart: 0, customerEnd: 0, productStart: -1, productEnd: -1,
    startDay: NaN, startMonth: 0, endDay: NaN, endMonth: 0, cents: NaN, currency: null,
  };
  private row = 0;
  private valid = true;
  // The current row, by field position: each cell's text (null when absent or invalid), and what
  // was read of dates (day NaN when absent or invalid) and decimals (cents, NaN likewise).
  private readonly values: (string | null)[] = FIELDS.map(() => null);
  private readonly dates: ReadDate[] = FIELDS.map(() => ({ day: NaN, month: 0 }));
  private readonly cents = new Float64Array(FIELD_COUNT);
  /** Where each text field's UTF-8 bytes start and end in the COPY buffer, by field position (2f, 2f + 1). */
  private readonly spans = new Int32Array(2 * FIELD_COUNT);
  /**
   * Set once the file is known to hold a NUL byte: until then no cell is searched for one. (No
   * text column can store U+0000: it is reported, never sent to PostgreSQL.)
   */
  mayHoldNul = false;

  constructor(
    map: ColumnMap,
    width: number,
    versionId: string,
    out: { report: (error: RowError) => void; copy: BinaryCopyWriter; tally?: TallyFeed | undefined },
  ) {
    this.map = map;
    this.width = width;
    this.versionId = Buffer.from(versionId, 'utf8');
    this.report = out.report;
    this.copy = out.copy;
    this.tally = out.tally;
  }

  private fail(field: number, code: RowErrorCode, message: string): void {
    this.valid = false;
    this.report({ row: this.row, field: NAMES[field]!, code, message });
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
    const { map, values, dates, cents } = this;
    let textLength = 0;
    for (let f = 0; f < FIELD_COUNT; f++) {
      const kind = KIND[f]!;
      if (kind === DATE) dates[f]!.day = NaN;
      else if (kind === DECIMAL) cents[f] = NaN;
      const at = map[f]!;
      let value: string | null = at < 0 ? null : trimmed(cells[at]!);
      if (value === '') value = null;
      if (value === null) {
        if (REQUIRED[f]) this.fail(f, 'required', `${NAMES[f]} is required.`);
      } else if (this.mayHoldNul && value.includes('\0')) {
        this.fail(f, 'invalid_character', `${NAMES[f]} holds the NUL character (U+0000), which cannot be stored.`);
        value = null;
      } else if (kind === STRING) {
        // Characters, not UTF-16 units, and only counted when the cheap length says it may be too long.
        const max = MAX_LENGTH[f]!;
        if (value.length > max && [...value].length > max) {
          this.fail(f, 'too_long', `${NAMES[f]} is longer than ${max} characters.`);
          value = null;
        } else textLength += value.length;
      } else if (kind === DATE) {
        const date = dates[f]!;
        if (!readDate(value, date)) {
          this.fail(f, 'not_a_date', `${NAMES[f]} ${JSON.stringify(value)} is not a date YYYY-MM-DD.`);
          value = null;
        } else {
          const other = NOT_BEFORE[f]!;
          // A NaN day (the other date absent or invalid) compares false.
          if (other >= 0 && date.day < dates[other]!.day) {
            this.fail(f, 'end_before_start', `${NAMES[f]} ${value} is before ${NAMES[other]} ${values[other]}.`);
          }
        }
      } else if (kind === DECIMAL) {
        const read = readAmount(value);
        if (read === NOT_A_NUMBER) {
          this.fail(f, 'not_a_number', `${NAMES[f]} ${JSON.stringify(value)} is not a decimal number with at most 2 decimals.`);
          value = null;
        } else if (read === NEGATIVE) {
          this.fail(f, 'negative', `${NAMES[f]} ${value} is negative.`);
          value = null;
        } else cents[f] = read;
      } else if (!isCurrency(value)) {
        this.fail(f, 'not_a_currency', `${NAMES[f]} ${JSON.stringify(value)} is not an ISO 4217 currency code in use.`);
        value = null;
      }
      values[f] = value;
    }

    // The COPY row first: the tally takes its names' bytes from it.
    const copy = this.copy;
    const spans = this.spans;
    copy.row(COPY_FIELDS, ROW_BYTES + this.versionId.length + 3 * textLength);
    copy.bytes(this.versionId);
    copy.int8(row);
    for (let f = 0; f < FIELD_COUNT; f++) {
      const kind = KIND[f]!;
      if (kind === STRING) {
        // A required text column is NOT NULL: an invalid row's cell is stored empty until the rollback.
        spans[2 * f] = copy.offset + 4;
        copy.text(values[f] ?? (REQUIRED[f] ? '' : null));
        spans[2 * f + 1] = copy.offset;
      } else if (kind === DATE) copy.date(dates[f]!.day);
      else if (kind === DECIMAL) copy.numeric(values[f]!);
      else copy.text(values[f]!);
    }

    const tally = this.tally;
    if (tally) {
      const text = copy.buffer;
      if (UNIQUE >= 0 && values[UNIQUE] !== null) tally.addContractId(text, spans[2 * UNIQUE]!, spans[2 * UNIQUE + 1]!);
      if (this.valid) {
        const read = this.read;
        const hasProduct = values[PRODUCT] !== null;
        read.hasContractId = values[CONTRACT_ID] !== null;
        read.text = text;
        read.customerStart = spans[2 * CUSTOMER]!;
        read.customerEnd = spans[2 * CUSTOMER + 1]!;
        read.productStart = hasProduct ? spans[2 * PRODUCT]! : -1;
        read.productEnd = hasProduct ? spans[2 * PRODUCT + 1]! : -1;
        read.startDay = dates[START_DATE]!.day;
        read.startMonth = dates[START_DATE]!.month;
        read.endDay = dates[END_DATE]!.day;
        read.endMonth = dates[END_DATE]!.month;
        read.cents = cents[AMOUNT]!;
        read.currency = values[CURRENCY_CODE]!;
        tally.add(read);
      }
    }
  }
}
