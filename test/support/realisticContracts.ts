// Contract files shaped like the ones users export from spreadsheets, CRMs and ERPs, beside the
// simple generator (contracts.ts): company names in many scripts (accented Latin, Cyrillic, Greek,
// CJK), some long, some holding the delimiter (so quoted) or quotes (doubled inside quotes);
// optionally every field quoted and CRLF line ends; multi-year contracts; tens of thousands of
// customers with many contracts each, mostly in their own currency (hundreds of thousands at 10M
// rows). Deterministic: row i is a function of i and the options only, so any range of rows can
// be written on its own.
import { CONTRACT_FIELDS, type FieldName } from '../../shared/contract/fields.ts';

export type RealisticShape = {
  /** Every field in quotes, as many exporters write (default: only the cells that need them). */
  quoteAll?: boolean;
  /** CRLF line ends (default LF). */
  crlf?: boolean;
  /** How many customers the contracts belong to (default: one per 25 rows, at least 20,000). */
  customers?: number;
  /** Every Nth row broken on purpose (its amount is not a number). */
  badEvery?: number;
  /** The currencies customers contract in (default ten, EUR and USD the most common). */
  currencies?: readonly string[];
  /** One row in N is in a currency picked for the row, not the customer's own (default 10). */
  otherCurrencyEvery?: number;
};

/** A name for the bench's table: what the file looks like. */
export function shapeName(shape: RealisticShape): string {
  return ['realistic', shape.quoteAll ? 'all quoted' : 'quoted as needed', shape.crlf ? 'CRLF' : 'LF'].join(', ');
}

/** A well-mixed 32-bit hash of a row and a salt (murmur3's finaliser). */
function mix(i: number, salt: number): number {
  let h = (Math.imul(i, 0x9e3779b1) ^ Math.imul(salt, 0x85ebca6b)) >>> 0;
  h = Math.imul(h ^ (h >>> 16), 0x85ebca6b);
  h = Math.imul(h ^ (h >>> 13), 0xc2b2ae35);
  return (h ^ (h >>> 16)) >>> 0;
}
const pick = <T>(list: readonly T[], i: number, salt: number): T => list[mix(i, salt) % list.length]!;

const ROOTS = [
  'Müller', 'Schröder', 'Lefèvre', 'Åkesson', 'Nørgaard', 'Ibáñez', 'Gonçalves', 'Dvořák', 'Kowalczyk', 'Łukasiewicz',
  'Acme', 'Northwind', 'Contoso', 'Globex', 'Initech', 'Umbrella', 'Hooli', 'Stark', 'Wayne', 'Tyrell',
  'Ромашка', 'Северсталь', 'Газпромбанк', 'Вектор', 'Ελληνική Τεχνική', 'Αθηναϊκή', 'Θεσσαλονίκη',
  '東京海上', '三菱商事', '株式会社サクラ', '北京华为', '上海银行', '서울전자', '대한항공', 'Nguyễn Phát', 'Đông Á',
];
const KINDS = ['Logistics', 'Consulting', 'Software', 'Holdings', 'Manufacturing', 'Retail', 'Energy', 'Health', 'Media', 'Services'];
const FORMS = ['GmbH', 'GmbH & Co. KG', 'S.A.', 'S.à r.l.', 'Ltd', 'Inc.', 'LLC', 'AB', 'A/S', 'sp. z o.o.', 'ООО', 'Α.Ε.', 'K.K.', '有限公司'];
const PRODUCTS = ['Starter', 'Pro', 'Team', 'Enterprise', 'Support, Premium', 'Training & Onboarding', 'Data Platform "Plus"', 'Lizenz Basis', 'Подписка', 'サポート'];
const CURRENCIES = ['EUR', 'EUR', 'EUR', 'USD', 'USD', 'GBP', 'CHF', 'SEK', 'JPY', 'PLN'];

