import { datasetNotFound, findDataset } from '../../../shared/domain/datasets.ts';
import { defineOperation } from '../../defineOperation.ts';
import { tenantOf } from '../../principal.ts';
import { DatasetIdParams, DatasetSchema } from './schemas.ts';
import { datasetExample } from '../../examples.ts';

export default defineOperation({
  operationId: 'getDataset',
  method: 'get',
  path: '/v1/datasets/:id',
  surface: 'v1',
  tags: ['Datasets'],
  summary: 'Retrieve a dataset',
  description:
    'Answers whether the dataset exists (404 if not, also for another account\'s or the other mode\'s dataset) and whether a version is servable (`activeVersionId`).',
  params: DatasetIdParams,
  responses: { 200: { description: 'The dataset.', schema: DatasetSchema, example: datasetExample } },
  problems: ['not-found'],
  async handle({ res, deps, params }) {
    const dataset = await findDataset(deps.pool, tenantOf(res), params.id);
    if (!dataset) throw datasetNotFound(params.id);
    res.json(dataset);
  },
});
