// Sets of exchange rates (contract, "One reporting currency"): the account's own month-end rates
// against a base, uploaded as JSON or CSV, checked whole (every bad record in one 400, nothing
// kept), per account and mode; the newest set is in force. A new set is the event
// `exchange_rates.created`, written in its transaction. The only writer of `exchange_rates`.
import { parse as parseCsv } from 'csv-parse/sync';
import { formatMonth, parseMonth } from '../figures/calendar.ts';
import { RATE_SCALE, type RateTable } from '../figures/reporting.ts';
import { type Pool, type Queryable, withTransaction } from '../platform/db.ts';
import { newId } from '../platform/ids.ts';
import { badRequest, type FieldError } from '../platform/problems.ts';
import type { Tenant } from './datasets.ts';
import { recordAccountEvent } from './events.ts';
import type { PgBoss } from 'pg-boss';
import { inTransaction, queues } from '../platform/queue.ts';

export type RateRecord = { month: string; currency: string; rate: string };

export type ExchangeRates = {
  id: string;
  object: 'exchange_rates';
  base: string;
  currencies: string[];
  from: string;
  to: string;
  createdAt: string;
};

/** At most this many records in a set (60 years of 40 currencies). */
export const MAX_RATES = 30_000;

const MONTH = /^(?!0000)\d{4}-(0[1-9]|1[0-2])$/;
const CURRENCY = /^[A-Z]{3}$/;
/** A decimal above zero with at most 10 decimals (and at most 20 digits before the point). */
const RATE = /^\d{1,20}(\.\d{1,10})?$/;

/** Checks a set's records: every problem, each named by its place (`rates[3].rate`). */
export function checkRates(input: { base: unknown; rates: unknown }): { base: string; rates: RateRecord[] } {
  const errors: FieldError[] = [];
  if (typeof input.base !== 'string' || !CURRENCY.test(input.base)) errors.push({ field: 'base', code: 'invalid', message: 'base must be an ISO 4217 code, three upper-case letters.' });
  if (!Array.isArray(input.rates) || input.rates.length === 0) {
    errors.push({ field: 'rates', code: 'required', message: 'rates must hold at least one {month, currency, rate} record.' });
    throw badRequest('The exchange rates are not valid.', errors);
  }
  if (input.rates.length > MAX_RATES) {
    errors.push({ field: 'rates', code: 'too_big', message: `A set holds at most ${MAX_RATES} records.` });
    throw badRequest('The exchange rates are not valid.', errors);
  }
  const seen = new Map<string, number>();
  const rates: RateRecord[] = [];
  input.rates.forEach((r: unknown, i) => {
    const at = `rates[${i}]`;
    if (r === null || typeof r !== 'object' || Array.isArray(r)) {
      errors.push({ field: at, code: 'invalid_type', message: `${at} must be an object {month, currency, rate}.` });
      return;
    }
    const { month, currency, rate, ...rest } = r as Record<string, unknown>;
    for (const key of Object.keys(rest)) errors.push({ field: `${at}.${key}`, code: 'unknown_field', message: `${key} is not a field of a rate.` });
    let ok = true;
    if (typeof month !== 'string' || !MONTH.test(month)) {
      errors.push({ field: `${at}.month`, code: month === undefined ? 'required' : 'invalid', message: 'month must be a month YYYY-MM, from 0001-01 to 9999-12.' });
      ok = false;
    }
    if (typeof currency !== 'string' || !CURRENCY.test(currency)) {
      errors.push({ field: `${at}.currency`, code: currency === undefined ? 'required' : 'invalid', message: 'currency must be an ISO 4217 code, three upper-case letters.' });
      ok = false;
    } else if (currency === input.base) {
      errors.push({ field: `${at}.currency`, code: 'invalid', message: 'The base has no rate of its own (it is 1).' });
      ok = false;
    }
    if (typeof rate !== 'string' || !RATE.test(rate) || !/[1-9]/.test(rate)) {
      errors.push({
        field: `${at}.rate`,
        code: rate === undefined ? 'required' : 'invalid',
        message: 'rate must be a decimal string above zero with at most 10 decimals ("1.0825"): how many units of base one unit of currency is worth at the month end.',
      });
      ok = false;
    }
    if (!ok) return;
    const key = `${month as string}:${currency as string}`;
    const earlier = seen.get(key);
    if (earlier !== undefined) {
      errors.push({ field: `${at}`, code: 'duplicate', message: `rates[${earlier}] already gives ${currency as string} for ${month as string}.` });
      return;
    }
    seen.set(key, i);
    rates.push({ month: month as string, currency: currency as string, rate: rate as string });
  });
  if (errors.length > 0) throw badRequest('The exchange rates are not valid.', errors);
  return { base: input.base as string, rates };
}

/**
 * A set written as CSV: a first line `base,<currency>` (`base,EUR`), then `month,currency,rate` records (a header
 * line `month,currency,rate` may come first). Its records are named as the JSON's (`rates[0]` is
 * the first record after the base line and header).
 */