/** Customer k's name: the same for each of its contracts. Some hold commas, some quotes, some are long. */
function customerName(k: number): string {
  const root = pick(ROOTS, k, 1);
  const kind = pick(KINDS, k, 2);
  const form = pick(FORMS, k, 3);
  const shape = mix(k, 4) % 40;
  if (shape === 0) return `${root}, ${pick(ROOTS, k, 5)} & Partner ${form}`; // the delimiter inside
  if (shape === 1) return `${root} "${kind}" ${form}`; // quotes inside
  if (shape === 2) return `${root} ${kind} und ${pick(ROOTS, k, 6)} ${pick(KINDS, k, 7)} Beteiligungsgesellschaft für Industrie, Handel und Dienstleistungen ${form} (${k})`;
  return `${root} ${kind} ${form} ${k}`;
}

const pad = (n: number) => String(n).padStart(2, '0');

/** Each field's cell in row i (unquoted). */
function cellsOf(customers: number, bad: (i: number) => boolean, currencies: readonly string[] = CURRENCIES, otherEvery = 10): Record<FieldName, (i: number) => string> {
  return {
    contractId: (i) => `CTR-${2018 + (i % 8)}-${String(i).padStart(8, '0')}`,
    // Customers are spread over the file, each with many contracts.
    customer: (i) => customerName(mix(i, 8) % customers),
    product: (i) => pick(PRODUCTS, i, 9),
    startDate: (i) => `${2018 + (mix(i, 10) % 8)}-${pad(1 + (mix(i, 11) % 12))}-${pad(1 + (mix(i, 12) % 28))}`,
    endDate: (i) => {
      const start = 2018 + (mix(i, 10) % 8);
      const startMonth = mix(i, 11) % 12;
      const startDay = 1 + (mix(i, 12) % 28);
      // Terms from one month to five years, most of one to three years, ending the day before the
      // same day of the month (a term from the 1st ends on the 28th of the month before).
      const months = [1, 3, 6, 12, 12, 12, 24, 24, 36, 36, 48, 60][mix(i, 13) % 12]!;
      const end = startMonth + months - (startDay === 1 ? 1 : 0);
      return `${start + Math.floor(end / 12)}-${pad((end % 12) + 1)}-${pad(startDay === 1 ? 28 : startDay - 1)}`;
    },
    amount: (i) => (bad(i) ? 'n/a' : `${(mix(i, 14) % 250_000) + 50}.${pad(mix(i, 15) % 100)}`),
    // A customer contracts in its own currency, now and then in a second one.
    currency: (i) => (mix(i, 17) % otherEvery === 0 ? pick(currencies, i, 16) : pick(currencies, mix(i, 8) % customers, 18)),
  };
}

const needsQuotes = /[",\r\n]/;
const quote = (cell: string) => `"${cell.replaceAll('"', '""')}"`;

/** The header line of a realistic file. */
export function realisticHeader(shape: RealisticShape = {}): string {
  const names = CONTRACT_FIELDS.map((f) => (shape.quoteAll ? quote(f.name) : f.name));
  return names.join(',') + (shape.crlf ? '\r\n' : '\n');
}

/** CSV text for rows [from, to) of a file of `rows` rows, in blocks of about 64 KiB. */
export function* realisticBlocks(from: number, to: number, rows: number, shape: RealisticShape = {}): Generator<string> {
  const customers = shape.customers ?? Math.max(20_000, Math.floor(rows / 25));
  const badEvery = shape.badEvery;
  const bad = (i: number) => badEvery !== undefined && i % badEvery === badEvery - 1;
  const cells = CONTRACT_FIELDS.map((f) => cellsOf(customers, bad, shape.currencies, shape.otherCurrencyEvery)[f.name]);
  const eol = shape.crlf ? '\r\n' : '\n';
  let block = '';
  for (let i = from; i < to; i++) {
    let line = '';
    for (let f = 0; f < cells.length; f++) {
      const cell = cells[f]!(i);
      line += (f === 0 ? '' : ',') + (shape.quoteAll || needsQuotes.test(cell) ? quote(cell) : cell);
    }
    block += line + eol;
    if (block.length >= 65_536) {
      yield block;
      block = '';
    }
  }
  if (block) yield block;
}

export function realisticCsv(rows: number, shape: RealisticShape = {}): string {
  return realisticHeader(shape) + [...realisticBlocks(0, rows, rows, shape)].join('');
}
