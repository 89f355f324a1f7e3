// Metrics and catalog of the active version: one query each on results computed at build time.
// A missing dataset and one with no active version answer the same 404.
import { catalogExample, metricsExample } from '../../examples.ts';
import { z } from 'zod';
import { FIELD_KIND_NAMES, GATING_FIELDS } from '../../../shared/contract/fields.ts';
import { Problem } from '../../../shared/platform/problems.ts';
import { readCatalog, readMetrics } from '../../../shared/domain/metricsAndCatalog.ts';
import { defineOperation } from '../../defineOperation.ts';
import { tenantOf } from '../../principal.ts';
import { DatasetIdParams } from './schemas.ts';

const nothingServable = () =>
  new Problem('not-found', 'Nothing to serve: the dataset does not exist or has no active version. GET the dataset to tell which.');

// Year 0000 is no date PostgreSQL knows (there was no year 0): 0001-01 to 9999-12.
const Month = z.string().regex(/^(?!0000)\d{4}-(0[1-9]|1[0-2])$/, 'must be a month YYYY-MM, from 0001-01 to 9999-12');

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
    monthly: z.array(
      z.object({
        month: z.string(),
        currency: z.string(),
        activeContracts: z.number().int(),
        activeCustomers: z.number().int(),
        mrr: z.string().meta({ description: 'Monthly recurring revenue, a decimal string with two decimals.' }),
        newCustomers: z.number().int(),
        churnedCustomers: z.number().int(),
      }),
    ),
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
  summary: 'Metrics of the active version',
  description: 'Row counts, per-currency totals and the monthly series (MRR, active, new and churned customers). `from` and `to` (YYYY-MM) slice the series.',
  params: DatasetIdParams,
  query: z.object({ from: Month.optional(), to: Month.optional() }),
  responses: { 200: { description: 'The metrics.', schema: MetricsSchema, example: metricsExample } },
  problems: ['not-found', 'bad-request'],
  async handle({ res, deps, params, query }) {
    const doc = await readMetrics(deps.pool, tenantOf(res), params.id, query);
    if (!doc) throw nothingServable();
    res.json(doc);
  },
});

export const getCatalog = defineOperation({
  operationId: 'getCatalog',
  method: 'get',
  path: '/v1/datasets/:id/catalog',
  surface: 'v1',
  tags: ['Reads'],
  summary: 'Catalog of the active version',
  description: 'Per field: type, whether it gates metrics, how many rows have it, distinct values, min and max; and every product.',
  params: DatasetIdParams,
  responses: { 200: { description: 'The catalog.', schema: CatalogSchema, example: catalogExample } },
  problems: ['not-found'],
  async handle({ res, deps, params }) {
    const doc = await readCatalog(deps.pool, tenantOf(res), params.id);
    if (!doc) throw nothingServable();
    res.json(doc);
  },
});
