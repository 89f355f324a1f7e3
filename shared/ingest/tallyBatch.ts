// The rows the tally counts, as the validator hands them over: packed into typed arrays, a batch
// at a time, so that a batch can go to the tally's own thread without a copy (its buffers are
// transferred, and come back to be filled again) and the tally makes no string of any name.
import { grown } from '../platform/typedArrays.ts';
import { hash53 } from './numberSet.ts';

/**
 * A valid contract row as the validator read it: its names as spans of UTF-8 bytes in `text` (the
 * COPY row the validator wrote, so that a name is encoded once), dates as day numbers, amount in
 * cents.
 */
export type TalliedRow = {
  hasContractId: boolean;
  text: Uint8Array;
  customerStart: number;
  customerEnd: number;
  productStart: number; // both -1 when absent
  productEnd: number;
  startDay: number; // NaN when absent
  endDay: number;
  cents: number; // NaN when absent
  currency: number; // its currencyIndex (currencies.ts), -1 when absent
};

/**
 * Numbers per valid row in `rows`: contractId present (1) or not (0), start day, end day, cents,
 * currency (currencyIndex, -1 when absent), the customer's UTF-8 bytes and
 * the product's (-1 when absent). Their bytes follow one another in `bytes`, row by row (as UTF-8:
 * half the room of UTF-16 for the Latin names most files hold, in the batch and in the tally).
 */
export const ROW_FIELDS = 7;
/** Where each number is in a row of `rows` (0: contractId present). */
export const START_DAY = 1;
export const END_DAY = 2;
export const CENTS = 3;
export const CURRENCY = 4;
export const CUSTOMER_BYTES = 5;
export const PRODUCT_BYTES = 6;

export type TallyBatch = {
  /** The contractId hashes (hash53) of every stored row, valid or not: for the duplicate check. */
  ids: Float64Array<ArrayBuffer>;
  idCount: number;
  rows: Float64Array<ArrayBuffer>;
  rowCount: number;
  bytes: Uint8Array<ArrayBuffer>;
  byteCount: number;
};

export function emptyBatch(): TallyBatch {
  return { ids: new Float64Array(4096), idCount: 0, rows: new Float64Array(4096 * ROW_FIELDS), rowCount: 0, bytes: new Uint8Array(128 * 1024), byteCount: 0 };
}

/** The buffers a batch holds, to transfer it. */
export const buffersOf = (batch: TallyBatch): ArrayBuffer[] => [batch.ids.buffer, batch.rows.buffer, batch.bytes.buffer];

/** Fills a batch, row by row. */
export class TallyBatchWriter {
  batch: TallyBatch;

  constructor(batch: TallyBatch = emptyBatch()) {
    this.batch = batch;
  }

  /** Rows in the batch (the stored ones, valid or not, and the valid ones). */
  get size(): number {
    return Math.max(this.batch.idCount, this.batch.rowCount);
  }

  /** A stored row's contractId, valid or not: its UTF-8 bytes `text[start, end)`. */
  addContractId(text: Uint8Array, start: number, end: number): void {
    const b = this.batch;
    if (b.idCount === b.ids.length) b.ids = grown(b.ids, b.idCount + 1);
    b.ids[b.idCount++] = hash53(text, start, end);
  }

  add(row: TalliedRow): void {
    const b = this.batch;
    const at = b.rowCount * ROW_FIELDS;
    if (at + ROW_FIELDS > b.rows.length) b.rows = grown(b.rows, at + ROW_FIELDS);
    const { text, customerStart, customerEnd, productStart, productEnd } = row;
    const customerBytes = customerEnd - customerStart;
    const productBytes = productStart < 0 ? -1 : productEnd - productStart;
    const end = b.byteCount + customerBytes + Math.max(productBytes, 0);
    if (end > b.bytes.length) b.bytes = grown(b.bytes, end);
    // Names are short: a loop copies them faster than a call to set() would.
    const bytes = b.bytes;
    let out = b.byteCount;
    for (let i = customerStart; i < customerEnd; i++) bytes[out++] = text[i]!;
    for (let i = productStart; i < productEnd; i++) bytes[out++] = text[i]!;
    const rows = b.rows;
    rows[at] = row.hasContractId ? 1 : 0;
    rows[at + START_DAY] = row.startDay;
    rows[at + END_DAY] = row.endDay;
    rows[at + CENTS] = row.cents;
    rows[at + CURRENCY] = row.currency;
    rows[at + CUSTOMER_BYTES] = customerBytes;
    rows[at + PRODUCT_BYTES] = productBytes;
    b.rowCount++;
    b.byteCount = end;
  }

  /** Hands over the batch filled so far and goes on with `next` (emptied). */
  take(next: TallyBatch): TallyBatch {
    const full = this.batch;
    next.idCount = 0;
    next.rowCount = 0;
    next.byteCount = 0;
    this.batch = next;
    return full;
  }
}
