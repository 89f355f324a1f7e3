// The rows the tally counts, as the validator hands them over: packed into typed arrays, a batch
// at a time, so that a batch can go to the tally's own thread without a copy (its buffers are
// transferred, and come back to be filled again) and the tally makes no string of any name.
import { grown } from './typedArrays.ts';
import { MAX_BYTES_PER_UNIT, writeUtf8 } from './utf8Bytes.ts';
import { hash53 } from './numberSet.ts';
import { currencyIndex } from './currencies.ts';

/** A valid contract row as the validator read it: dates as day and month numbers, amount in cents. */
export type TalliedRow = {
  contractId: string | null;
  customer: string;
  product: string | null;
  startDay: number; // NaN when absent
  startMonth: number;
  endDay: number;
  endMonth: number;
  cents: number; // NaN when absent
  currency: string | null;
};

/**
 * Numbers per valid row in `rows`: contractId present (1) or not (0), start day, start month, end
 * day, end month, cents, currency (currencyIndex, -1 when absent), the customer's UTF-8 bytes and
 * the product's (-1 when absent). Their bytes follow one another in `bytes`, row by row (as UTF-8:
 * half the room of UTF-16 for the Latin names most files hold, in the batch and in the tally).
 */
export const ROW_FIELDS = 9;

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

  /** A stored row's contractId, valid or not. */
  addContractId(contractId: string): void {
    const b = this.batch;
    if (b.idCount === b.ids.length) b.ids = grown(b.ids, b.idCount + 1);
    b.ids[b.idCount++] = hash53(contractId);
  }

  add(row: TalliedRow): void {
    const b = this.batch;
    const at = b.rowCount * ROW_FIELDS;
    if (at + ROW_FIELDS > b.rows.length) b.rows = grown(b.rows, at + ROW_FIELDS);
    const { customer, product } = row;
    // Room for the names at their longest (3 bytes a unit), then their bytes.
    const most = b.byteCount + MAX_BYTES_PER_UNIT * (customer.length + (product === null ? 0 : product.length));
    if (most > b.bytes.length) b.bytes = grown(b.bytes, most);
    const customerEnd = writeUtf8(customer, b.bytes, b.byteCount);
    const productEnd = product === null ? customerEnd : writeUtf8(product, b.bytes, customerEnd);
    const rows = b.rows;
    rows[at] = row.contractId === null ? 0 : 1;
    rows[at + 1] = row.startDay;
    rows[at + 2] = row.startMonth;
    rows[at + 3] = row.endDay;
    rows[at + 4] = row.endMonth;
    rows[at + 5] = row.cents;
    rows[at + 6] = row.currency === null ? -1 : currencyIndex(row.currency);
    rows[at + 7] = customerEnd - b.byteCount;
    rows[at + 8] = product === null ? -1 : productEnd - customerEnd;
    b.rowCount++;
    b.byteCount = productEnd;
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
