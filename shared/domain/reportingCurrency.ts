// A version's figures in one reporting currency (contract, "One reporting currency"): converted at
// read from the version's basis (fxBasis.ts, made when it was built) with the set of rates in
// force. The answer is kept per version, set and currency, in the process (a version's figures and
// a set never change), so that a reading again costs no conversion.
import { convert, missingRates, type Reporting } from '../figures/reporting.ts';
import type { FxBasis } from '../figures/fxBasis.ts';
import type { Pool } from '../platform/db.ts';
import { badRequest } from '../platform/problems.ts';
import type { Tenant } from './datasets.ts';
import { ratesInForce } from './exchangeRates.ts';
import { readFxBasis } from './monthlyFigures.ts';

/** A small cache that forgets the least recently used. */
class Recent<T> {
  private readonly items = new Map<string, T>();
  private readonly size: number;
  constructor(size: number) {
    this.size = size;
  }
  get(key: string): T | undefined {
    const v = this.items.get(key);
    if (v !== undefined) {
      this.items.delete(key);
      this.items.set(key, v);
    }
    return v;
  }
  set(key: string, v: T): void {
    this.items.set(key, v);
    if (this.items.size > this.size) this.items.delete(this.items.keys().next().value!);
  }
  delete(key: string): void {
    this.items.delete(key);
  }
}

const bases = new Recent<Promise<FxBasis>>(32);
const answers = new Recent<Reporting>(64);

const noRates = () =>
  badRequest('There is no set of exchange rates in force: upload your month-end rates first (POST /v1/exchange-rates).', [
    { field: 'reportingCurrency', code: 'no_exchange_rates', message: 'Upload your month-end rates first: POST /v1/exchange-rates.' },
  ]);

/** The `reporting` member of the metrics; 400 when no set is in force or it does not know the currency. */
export async function readReporting(pool: Pool, tenant: Tenant, versionId: string, currency: string, range: { from?: string | undefined; to?: string | undefined }) {
  const set = await ratesInForce(pool, tenant);
  if (!set) throw noRates();
  if (!set.currencies.includes(currency)) {
    throw badRequest('The reporting currency is not in the set of rates in force.', [
      { field: 'reportingCurrency', code: 'unknown_currency', message: `The set ${set.id} has rates for ${set.currencies.join(', ')} (its base ${set.table.base} first).` },
    ]);
  }
  const key = `${versionId}:${set.id}:${currency}`;
  let answer = answers.get(key);
  if (answer === undefined) {
    let basis = bases.get(versionId);
    if (basis === undefined) {
      bases.set(versionId, (basis = readFxBasis(pool, versionId)));
      basis.catch(() => bases.delete(versionId));
    }
    answers.set(key, (answer = convert(await basis, set.table, currency)));
  }
  const shown = answer.monthly.flatMap((m, i) => ((!range.from || m.month >= range.from) && (!range.to || m.month <= range.to) ? [i] : []));
  return {
    currency,
    exchangeRatesId: set.id,
    monthly: shown.map((i) => answer.monthly[i]!),
    missingRates: missingRates(shown.map((i) => answer.missing[i]!)),
  };
}
