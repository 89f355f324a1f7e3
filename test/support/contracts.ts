// Generated contract files for tests and benchmarks: deterministic, realistic spread of
// customers, products, currencies and terms; optionally every Nth row broken. The columns are the
// contract's (shared/contract/fields.ts), in its order.
import { CONTRACT_FIELDS, type FieldName } from '../../shared/contract/fields.ts';

const PRODUCTS = ['Starter', 'Pro', 'Team', 'Enterprise', 'Support', 'Training'];
const CURRENCIES = ['EUR', 'USD', 'GBP', 'CHF'];
export const CONTRACT_HEADER = `${CONTRACT_FIELDS.map((f) => f.name).join(',')}\n`;

const pad = (n: number) => String(n).padStart(2, '0');
const day = (i: number) => 1 + (i % 28);
const month = (i: number) => 1 + (i % 12);
const year = (i: number) => 2020 + (i % 6);
const termMonths = (i: number) => 1 + (i % 36);

/** Each field's cell in row i; `bad`: a row broken on purpose (its amount is not a number). */
const CELLS: Record<FieldName, (i: number, bad: boolean) => string> = {
  contractId: (i) => `C${i}`,
  customer: (i) => `Customer ${i % 50_000}`,
  product: (i) => PRODUCTS[i % PRODUCTS.length]!,
  startDate: (i) => `${year(i)}-${pad(month(i))}-${pad(day(i))}`,
  endDate: (i) => {
    const months = month(i) - 1 + termMonths(i);
    return `${year(i) + Math.floor(months / 12)}-${pad((months % 12) + 1)}-${pad(Math.min(day(i), 28))}`;
  },
  amount: (i, bad) => (bad ? 'n/a' : `${(i % 9973) + 10}.${pad(i % 100)}`),
  currency: (i) => CURRENCIES[i % CURRENCIES.length]!,
};
const cells = CONTRACT_FIELDS.map((f) => CELLS[f.name]);

/** CSV text for rows [from, to), in blocks of about 64 KiB. */
export function* contractBlocks(from: number, to: number, options: { badEvery?: number } = {}): Generator<string> {
  let block = '';
  for (let i = from; i < to; i++) {
    const bad = options.badEvery !== undefined && i % options.badEvery === options.badEvery - 1;
    let line = '';
    for (let f = 0; f < cells.length; f++) line += (f === 0 ? '' : ',') + cells[f]!(i, bad);
    block += `${line}\n`;
    if (block.length >= 65_536) {
      yield block;
      block = '';
    }
  }
  if (block) yield block;
}

export function contractsCsv(rows: number, options: { badEvery?: number } = {}): string {
  return CONTRACT_HEADER + [...contractBlocks(0, rows, options)].join('');
}
