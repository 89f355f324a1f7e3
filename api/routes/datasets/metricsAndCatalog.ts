// Metrics and catalog of the active version: one query each on results computed at build time.
// A missing dataset and one with no active version answer the same 404.
import { catalogExample, metricsExample, metricsReportingExample } from '../../examples.ts';
import { z } from 'zod';
import { FIELD_KIND_NAMES, GATING_FIELDS } from '../../../shared/contract/fields.ts';
import { FIGURE_WORDS } from '../../../shared/figures/definitions.ts';
import { readCatalog, readMetrics } from '../../../shared/domain/metricsAndCatalog.ts';
import { readReporting } from '../../../shared/domain/reportingCurrency.ts';
import { defineOperation } from '../../defineOperation.ts';
import { tenantOf } from '../../principal.ts';
import { DatasetIdParams } from './schemas.ts';
import { noSuchReadableVersion, nothingServable, VersionIdQuery } from './readableVersion.ts';


// Year 0000 is no date PostgreSQL knows (there was no year 0): 0001-01 to 9999-12.
export const Month = z.string().regex(/^(?!0000)\d{4}-(0[1-9]|1[0-2])$/, 'must be a month YYYY-MM, from 0001-01 to 9999-12');

const Currency = z.string().regex(/^[A-Z]{3}$/, 'must be an ISO 4217 code, three upper-case letters');
const Money = (description: string) => z.string().meta({ description, example: '1600.00' });
const Ratio = (description: string) => z.string().nullable().meta({ description, example: '0.9231' });
const MovementSchema = (description: string) =>
  z.object({ customers: z.number().int().meta({ description: 'Customers with this movement in the month.' }), mrr: Money('Their MRR of this movement, never negative.') }).meta({ description });

export const MonthFiguresSchema = z
  .object({
    month: z.string().meta({ description: 'YYYY-MM: the figures are taken at its last day.', example: '2025-01' }),
    currency: z.string().meta({ description: 'ISO 4217 code: each currency has its own series.' }),
    activeContracts: z.number().int().meta({ description: FIGURE_WORDS.activeContracts }),
    activeCustomers: z.number().int().meta({ description: FIGURE_WORDS.activeCustomers }),
    mrr: Money(`${FIGURE_WORDS.mrr} ${FIGURE_WORDS.monthEnd} ${FIGURE_WORDS.monthlyValue}`),
    arr: Money(FIGURE_WORDS.arr),
    arpa: Money(FIGURE_WORDS.arpa).nullable(),
    movements: z
      .object({
        newBusiness: MovementSchema(FIGURE_WORDS.newBusiness),
        expansion: MovementSchema(FIGURE_WORDS.expansion),
        contraction: MovementSchema(FIGURE_WORDS.contraction),
        churn: MovementSchema(FIGURE_WORDS.churn),
        reactivation: MovementSchema(FIGURE_WORDS.reactivation),
        netNewMrr: Money(FIGURE_WORDS.netNewMrr),
      })
      .meta({ description: "Each customer's change of MRR between the end of the month before and the end of this one; a month before the series counts as 0." }),
    rates: z.object({
      customerChurn: Ratio(FIGURE_WORDS.customerChurn),
      grossMrrChurn: Ratio(FIGURE_WORDS.grossMrrChurn),
      netRevenueRetention: Ratio(FIGURE_WORDS.netRevenueRetention),
      grossRevenueRetention: Ratio(FIGURE_WORDS.grossRevenueRetention),
    }),
  })
  .meta({ id: 'MonthFigures' });

const Nullable = (description: string) => z.string().nullable().meta({ description, example: '1600.00' });
const ReportingMovement = (description: string) =>
  z.object({ customers: z.number().int().nullable().meta({ description: 'Customers with this movement in the month (a customer across all their currencies).' }), mrr: Nullable('Their converted MRR of this movement, never negative.') }).meta({ description });

export const ReportingMonthSchema = z
  .object({
    month: z.string().meta({ description: 'YYYY-MM.', example: '2025-01' }),
    activeCustomers: z.number().int().nullable().meta({ description: 'Customers with MRR in any currency at the month end.' }),
    mrr: Nullable(`${FIGURE_WORDS.reportingMrr}`),
    arr: Nullable(FIGURE_WORDS.arr),
    arpa: Nullable(FIGURE_WORDS.arpa),
    movements: z.object({
      newBusiness: ReportingMovement(FIGURE_WORDS.newBusiness),
      expansion: ReportingMovement(FIGURE_WORDS.expansion),
      contraction: ReportingMovement(FIGURE_WORDS.contraction),
      churn: ReportingMovement(FIGURE_WORDS.churn),
      reactivation: ReportingMovement(FIGURE_WORDS.reactivation),
      netNewMrr: Nullable(FIGURE_WORDS.netNewMrr),
      fxImpact: Nullable(FIGURE_WORDS.fxImpact),
    }).meta({ description: FIGURE_WORDS.reportingMovements }),
    rates: z.object({
      customerChurn: Ratio(FIGURE_WORDS.customerChurn),
      grossMrrChurn: Ratio(FIGURE_WORDS.grossMrrChurn),
      netRevenueRetention: Ratio(FIGURE_WORDS.netRevenueRetention),
      grossRevenueRetention: Ratio(FIGURE_WORDS.grossRevenueRetention),
    }).meta({ description: 'As for one currency, every MRR in them converted at this month\'s rates.' }),
  })
  .meta({ id: 'ReportingMonth', description: 'Every figure is null in a month that needs a rate the set lacks (see missingRates).' });

