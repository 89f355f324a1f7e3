import { versionExample } from '../../examples.ts';
import { z } from 'zod';
import { findVersion, versionNotFound } from '../../../shared/domain/versions.ts';
import { defineOperation } from '../../defineOperation.ts';
import { tenantOf } from '../../principal.ts';
import { StreamedJson } from '../../streamedJson.ts';
import { VersionSchema } from './render.ts';
import { renderVersion } from '../../../shared/domain/versions.ts';

export default defineOperation({
  operationId: 'getVersion',
  method: 'get',
  path: '/v1/datasets/:id/versions/:versionId',
  surface: 'v1',
  tags: ['Versions'],
  summary: 'Retrieve a version',
  description: 'The version with its status and progress; a failed version carries its problem document (a 422 with its first 100 row errors, `errorCount` and `errorsUrl`).',
  params: z.object({ id: z.string().min(1).max(100), versionId: z.string().min(1).max(100) }),
  responses: { 200: { description: 'The version.', schema: VersionSchema, example: versionExample } },
  problems: ['not-found'],
  async handle({ req, res, deps, params }) {
    const version = await findVersion(deps.pool, tenantOf(res), params.id, params.versionId);
    if (!version) throw versionNotFound(params.versionId);
    // A HEAD answers the status and headers alone: nothing is read for a body nobody receives.
    if (req.method === 'HEAD') return void res.type('json').end();
    await new StreamedJson().send(res, await renderVersion(deps.pool, version, deps.config));
  },
});
