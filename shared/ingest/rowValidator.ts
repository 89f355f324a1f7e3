// The contract row's checks (../shared/spec/contract.md, "Contract rows (CSV)"), field by field as
// shared/contract/fields.ts lists them, and the COPY row each record becomes. It runs once per
// row, so it is kept allocation-light: what the table says is turned into arrays indexed by the
// field's position once, when the module loads, and each cell is checked by its field's kind on
// its UTF-8 bytes (csvRecords.ts): a text cell's bytes go to COPY as they are, and a cell becomes
// a string only to be quoted in an error's message.
import { CONTRACT_FIELDS, type FieldKind, type RowError, type RowErrorCode } from '../contract/fields.ts';
import type { BinaryCopyWriter } from './binaryCopy.ts';
import type { Cells } from './csvRecords.ts';
import { dayNumber, isCalendarDate } from '../figures/calendar.ts';
import { bare, characters, trim } from './cellBytes.ts';
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
for (const code of Intl.supportedValuesOf('currency')) CURRENCIES[currencyIndex(Buffer.from(code), 0)] = 1;
const isUpper = (c: number) => c - 65 >>> 0 < 26;

/** `b[start, end)` is an ISO 4217 code in use: its currencyIndex, else -1. */
function readCurrency(b: Uint8Array, start: number, end: number): number {
  if (end - start !== 3 || !isUpper(b[start]!) || !isUpper(b[start + 1]!) || !isUpper(b[start + 2]!)) return -1;
  const index = currencyIndex(b, start);
  return CURRENCIES[index] === 1 ? index : -1;
}

const digit = (b: Uint8Array, i: number) => b[i]! - 48;
const isDigit = (b: Uint8Array, i: number) => b[i]! - 48 >>> 0 < 10;

/** A date: its day number (days since 1970-01-01). */
type ReadDate = { day: number };

/** Reads a real calendar date YYYY-MM-DD from `b[s, end)` by arithmetic into `into`; false if it is not one. */
function readDate(b: Uint8Array, s: number, end: number, into: ReadDate): boolean {
  if (end - s !== 10 || b[s + 4] !== 45 || b[s + 7] !== 45) return false;
  const y0 = digit(b, s);
  const y1 = digit(b, s + 1);
  const y2 = digit(b, s + 2);
  const y3 = digit(b, s + 3);
  const m0 = digit(b, s + 5);
  const m1 = digit(b, s + 6);
  const d0 = digit(b, s + 8);
  const d1 = digit(b, s + 9);
  // Taken as unsigned, a byte below '0' is above 9 too.
  if (y0 >>> 0 > 9 || y1 >>> 0 > 9 || y2 >>> 0 > 9 || y3 >>> 0 > 9 || m0 >>> 0 > 9 || m1 >>> 0 > 9 || d0 >>> 0 > 9 || d1 >>> 0 > 9) return false;
  const year = y0 * 1000 + y1 * 100 + y2 * 10 + y3;
  const month = m0 * 10 + m1;
  const day = d0 * 10 + d1;
  if (!isCalendarDate(year, month, day)) return false;
  into.day = dayNumber(year, month, day);
  return true;
}

const NOT_A_NUMBER = -1;
const NEGATIVE = -2;
/**
 * An amount `b[start, end)` as the contract allows it (-?, 1 to 18 digits, optionally `.` and 1
 * or 2 digits): its cents (inexact past 2^53: the tally checks), or NOT_A_NUMBER, or NEGATIVE for
 * a valid negative one.
 */
