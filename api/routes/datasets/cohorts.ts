// GET /v1/datasets/{id}/cohorts: the active version's customers by the month of their new
// business, with how many of them have MRR at every later month end and their MRR
// (../shared/spec/contract.md, "Metrics and catalog"). Stored when the version was built.
import { z } from 'zod';
import { readCohortsJson } from '../../../shared/domain/monthlyFigures.ts';
import { FIGURE_WORDS } from '../../../shared/figures/definitions.ts';
import { defineOperation } from '../../defineOperation.ts';
import { cohortsExample } from '../../examples.ts';
import { tenantOf } from '../../principal.ts';
import { readableVersion, VersionIdQuery } from './readableVersion.ts';
import { DatasetIdParams } from './schemas.ts';

export const Currency = z.string().regex(/^[A-Z]{3}$/, 'must be an ISO 4217 code, three upper-case letters');

const CohortMonthSchema = z.object({
  month: z.string().meta({ description: 'YYYY-MM' }),
  customers: z.number().int().meta({ description: "The cohort's customers with MRR at this month's end." }),
  mrr: z.string().meta({ description: 'Their MRR at that month end.' }),
});

export const CohortsSchema = z
  .object({
    object: z.literal('cohorts'),
    datasetId: z.string(),
    versionId: z.string(),
    data: z.array(
      z.object({
        currency: z.string(),
        cohort: z.string().meta({ description: `YYYY-MM. ${FIGURE_WORDS.cohort}` }),
        customers: z.number().int().meta({ description: 'Customers in the cohort (their count at the cohort month).' }),
        mrr: z.string().meta({ description: 'Their MRR at the end of the cohort month.' }),
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
  description: `Customers grouped by the month of their new business, per currency, ordered by currency then cohort; with each later month end's customers and MRR. ${FIGURE_WORDS.cohort}`,
  params: DatasetIdParams,
  query: z.object({ currency: Currency.optional().meta({ description: 'Only this currency.' }), versionId: VersionIdQuery }),
  responses: { 200: { description: 'The cohorts.', schema: CohortsSchema, example: cohortsExample } },
  problems: ['not-found', 'bad-request'],
  async handle({ res, deps, params, query }) {
    const { id: versionId } = await readableVersion(deps.pool, tenantOf(res), params.id, query.versionId);
    // Stored as JSON when the version was built: sent as it is, megabytes of it without parsing them again.
    const data = await readCohortsJson(deps.pool, versionId, query.currency);
    res.type('application/json').send(`{"object":"cohorts","datasetId":${JSON.stringify(params.id)},"versionId":${JSON.stringify(versionId)},"data":[${data}]}`);
  },
});
