import { list, versionExample } from '../../examples.ts';
import { datasetNotFound, findDataset } from '../../../shared/domain/datasets.ts';
import { listVersions } from '../../../shared/domain/versions.ts';
import { defineOperation } from '../../defineOperation.ts';
import { tenantOf } from '../../principal.ts';
import { listOf, PaginationQuery } from '../../schemas.ts';
import { DatasetIdParams } from '../datasets/schemas.ts';
import { StreamedJson } from '../../streamedJson.ts';
import { VersionSchema } from './render.ts';
import { renderVersion } from '../../../shared/domain/versions.ts';

export default defineOperation({
  operationId: 'listVersions',
  method: 'get',
  path: '/v1/datasets/:id/versions',
  surface: 'v1',
  tags: ['Versions'],
  summary: 'List versions',
  description: 'The versions of a dataset, newest first.',
  params: DatasetIdParams,
  query: PaginationQuery,
  responses: { 200: { description: 'A page of versions.', schema: listOf(VersionSchema, 'VersionList'), example: list(versionExample) } },
  problems: ['not-found', 'bad-request'],
  async handle({ req, res, deps, params, query }) {
    const dataset = await findDataset(deps.pool, tenantOf(res), params.id);
    if (!dataset) throw datasetNotFound(params.id);
    const page = await listVersions(deps.pool, dataset.id, query);
    if (req.method === 'HEAD') return void res.type('json').end();
    const data = [];
    for (const version of page.versions) data.push(await renderVersion(deps.pool, version, deps.config));
    await new StreamedJson().send(res, { object: 'list', data, nextCursor: page.nextCursor });
  },
});
