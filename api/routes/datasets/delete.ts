import { z } from 'zod';
import { datasetNotFound, deleteDataset } from '../../../shared/domain/datasets.ts';
import { withdrawDownloads } from '../../../shared/domain/datasetDeletion.ts';
import { defineOperation } from '../../defineOperation.ts';
import { tenantOf } from '../../principal.ts';
import { DatasetIdParams } from './schemas.ts';

export default defineOperation({
  operationId: 'deleteDataset',
  method: 'delete',
  path: '/v1/datasets/:id',
  surface: 'v1',
  tags: ['Datasets'],
  summary: 'Delete a dataset',
  description:
    'From this answer on the dataset answers 404 everywhere (its versions, metrics, catalog, exports and upload URLs too) and its ' +
    'externalRef is free again. Its rows, versions, uploads, exports and files are purged in the background. A dataset.deleted event is sent.',
  params: DatasetIdParams,
  responses: {
    200: {
      description: 'Deleted.',
      schema: z.object({ id: z.string(), object: z.literal('dataset'), deleted: z.literal(true) }).meta({ id: 'DeletedDataset' }),
      example: { id: 'ds_3k9x0v4m7q2r8t1w5y6z', object: 'dataset', deleted: true },
    },
  },
  problems: ['not-found'],
  async handle({ res, deps, params }) {
    if (!(await deleteDataset(deps.pool, deps.boss, tenantOf(res), params.id))) throw datasetNotFound(params.id);
    // The deletion is committed: a store that fails now leaves the files to the purge, which retries.
    await withdrawDownloads(deps.pool, deps.blobs, params.id).catch((error: unknown) =>
      deps.log.warn({ err: error, datasetId: params.id }, 'export files of a deleted dataset not withdrawn yet; the purge deletes them'),
    );
    res.json({ id: params.id, object: 'dataset', deleted: true });
  },
});
