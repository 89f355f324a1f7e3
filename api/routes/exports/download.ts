// GET /exports/{id}/download?expires=…&signature=…: the signed downloadUrl, outside /v1. The
// signature is the permission; it expires one hour after the export was read.
import { z } from 'zod';
import { exportById, exportPath } from '../../../shared/domain/exports.ts';
import { Problem } from '../../../shared/platform/problems.ts';
import { signatureValid, signingSecret } from '../../../shared/platform/signedUrls.ts';
import { defineOperation } from '../../defineOperation.ts';
import { SignedUrlQuery } from '../../schemas.ts';
import { exportFileAnswer, sendExportFile } from './render.ts';

export default defineOperation({
  operationId: 'downloadExport',
  method: 'get',
  path: '/exports/:exportId/download',
  surface: 'public',
  tags: ['Exports'],
  summary: 'Download an export through its signed URL',
  description: 'No credential: the signature is the permission. 403 for a bad or expired signature.',
  params: z.object({ exportId: z.string().min(1).max(100) }),
  query: SignedUrlQuery,
  responses: {
    200: exportFileAnswer,
  },
  problems: ['forbidden', 'conflict'],
  async handle({ res, deps, params, query }) {
    const secret = await signingSecret(deps.pool);
    const forbidden = new Problem('forbidden', 'The download URL is not valid or has expired. Read the export again for a new one.');
    if (!signatureValid(secret, exportPath(params.exportId), query.expires, query.signature)) throw forbidden;
    const exp = await exportById(deps.pool, params.exportId);
    if (!exp) throw forbidden;
    await sendExportFile(deps.blobs, res, exp, deps.config.clientStallTimeoutMs);
  },
});
