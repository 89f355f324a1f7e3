import { z } from 'zod';
import { createDataset } from '../../../shared/domain/datasets.ts';
import { defineOperation } from '../../defineOperation.ts';
import { tenantOf } from '../../principal.ts';
import { DatasetSchema } from './schemas.ts';
import { datasetExample } from '../../examples.ts';

export const CreateDatasetBody = z
  .strictObject({
    externalRef: z.string().min(1).max(200).meta({ description: 'Your reference for the dataset; unique per account and mode.' }),
    name: z.string().max(200).optional(),
  })
  .meta({ id: 'CreateDatasetRequest' });

export default defineOperation({
  operationId: 'createDataset',
  method: 'post',
  path: '/v1/datasets',
  surface: 'v1',
  tags: ['Datasets'],
  summary: 'Create a dataset',
  description:
    'Creates an empty dataset in the credential\'s mode. A duplicate externalRef answers 409 `conflict` with `existingId`.',
  body: CreateDatasetBody,
  bodyExample: { externalRef: 'crm-2026', name: 'CRM contracts' },
  responses: {
    201: { description: 'The new dataset.', schema: DatasetSchema, example: { ...datasetExample, activeVersionId: null }, headers: { Location: 'URL of the dataset.' } },
  },
  problems: ['bad-request', 'conflict', 'unsupported-media-type', 'payload-too-large'],
  async handle({ res, deps, body }) {
    const dataset = await createDataset(deps.pool, tenantOf(res), body);
    res.status(201).location(`${deps.config.baseUrl}/v1/datasets/${dataset.id}`).json(dataset);
  },
});