function readAmount(b: Uint8Array, start: number, end: number): number {
  const negative = b[start] === 45;
  let i = negative ? start + 1 : start;
  let whole = 0;
  const first = i;
  while (i < end && isDigit(b, i)) whole = whole * 10 + digit(b, i++);
  const digits = i - first;
  if (digits < 1 || digits > 18) return NOT_A_NUMBER;
  let fraction = 0;
  if (i < end) {
    const decimals = end - i - 1;
    if (b[i] !== 46 || decimals < 1 || decimals > 2 || !isDigit(b, i + 1) || (decimals === 2 && !isDigit(b, i + 2))) return NOT_A_NUMBER;
    fraction = digit(b, i + 1) * 10 + (decimals === 2 ? digit(b, i + 2) : 0);
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
    startDay: NaN, endDay: NaN, cents: NaN, currency: -1,
  };
  private row = 0;
  private valid = true;
  // The current row, by field position: each cell's bytes in the record's buffer, trimmed, as
  // [starts[f], ends[f]) (starts[f] -1 when absent or invalid), and what was read of dates (day
  // NaN when absent or invalid), decimals (cents, NaN likewise) and currencies (-1 likewise).
  private bytes: Buffer = Buffer.alloc(0);
  private readonly starts = new Int32Array(FIELD_COUNT);
  private readonly ends = new Int32Array(FIELD_COUNT);
  private readonly dates: ReadDate[] = FIELDS.map(() => ({ day: NaN }));
  private readonly cents = new Float64Array(FIELD_COUNT);
  private readonly currencies = new Int32Array(FIELD_COUNT);
  /** Where each text field's bytes start and end in the COPY buffer, by field position (2f, 2f + 1). */
  private readonly spans = new Int32Array(2 * FIELD_COUNT);
  private readonly trimmed = new Int32Array(2);
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

  /** Reports a problem of the row's field (its value is still stored). */
  private fail(field: number, code: RowErrorCode, message: string): void {
    this.valid = false;
    this.report({ row: this.row, field: NAMES[field]!, code, message });
  }

  /** Reports a problem of the field's value, which is stored as NULL (empty if required). */
  private reject(field: number, code: RowErrorCode, message: string): void {
    this.fail(field, code, message);
    this.starts[field] = -1;
  }

  /** Field f's trimmed cell as text (for a message). */
  private text(f: number): string {
    return this.bytes.toString('utf8', this.starts[f]!, this.ends[f]!);
  }

  /**
   * Checks a record, reports its problems and writes it to COPY (invalid cells as NULL: a file with
   * any error is rolled back, but its rows are stored until then for the duplicate check). A
   * record with the wrong number of cells is reported and not written.
   */
  check(cells: Cells, row: number): void {
    if (cells.count !== this.width) {
      this.report({ row, field: '*', code: 'malformed_row', message: `Row ${row} has ${cells.count} cells; the header has ${this.width}.` });
      return;
    }
    this.row = row;
    this.valid = true;
    const b = cells.bytes;
    this.bytes = b;
    const { map, starts, ends, dates, cents, currencies, trimmed } = this;
    let textBytes = 0;
    for (let f = 0; f < FIELD_COUNT; f++) {
      const kind = KIND[f]!;
      // Nothing read until the cell says otherwise.
      if (kind === DATE) dates[f]!.day = NaN;
      else if (kind === DECIMAL) cents[f] = NaN;
      else if (kind === CURRENCY) currencies[f] = -1;
      const at = map[f]!;
      let start = -1;
      let end = -1;
      if (at >= 0) {
        start = cells.starts[at]!;
        end = cells.ends[at]!;
        if (!bare(b, start, end)) {
          trim(b, start, end, trimmed);
          start = trimmed[0]!;
          end = trimmed[1]!;
        }
        if (end === start) start = end = -1;
      }
      starts[f] = start;
      ends[f] = end;
      if (start < 0) {
        if (REQUIRED[f]) this.fail(f, 'required', `${NAMES[f]} is required.`);
      } else if (this.mayHoldNul && b.subarray(start, end).includes(0)) {
        this.reject(f, 'invalid_character', `${NAMES[f]} holds the NUL character (U+0000), which cannot be stored.`);
      } else if (kind === STRING) {
        // Characters, not bytes, and only counted when the byte count says it may be too long.
        const max = MAX_LENGTH[f]!;
        if (end - start > max && characters(b, start, end) > max) this.reject(f, 'too_long', `${NAMES[f]} is longer than ${max} characters.`);
        else textBytes += end - start;
      } else if (kind === DATE) {
        const date = dates[f]!;
        if (!readDate(b, start, end, date)) {
          this.reject(f, 'not_a_date', `${NAMES[f]} ${JSON.stringify(this.text(f))} is not a date YYYY-MM-DD.`);
        } else {
          const other = NOT_BEFORE[f]!;
          // A NaN day (the other date absent or invalid) compares false. Both dates are stored: only the pair is wrong.
          if (other >= 0 && date.day < dates[other]!.day) {
            this.fail(f, 'end_before_start', `${NAMES[f]} ${this.text(f)} is before ${NAMES[other]} ${this.text(other)}.`);
          }
        }
      } else if (kind === DECIMAL) {
        const read = readAmount(b, start, end);
        if (read === NOT_A_NUMBER) {
          this.reject(f, 'not_a_number', `${NAMES[f]} ${JSON.stringify(this.text(f))} is not a decimal number with at most 2 decimals.`);
        } else if (read === NEGATIVE) {
          this.reject(f, 'negative', `${NAMES[f]} ${this.text(f)} is negative.`);
        } else cents[f] = read;
      } else {
        const index = readCurrency(b, start, end);
        if (index < 0) this.reject(f, 'not_a_currency', `${NAMES[f]} ${JSON.stringify(this.text(f))} is not an ISO 4217 currency code in use.`);
        else currencies[f] = index;
      }
    }

    // The COPY row first: the tally takes its names' bytes from it.
    const copy = this.copy;
    const spans = this.spans;
    copy.row(COPY_FIELDS, ROW_BYTES + this.versionId.length + textBytes);
    copy.bytes(this.versionId);
    copy.int8(row);
    for (let f = 0; f < FIELD_COUNT; f++) {
      const kind = KIND[f]!;
      const start = starts[f]!;
      if (kind === STRING) {
        spans[2 * f] = copy.offset + 4;
        if (start >= 0) copy.text(b, start, ends[f]!);
        // A required text column is NOT NULL: an invalid row's cell is stored empty until the rollback.
        else if (REQUIRED[f]) copy.text(b, 0, 0);
        else copy.null();
        spans[2 * f + 1] = copy.offset;
      } else if (kind === DATE) copy.date(dates[f]!.day); // NaN (NULL) when absent or invalid
      else if (start < 0) copy.null();
      else if (kind === DECIMAL) {
        // An amount's cents are exact up to 2^53 (16 digits): beyond, its digits are read again.
        if (cents[f]! <= Number.MAX_SAFE_INTEGER) copy.numericCents(cents[f]!);
        else copy.numeric(b, start, ends[f]!);
      }
      else copy.text(b, start, ends[f]!);
    }

    const tally = this.tally;
    if (tally) {
      const text = copy.buffer;
      if (UNIQUE >= 0 && starts[UNIQUE]! >= 0) tally.addContractId(text, spans[2 * UNIQUE]!, spans[2 * UNIQUE + 1]!);
      if (this.valid) {
        const read = this.read;
        const hasProduct = starts[PRODUCT]! >= 0;
        read.hasContractId = starts[CONTRACT_ID]! >= 0;
        read.text = text;
        read.customerStart = spans[2 * CUSTOMER]!;
        read.customerEnd = spans[2 * CUSTOMER + 1]!;
        read.productStart = hasProduct ? spans[2 * PRODUCT]! : -1;
        read.productEnd = hasProduct ? spans[2 * PRODUCT + 1]! : -1;
        read.startDay = dates[START_DATE]!.day;
        read.endDay = dates[END_DATE]!.day;
        read.cents = cents[AMOUNT]!;
        read.currency = currencies[CURRENCY_CODE]!;
        tally.add(read);
      }
    }
  }
}
