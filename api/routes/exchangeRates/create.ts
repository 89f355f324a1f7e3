import type { Request } from 'express';
import { z } from 'zod';
import { checkRates, createExchangeRates, ratesFromCsv } from '../../../shared/domain/exchangeRates.ts';
import { Problem } from '../../../shared/platform/problems.ts';
import { JSON_LIMIT_BYTES, readJsonBody } from '../../body.ts';
import { defineOperation } from '../../defineOperation.ts';
import { tenantOf } from '../../principal.ts';
import { CreateExchangeRatesBody, exchangeRatesExample, ExchangeRatesSchema, ratesCsvExample, ratesExample } from './schemas.ts';

/** The body as {base, rates}: JSON, or CSV (base line, then month,currency,rate records). */
async function readRates(req: Request): Promise<{ base: unknown; rates: unknown }> {
  if (req.is('text/csv')) {
    const chunks: Buffer[] = [];
    let size = 0;
    for await (const chunk of req as AsyncIterable<Buffer>) {
      size += chunk.length;
      if (size > JSON_LIMIT_BYTES) throw new Problem('payload-too-large', `A set of rates may be at most ${JSON_LIMIT_BYTES} bytes.`);
      chunks.push(chunk);
    }
    return ratesFromCsv(Buffer.concat(chunks).toString('utf8'));
  }
  if (!req.is('application/json')) throw new Problem('unsupported-media-type', 'Send the rates as application/json or text/csv.');
  const body = await readJsonBody(req);
  if (body === null || typeof body !== 'object' || Array.isArray(body)) return { base: undefined, rates: undefined };
  const { base, rates } = body as Record<string, unknown>;
  return { base, rates };
}

export default defineOperation({
  operationId: 'createExchangeRates',
  method: 'post',
  path: '/v1/exchange-rates',
  surface: 'v1',
  tags: ['Exchange rates'],
  summary: 'Upload a set of exchange rates',
  description:
    'Your month-end rates against a base: `rate` is how many units of `base` one unit of `currency` is worth at the end of `month`. ' +
    'The newest set of your account and mode is in force for `?reportingCurrency=` (test and live sets never mix). Every bad record is listed in one 400 ' +
    '(field `rates[i].month`, `rates[i].currency`, `rates[i].rate`; a CSV\'s records are numbered the same way, from 0 after the base line and header) and nothing is kept. ' +
    'A new set is the event `exchange_rates.created`.',
  otherBodies: {
    'application/json': { schema: CreateExchangeRatesBody, example: { base: 'EUR', rates: ratesExample } },
    'text/csv': {
      schema: z.string().meta({ description: 'A first line base,<currency> (base,EUR), then month,currency,rate records (a header line month,currency,rate may come first).' }),
      example: ratesCsvExample,
    },
  },
  responses: {
    201: { description: 'The set, now in force.', schema: ExchangeRatesSchema, example: exchangeRatesExample, headers: { Location: 'URL of the set.' } },
  },
  problems: ['bad-request', 'unsupported-media-type', 'payload-too-large'],
  async handle({ req, res, deps }) {
    const set = await createExchangeRates(deps.pool, deps.boss, tenantOf(res), checkRates(await readRates(req)));
    res.status(201).location(`${deps.config.baseUrl}/v1/exchange-rates/${set.id}`).json(set);
  },
});
