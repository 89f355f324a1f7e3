// Generated contract files for tests and benchmarks: deterministic, realistic spread of
// customers, products, currencies and terms; optionally every Nth row broken.
const PRODUCTS = ['Starter', 'Pro', 'Team', 'Enterprise', 'Support', 'Training'];
const CURRENCIES = ['EUR', 'USD', 'GBP', 'CHF'];
export const CONTRACT_HEADER = 'contractId,customer,product,startDate,endDate,amount,currency\n';

const pad = (n: number) => String(n).padStart(2, '0');

/** CSV text for rows [from, to), in blocks of about 64 KiB. */
export function* contractBlocks(from: number, to: number, options: { badEvery?: number } = {}): Generator<string> {
  let block = '';
  for (let i = from; i < to; i++) {
    const year = 2020 + (i % 6);
    const month = 1 + (i % 12);
    const day = 1 + (i % 28);
    const months = 1 + (i % 36);
    const endYear = year + Math.floor((month - 1 + months) / 12);
    const endMonth = ((month - 1 + months) % 12) + 1;
    const amount = `${(i % 9973) + 10}.${pad(i % 100)}`;
    const bad = options.badEvery !== undefined && i % options.badEvery === options.badEvery - 1;
    block +=
      `C${i},Customer ${i % 50_000},${PRODUCTS[i % PRODUCTS.length]},${year}-${pad(month)}-${pad(day)},` +
      `${endYear}-${pad(endMonth)}-${pad(Math.min(day, 28))},${bad ? 'n/a' : amount},${CURRENCIES[i % CURRENCIES.length]}\n`;
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
