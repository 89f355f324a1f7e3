import { findExchangeRates } from '../../../shared/domain/exchangeRates.ts';
import { Problem } from '../../../shared/platform/problems.ts';
import { defineOperation } from '../../defineOperation.ts';
import { tenantOf } from '../../principal.ts';
import { exchangeRatesExample, ExchangeRatesIdParams, ExchangeRatesWithRatesSchema, ratesExample } from './schemas.ts';

export default defineOperation({
  operationId: 'getExchangeRates',
  method: 'get',
  path: '/v1/exchange-rates/:id',
  surface: 'v1',
  tags: ['Exchange rates'],
  summary: 'Retrieve a set of exchange rates',
  description: 'The set with every one of its rates.',
  params: ExchangeRatesIdParams,
  responses: { 200: { description: 'The set and its rates.', schema: ExchangeRatesWithRatesSchema, example: { ...exchangeRatesExample, rates: ratesExample } } },
  problems: ['not-found'],
  async handle({ res, deps, params }) {
    const set = await findExchangeRates(deps.pool, tenantOf(res), params.id);
    if (!set) throw new Problem('not-found', `No set of exchange rates with id ${JSON.stringify(params.id)} exists.`);
    res.json(set);
  },
});
