import { z } from 'zod';

const Currency = z.string().meta({ description: 'ISO 4217 code, three upper-case letters.', example: 'USD' });
const MonthField = z.string().meta({ description: 'YYYY-MM: the rate is the one at its last day.', example: '2026-01' });

export const RateSchema = z
  .object({
    month: MonthField,
    currency: Currency,
    rate: z.string().meta({ description: 'How many units of base one unit of currency is worth at the month end: a decimal above zero with at most 10 decimals.', example: '0.9235' }),
  })
  .meta({ id: 'ExchangeRate' });

export const CreateExchangeRatesBody = z
  .object({ base: Currency.meta({ description: 'The currency the rates are against (its own rate is 1).', example: 'EUR' }), rates: z.array(RateSchema) })
  .meta({ id: 'CreateExchangeRatesRequest' });

export const ExchangeRatesSchema = z
  .object({
    id: z.string().meta({ description: 'fx_…' }),
    object: z.literal('exchange_rates'),
    base: z.string(),
    currencies: z.array(z.string()).meta({ description: 'The currencies the set has rates for (not the base), ordered.' }),
    from: MonthField.meta({ description: 'The first month of the set.' }),
    to: MonthField.meta({ description: 'The last month of the set.' }),
    createdAt: z.string().meta({ format: 'date-time' }),
  })
  .meta({ id: 'ExchangeRates' });

export const ExchangeRatesWithRatesSchema = ExchangeRatesSchema.extend({
  rates: z.array(RateSchema).meta({ description: 'Every rate of the set, ordered by month then currency.' }),
}).meta({ id: 'ExchangeRatesWithRates' });

export const exchangeRatesExample = {
  id: 'fx_7h2k9m4q1s8v3x6z0b5d',
  object: 'exchange_rates',
  base: 'EUR',
  currencies: ['GBP', 'USD'],
  from: '2026-01',
  to: '2026-02',
  createdAt: '2026-03-02T08:00:00.000Z',
};

export const ratesExample = [
  { month: '2026-01', currency: 'GBP', rate: '1.1904' },
  { month: '2026-01', currency: 'USD', rate: '0.9235' },
  { month: '2026-02', currency: 'GBP', rate: '1.1876' },
  { month: '2026-02', currency: 'USD', rate: '0.9181' },
];

export const ratesCsvExample = 'base,EUR\nmonth,currency,rate\n2026-01,GBP,1.1904\n2026-01,USD,0.9235\n2026-02,GBP,1.1876\n2026-02,USD,0.9181\n';

export const ExchangeRatesIdParams = z.object({ id: z.string().min(1).max(100).meta({ description: 'Exchange rates id (fx_…).' }) });