export const ReportingSchema = z
  .object({
    currency: z.string().meta({ description: 'The reporting currency asked for.' }),
    exchangeRatesId: z.string().meta({ description: 'The set of rates in force that converted the figures (fx_…).' }),
    monthly: z.array(ReportingMonthSchema).meta({ description: 'From the first month of any currency to the last churn month of all of them, ordered by month (sliced by from and to).' }),
    missingRates: z
      .array(z.object({ month: z.string(), currency: z.string() }))
      .meta({ description: 'Each rate the shown months need that the set lacks, once, ordered by month then currency.' }),
  })
  .meta({ id: 'Reporting', description: `With ?reportingCurrency= only: the whole business in that currency. ${FIGURE_WORDS.reporting}` });

export const MetricsSchema = z
  .object({
    object: z.literal('metrics'),
    datasetId: z.string(),
    versionId: z.string(),
    rows: z.object({
      total: z.number().int(),
      contributing: z.number().int(),
      excluded: z.object(Object.fromEntries(GATING_FIELDS.map((f) => [f.name, z.number().int()]))),
    }),
    currencies: z.array(z.object({ currency: z.string(), contracts: z.number().int(), customers: z.number().int(), totalValue: z.string() })),
    monthly: z.array(MonthFiguresSchema).meta({
      description:
        'Per currency, every month from the first whose end finds a contract active to the month after the last such month (where its churn shows), at most 600; ordered by month then currency. ' +
        'Money is a decimal string with two decimals, ratios with four, each rounded half away from zero on its own from exact values.',
    }),
    reporting: ReportingSchema.optional(),
  })
  .meta({ id: 'Metrics' });

export const CatalogSchema = z
  .object({
    object: z.literal('catalog'),
    datasetId: z.string(),
    versionId: z.string(),
    rowCount: z.number().int(),
    fields: z.array(
      z.object({
        name: z.string(),
        type: z.enum(FIELD_KIND_NAMES),
        gating: z.boolean(),
        present: z.number().int(),
        distinct: z.number().int(),
        min: z.string().nullable(),
        max: z.string().nullable(),
      }),
    ),
    products: z.array(z.object({ product: z.string(), contracts: z.number().int(), customers: z.number().int() })),
  })
  .meta({ id: 'Catalog' });

export const getMetrics = defineOperation({
  operationId: 'getMetrics',
  method: 'get',
  path: '/v1/datasets/:id/metrics',
  surface: 'v1',
  tags: ['Reads'],
  summary: 'Metrics of the active version, or of an earlier one',
  description:
    'Row counts, per-currency totals and the monthly series: month-end MRR, ARR and ARPA, the movements (new business, expansion, contraction, churn, reactivation), customer churn and revenue retention. ' +
    '`from` and `to` (YYYY-MM) slice the series; a slice shows the same figures as the whole. Every figure is defined in docs/metrics.md, with a worked example. ' +
    '`versionId` reads an earlier version that was active (superseded now): what was reported then, kept as long as the version record, even once its rows are purged.',
  params: DatasetIdParams,
  query: z.object({
    from: Month.optional(),
    to: Month.optional(),
    versionId: VersionIdQuery,
    reportingCurrency: Currency.optional().meta({
      description:
        'Adds `reporting`: the whole business converted to this currency with the set of exchange rates in force (POST /v1/exchange-rates). ' +
        'It must be the set\'s base or one of its currencies; with no set in force, or another currency, 400 bad-request.',
    }),
  }),
  responses: {
    200: {
      description: 'The metrics.',
      schema: MetricsSchema,
      examples: {
        perCurrency: { summary: 'Each currency as sold', value: metricsExample },
        reporting: { summary: 'With reportingCurrency=EUR: the whole business in euros as well', value: metricsReportingExample },
      },
    },
  },
  problems: ['not-found', 'bad-request'],
  async handle({ res, deps, params, query }) {
    const tenant = tenantOf(res);
    const doc = await readMetrics(deps.pool, tenant, params.id, query, query.versionId);
    if (!doc) throw query.versionId === undefined ? nothingServable() : noSuchReadableVersion(query.versionId);
    if (query.reportingCurrency === undefined) return void res.json(doc);
    res.json({ ...doc, reporting: await readReporting(deps.pool, tenant, doc.versionId, query.reportingCurrency, query) });
  },
});

export const getCatalog = defineOperation({
  operationId: 'getCatalog',
  method: 'get',
  path: '/v1/datasets/:id/catalog',
  surface: 'v1',
  tags: ['Reads'],
  summary: 'Catalog of the active version, or of an earlier one',
  description:
    'Per field: type, whether it gates metrics, how many rows have it, distinct values, min and max; and every product. ' +
    '`versionId` reads an earlier version that was active (superseded now), kept as long as the version record.',
  params: DatasetIdParams,
  query: z.object({ versionId: VersionIdQuery }),
  responses: { 200: { description: 'The catalog.', schema: CatalogSchema, example: catalogExample } },
  problems: ['not-found', 'bad-request'],
  async handle({ res, deps, params, query }) {
    const doc = await readCatalog(deps.pool, tenantOf(res), params.id, query.versionId);
    if (!doc) throw query.versionId === undefined ? nothingServable() : noSuchReadableVersion(query.versionId);
    res.json(doc);
  },
});
