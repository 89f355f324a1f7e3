import { exportExample } from '../../examples.ts';
import { z } from 'zod';
import { findExport } from '../../../shared/domain/exports.ts';
import { EXPORT_FORMAT_NAMES, mediaType } from '../../../shared/domain/exportFormats.ts';
import { Problem } from '../../../shared/platform/problems.ts';
import { defineOperation } from '../../defineOperation.ts';
import { tenantOf } from '../../principal.ts';
import { exportFileAnswer, ExportSchema, orList, sendExportFile } from './render.ts';
import { renderExport } from '../../../shared/domain/exports.ts';

const ExportParams = z.object({ id: z.string().min(1).max(100), exportId: z.string().min(1).max(100) });
const exportNotFound = (id: string) => new Problem('not-found', `No export with id ${JSON.stringify(id)} exists.`);

export const getExport = defineOperation({
  operationId: 'getExport',
  method: 'get',
  path: '/v1/datasets/:id/exports/:exportId',
  surface: 'v1',
  tags: ['Exports'],
  summary: 'Retrieve an export',
  description: 'Its status; when ready, a signed `downloadUrl` valid one hour (a new one on each read).',
  params: ExportParams,
  responses: { 200: { description: 'The export.', schema: ExportSchema, example: exportExample } },
  problems: ['not-found'],
  async handle({ res, deps, params }) {
    const exp = await findExport(deps.pool, tenantOf(res), params.id, params.exportId);
    if (!exp) throw exportNotFound(params.exportId);
    res.json(await renderExport(deps, exp));
  },
});

export const getExportContent = defineOperation({
  operationId: 'getExportContent',
  method: 'get',
  path: '/v1/datasets/:id/exports/:exportId/content',
  surface: 'v1',
  tags: ['Exports'],
  summary: 'Download an export with the credential',
  description: `The file, streamed: ${orList(EXPORT_FORMAT_NAMES.map(mediaType))}, as an attachment. 409 while the export is not ready.`,
  params: ExportParams,
  responses: {
    200: exportFileAnswer,
  },
  problems: ['not-found', 'conflict'],
  async handle({ res, deps, params }) {
    const exp = await findExport(deps.pool, tenantOf(res), params.id, params.exportId);
    if (!exp) throw exportNotFound(params.exportId);
    await sendExportFile(deps.blobs, res, exp, deps.config.clientStallTimeoutMs);
  },
});
