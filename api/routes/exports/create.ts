import { exportExample } from '../../examples.ts';
import { z } from 'zod';
import { datasetNotFound, findDataset } from '../../../shared/domain/datasets.ts';
import { withTransaction } from '../../../shared/platform/db.ts';
import { createExport } from '../../../shared/domain/exports.ts';
import { EXPORT_FORMAT_NAMES, EXPORT_FORMATS } from '../../../shared/domain/exportFormats.ts';
import { Problem } from '../../../shared/platform/problems.ts';
import { findExportableVersion } from '../../../shared/domain/versions.ts';
import { defineOperation } from '../../defineOperation.ts';
import { tenantOf } from '../../principal.ts';
import { DatasetIdParams } from '../datasets/schemas.ts';
import { ExportSchema, orList } from './render.ts';
import { renderExport } from '../../../shared/domain/exports.ts';

export const CreateExportBody = z
  .strictObject({
    format: z.enum(EXPORT_FORMAT_NAMES),
    versionId: z.string().min(1).max(100).optional().meta({ description: 'Default: the active version.' }),
  })
  .meta({ id: 'CreateExportRequest' });

export default defineOperation({
  operationId: 'createExport',
  method: 'post',
  path: '/v1/datasets/:id/exports',
  surface: 'v1',
  tags: ['Exports'],
  summary: 'Request an export',
  description:
    `Queues an export of a version's rows (the active one by default) as ${orList(EXPORT_FORMAT_NAMES.map((f) => EXPORT_FORMATS[f].described))}. ` +
    'A worker builds it; GET the export until it is ready. 404 when there is no such version or it failed.',
  params: DatasetIdParams,
  body: CreateExportBody,
  bodyExample: { format: 'csv' },
  responses: {
    202: {
      description: 'The export, queued.',
      schema: ExportSchema,
      example: { ...exportExample, status: 'queued', rowCount: null, bytes: null, completedAt: null, expiresAt: null, downloadUrl: null },
      headers: { Location: 'URL of the export.' },
    },
  },
  problems: ['not-found', 'bad-request', 'unsupported-media-type'],
  async handle({ res, deps, params, body }) {
    const tenant = tenantOf(res);
    const dataset = await findDataset(deps.pool, tenant, params.id);
    if (!dataset) throw datasetNotFound(params.id);
    const versionId = body.versionId ?? dataset.activeVersionId;
    if (!versionId) throw new Problem('not-found', 'The dataset has no active version to export.');
    if (!(await findExportableVersion(deps.pool, tenant, dataset.id, versionId))) {
      throw new Problem(
        'not-found',
        `No exportable version with id ${JSON.stringify(versionId)} exists: only built versions can be exported, until their rows are purged.`,
      );
    }
    const created = await withTransaction(deps.pool, (client) => createExport(client, deps.boss, { datasetId: dataset.id, versionId, format: body.format }));
    res
      .status(202)
      .location(`${deps.config.baseUrl}/v1/datasets/${dataset.id}/exports/${created.id}`)
      .json(await renderExport(deps, created));
  },
});
