// GET /v1/datasets/{id}/cohorts: the active version's customers by the month of their new
// business, with how many of them have MRR at every later month end and their MRR
// (../shared/spec/contract.md, "Metrics and catalog"). Stored when the version was built.
import { z } from 'zod';
import { readCohortsTexts } from '../../../shared/domain/monthlyFigures.ts';
import { StreamedJson } from '../../streamedJson.ts';
import { readReportingCohorts } from '../../../shared/domain/reportingCurrency.ts';
import { badRequest } from '../../../shared/platform/problems.ts';
import { FIGURE_WORDS } from '../../../shared/figures/definitions.ts';
import { defineOperation } from '../../defineOperation.ts';
import { cohortsExample, cohortsReportingExample } from '../../examples.ts';
import { tenantOf } from '../../principal.ts';
import { readableVersion, VersionIdQuery } from './readableVersion.ts';
import { DatasetIdParams } from './schemas.ts';

export const Currency = z.string().regex(/^[A-Z]{3}$/, 'must be an ISO 4217 code, three upper-case letters');

const CohortMonthSchema = z.object({
  month: z.string().meta({ description: 'YYYY-MM' }),
  customers: z.number().int().nullable().meta({ description: "The cohort's customers with MRR at this month's end (null only in a reporting currency, when the month needs a rate the set lacks)." }),
  mrr: z.string().nullable().meta({ description: 'Their MRR at that month end (in a reporting currency: converted at its rates; null when the set lacks one).' }),
});

/** The other currencies' reads take `reportingCurrency` as metrics do; with `currency`, they would answer in two. */
export const ReportingCurrencyQuery = Currency.optional().meta({
  description:
    'Answers for the whole business in this currency, converted with the set of exchange rates in force (POST /v1/exchange-rates): a customer across all their currencies. ' +
    "It must be the set's base or one of its currencies; with no set in force, another currency, or `currency` too, 400 bad-request.",
});

export function oneCurrency(query: { currency?: string | undefined; reportingCurrency?: string | undefined }): void {
  if (query.currency !== undefined && query.reportingCurrency !== undefined) {
    throw badRequest('Give either currency (one currency as it was sold) or reportingCurrency (the whole business converted), not both.', [
      { field: 'currency', code: 'conflicting_parameters', message: 'currency and reportingCurrency cannot be used together.' },
    ]);
  }
}

export const CohortsSchema = z
  .object({
    object: z.literal('cohorts'),
    datasetId: z.string(),
    versionId: z.string(),
    exchangeRatesId: z.string().optional().meta({ description: 'With reportingCurrency only: the set of rates the figures are converted with.' }),
    missingRates: z
      .array(z.object({ month: z.string(), currency: z.string() }))
      .optional()
      .meta({ description: 'With reportingCurrency only: each (month, currency) rate the set lacks that a figure needed (those figures are null), ordered by month then currency.' }),
    data: z.array(
      z.object({
        currency: z.string().meta({ description: 'The currency sold in, or the reporting currency.' }),
        cohort: z.string().meta({ description: `YYYY-MM. ${FIGURE_WORDS.cohort}` }),
        customers: z.number().int().nullable().meta({ description: 'Customers in the cohort (their count at the cohort month).' }),
        mrr: z.string().nullable().meta({ description: 'Their MRR at the end of the cohort month.' }),
        months: z.array(CohortMonthSchema).meta({ description: "From the cohort month to the currency's last month (its churn month), every month." }),
      }),
    ),
  })
  .meta({ id: 'Cohorts' });

export default defineOperation({
  operationId: 'getCohorts',
  method: 'get',
  path: '/v1/datasets/:id/cohorts',
  surface: 'v1',
  tags: ['Reads'],
  summary: 'Cohorts of the active version, or of an earlier one',
  description:
    `Customers grouped by the month of their new business, per currency, ordered by currency then cohort; with each later month end's customers and MRR. ${FIGURE_WORDS.cohort} ` +
    "With `reportingCurrency`, the whole business's cohorts in that currency: a customer's cohort is their first month end with MRR in any currency, and a cohort's MRR at a month end is its customers' MRR in every currency converted at that month's rates; its months run to the last month of every currency's series.",
  params: DatasetIdParams,
  query: z.object({ currency: Currency.optional().meta({ description: 'Only this currency.' }), versionId: VersionIdQuery, reportingCurrency: ReportingCurrencyQuery }),
  responses: {
    200: {
      description: 'The cohorts.',
      schema: CohortsSchema,
      examples: {
        perCurrency: { summary: 'Per currency as sold', value: cohortsExample },
        reporting: { summary: 'With reportingCurrency=EUR (a rate missing for February)', value: cohortsReportingExample },
      },
    },
  },
  problems: ['not-found', 'bad-request'],
  async handle({ res, deps, params, query }) {
    oneCurrency(query);
    const tenant = tenantOf(res);
    const { id: versionId } = await readableVersion(deps.pool, tenant, params.id, query.versionId);
    if (query.reportingCurrency !== undefined) {
      const converted = await readReportingCohorts(deps.pool, tenant, versionId, query.reportingCurrency);
      return void res.json({ object: 'cohorts', datasetId: params.id, versionId, exchangeRatesId: converted.exchangeRatesId, missingRates: converted.missingRates, data: converted.data });
    }
    // Stored as JSON when the version was built: sent as it is, megabytes of it without parsing (or
    // decoding) them again. Already in memory: written without waiting for the socket to drain.
    const texts = await readCohortsTexts(deps.pool, versionId, query.currency);
    const json = new StreamedJson();
    const data = json.array(async (sink) => {
      texts.forEach((text, i) => {
        if (i > 0) sink.write(',');
        sink.write(text);
      });
    });
    await json.send(res, { object: 'cohorts', datasetId: params.id, versionId, data });
  },
});
