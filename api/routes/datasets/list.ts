import { z } from 'zod';
import { cursorIsValid, listDatasets } from '../../../shared/domain/datasets.ts';
import { defineOperation } from '../../defineOperation.ts';
import { tenantOf } from '../../principal.ts';
import { invalidCursor, listOf, PaginationQuery } from '../../schemas.ts';
import { DatasetSchema } from './schemas.ts';
import { datasetExample, list } from '../../examples.ts';

export const ListDatasetsQuery = PaginationQuery.extend({
  externalRef: z.string().min(1).max(200).optional().meta({ description: 'Only the dataset with this externalRef (at most one).' }),
});

export default defineOperation({
  operationId: 'listDatasets',
  method: 'get',
  path: '/v1/datasets',
  surface: 'v1',
  tags: ['Datasets'],
  summary: 'List datasets',
  description: 'The datasets of the credential\'s account and mode, newest first.',
  query: ListDatasetsQuery,
  responses: { 200: { description: 'A page of datasets.', schema: listOf(DatasetSchema, 'DatasetList'), example: list(datasetExample) } },
  problems: ['bad-request'],
  async handle({ res, deps, query }) {
    const tenant = tenantOf(res);
    const page = await listDatasets(deps.pool, tenant, query);
    if (page.data.length === 0 && query.cursor && !(await cursorIsValid(deps.pool, tenant, query.cursor))) {
      throw invalidCursor();
    }
    res.json(page);
  },
});