export function ratesFromCsv(text: string): { base: unknown; rates: unknown[] } {
  let records: string[][];
  try {
    records = parseCsv(text.replace(/^\uFEFF/, ''), { relax_column_count: true, skip_empty_lines: true, trim: true }) as string[][];
  } catch (error) {
    throw badRequest('The CSV body cannot be read.', [{ field: '', code: 'malformed_csv', message: (error as Error).message }]);
  }
  const [head, ...rest] = records;
  if (!head || head[0]?.toLowerCase() !== 'base' || head.length !== 2) {
    throw badRequest('The exchange rates are not valid.', [{ field: 'base', code: 'required', message: 'The first line must be base,<currency>: the base currency, as in base,EUR.' }]);
  }
  if (rest[0]?.join(',').toLowerCase() === 'month,currency,rate') rest.shift();
  return {
    base: head[1],
    // A record of more than three cells (a decimal comma, unquoted) shows its rate as all of them.
    rates: rest.map((r) => ({ month: r[0], currency: r[1], rate: r.length > 3 ? r.slice(2).join(',') : r[2] })),
  };
}

type Row = { id: string; base: string; currencies: string[]; from_month: number; to_month: number; created_at: Date };
const COLUMNS = 'id, base, currencies, from_month, to_month, created_at';

const toSet = (r: Row): ExchangeRates => ({
  id: r.id,
  object: 'exchange_rates',
  base: r.base,
  currencies: r.currencies,
  from: formatMonth(r.from_month),
  to: formatMonth(r.to_month),
  createdAt: r.created_at.toISOString(),
});

/** Keeps a checked set, with its event, in one transaction. */
/**
 * Keeps a set (it is in force from the commit on), with its event and a run of the job that makes
 * the bases for conversion of the account's active versions of several currencies (figuresBackfill.ts),
 * so that their first reporting read finds them made.
 */
export async function createExchangeRates(pool: Pool, boss: PgBoss, tenant: Tenant, input: { base: string; rates: RateRecord[] }): Promise<ExchangeRates> {
  const records = input.rates
    .map((r) => [parseMonth(r.month), r.currency, r.rate] as const)
    .sort((a, b) => a[0] - b[0] || (a[1] < b[1] ? -1 : a[1] > b[1] ? 1 : 0));
  const currencies = [...new Set(records.map((r) => r[1]))].sort();
  return withTransaction(pool, async (client) => {
    const { rows } = await client.query<Row>(
      `INSERT INTO exchange_rates (id, account_id, mode, base, currencies, from_month, to_month, rates)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8) RETURNING ${COLUMNS}`,
      [newId('fx'), tenant.accountId, tenant.mode, input.base, currencies, records[0]![0], records.at(-1)![0], JSON.stringify(records)],
    );
    const set = toSet(rows[0]!);
    await recordAccountEvent(client, tenant, 'exchange_rates.created', set);
    await boss.send(queues.backfillFigures, {}, { db: inTransaction(client) });
    return set;
  });
}

/** A set with its rates (ordered by month then currency), or undefined. */
export async function findExchangeRates(db: Queryable, tenant: Tenant, id: string): Promise<(ExchangeRates & { rates: RateRecord[] }) | undefined> {
  const { rows } = await db.query<Row & { rates: [number, string, string][] }>(
    `SELECT ${COLUMNS}, rates FROM exchange_rates WHERE id = $1 AND account_id = $2 AND mode = $3`,
    [id, tenant.accountId, tenant.mode],
  );
  const r = rows[0];
  return r && { ...toSet(r), rates: r.rates.map(([m, currency, rate]) => ({ month: formatMonth(m), currency, rate })) };
}

/** Newest first; the cursor is the id of the last set of the previous page. */
export async function listExchangeRates(db: Queryable, tenant: Tenant, query: { limit: number; cursor?: string | undefined }) {
  const { rows } = await db.query<Row>(
    `SELECT ${COLUMNS} FROM exchange_rates
     WHERE account_id = $1 AND mode = $2
       AND ($3::text IS NULL OR seq < (SELECT seq FROM exchange_rates c WHERE c.id = $3 AND c.account_id = $1 AND c.mode = $2))
     ORDER BY seq DESC LIMIT $4`,
    [tenant.accountId, tenant.mode, query.cursor ?? null, query.limit + 1],
  );
  const data = rows.slice(0, query.limit).map(toSet);
  return { object: 'list' as const, data, nextCursor: rows.length > query.limit ? data.at(-1)!.id : null };
}

/** The set in force (the newest of the account and mode), as a table of rates, or undefined. */
export async function ratesInForce(db: Queryable, tenant: Tenant): Promise<{ id: string; currencies: string[]; table: RateTable } | undefined> {
  const { rows } = await db.query<{ id: string; base: string; currencies: string[]; rates: [number, string, string][] }>(
    'SELECT id, base, currencies, rates FROM exchange_rates WHERE account_id = $1 AND mode = $2 ORDER BY seq DESC LIMIT 1',
    [tenant.accountId, tenant.mode],
  );
  const r = rows[0];
  if (!r) return undefined;
  const rates = new Map<string, Map<number, bigint>>();
  for (const [month, currency, rate] of r.rates) {
    let byMonth = rates.get(currency);
    if (byMonth === undefined) rates.set(currency, (byMonth = new Map()));
    byMonth.set(month, scaled(rate));
  }
  return { id: r.id, currencies: [r.base, ...r.currencies], table: { base: r.base, rates } };
}

/** A decimal rate in 10^-10 units. */
const scaled = (rate: string): bigint => {
  const [whole, frac = ''] = rate.split('.');
  return BigInt(whole!) * RATE_SCALE + BigInt(frac.padEnd(10, '0'));
};
