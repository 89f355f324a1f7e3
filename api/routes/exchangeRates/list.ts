import { findExchangeRates, listExchangeRates } from '../../../shared/domain/exchangeRates.ts';
import { defineOperation } from '../../defineOperation.ts';
import { tenantOf } from '../../principal.ts';
import { invalidCursor, listOf, PaginationQuery } from '../../schemas.ts';
import { exchangeRatesExample, ExchangeRatesSchema } from './schemas.ts';

export default defineOperation({
  operationId: 'listExchangeRates',
  method: 'get',
  path: '/v1/exchange-rates',
  surface: 'v1',
  tags: ['Exchange rates'],
  summary: 'List sets of exchange rates',
  description: "The sets of the credential's account and mode, newest first: the first is in force.",
  query: PaginationQuery,
  responses: {
    200: { description: 'A page of sets.', schema: listOf(ExchangeRatesSchema, 'ExchangeRatesList'), example: { object: 'list', data: [exchangeRatesExample], nextCursor: null } },
  },
  problems: ['bad-request'],
  async handle({ res, deps, query }) {
    const tenant = tenantOf(res);
    const page = await listExchangeRates(deps.pool, tenant, query);
    if (page.data.length === 0 && query.cursor && !(await findExchangeRates(deps.pool, tenant, query.cursor))) throw invalidCursor();
    res.json(page);
  },
});
