// GET /v1/datasets/{id}/versions/{versionId}/changes: what changed since another version (by
// default the one it replaced): contracts added, removed, changed and unchanged, and the restated
// months (../shared/spec/contract.md, "Reading and comparing versions"). Computed the first time
// a pair is asked for, then kept.
import type { Response } from 'express';
import { z } from 'zod';
import { changesOf, type VersionPair } from '../../../shared/domain/versionChanges.ts';
import type { VersionRecord } from '../../../shared/domain/versions.ts';
import { Problem } from '../../../shared/platform/problems.ts';
import { defineOperation, type Deps } from '../../defineOperation.ts';
import { versionChangesExample } from '../../examples.ts';
import { tenantOf } from '../../principal.ts';
import { readableVersion, rowsPurged } from '../datasets/readableVersion.ts';

export const VersionPathParams = z.object({ id: z.string().min(1).max(100), versionId: z.string().min(1).max(100) });

export const SinceQuery = z
  .string()
  .min(1)
  .max(100)
  .optional()
  .meta({ description: 'The version to compare with: one of the dataset that became active. Default: the version this one replaced (replacedVersionId).', example: 'ver_1q2w3e4r5t6y7u8i9o0p' });

const Figures = z.object({ mrr: z.string().meta({ example: '6384000.00' }), activeCustomers: z.number().int() });

export const VersionChangesSchema = z
  .object({
    object: z.literal('version_changes'),
    datasetId: z.string(),
    versionId: z.string(),
    sinceVersionId: z.string().meta({ description: 'The version compared with.' }),
    contracts: z
      .object({
        added: z.number().int().meta({ description: 'Contracts in this version and not in the other.' }),
        removed: z.number().int().meta({ description: 'Contracts in the other version and not in this one.' }),
        changed: z.number().int().meta({ description: 'Contracts whose contractId is in both, with another value in any column.' }),
        unchanged: z.number().int().meta({ description: 'Rows of this version equal to one of the other.' }),
      })
      .meta({ description: 'Contracts are matched by contractId; rows without one by their whole content (all seven columns), as a multiset: a row twice in one version and once in the other is once unchanged and once added or removed.' }),
    months: z
      .array(
        z.object({
          month: z.string().meta({ description: 'YYYY-MM' }),
          currency: z.string(),
          before: Figures.meta({ description: 'The month end in the other version (0 when its series lacks the month).' }),
          after: Figures.meta({ description: 'The month end in this version (0 when its series lacks the month).' }),
          mrrChange: z.string().meta({ description: 'after.mrr − before.mrr.', example: '-2500.00' }),
        }),
      )
      .meta({ description: 'The restated months: every (month, currency) whose MRR or active customers differ between the two versions, ordered by currency then month.' }),
  })
  .meta({ id: 'VersionChanges' });

/**
 * The two versions compared: the one in the path and `since` (by default the one it replaced),
 * each a version of the dataset that became active, with its rows still kept; else the 404.
 */
export async function versionPair(deps: Deps, res: Response, datasetId: string, versionId: string, since: string | undefined): Promise<VersionPair & { version: VersionRecord }> {
  const tenant = tenantOf(res);
  const version = await readableVersion(deps.pool, tenant, datasetId, versionId);
  const sinceId = since ?? version.replacedVersionId;
  if (sinceId === null) {
    throw new Problem('not-found', `Version ${version.id} replaced no version (it is the dataset's first): name one to compare it with in ?since=.`);
  }
  const before = await readableVersion(deps.pool, tenant, datasetId, sinceId);
  for (const v of [version, before]) if (v.rowsPurgedAt) throw rowsPurged(v, 'changes with it');
  return { version, versionId: version.id, sinceVersionId: before.id };
}

export default defineOperation({
  operationId: 'getVersionChanges',
  method: 'get',
  path: '/v1/datasets/:id/versions/:versionId/changes',
  surface: 'v1',
  tags: ['Versions'],
  summary: 'What changed since another version',
  description:
    'The contracts added, removed, changed and unchanged since another version of the dataset that became active (by default the one this version replaced), ' +
    'and the restated months: every (month, currency) whose MRR or active customers differ, with both figures. ' +
    'Computed the first time a pair is asked for (within seconds for a million rows) and kept: later answers are immediate. ' +
    'Each changed contract, with its row before and after: GET …/changes/contracts. ' +
    '404 when either version is not one of the dataset that became active, when the version replaced none and `since` is absent, or once the rows of either were purged.',
  params: VersionPathParams,
  query: z.object({ since: SinceQuery }),
  responses: { 200: { description: 'The changes.', schema: VersionChangesSchema, example: versionChangesExample } },
  problems: ['not-found', 'bad-request'],
  async handle({ res, deps, params, query }) {
    const pair = await versionPair(deps, res, params.id, params.versionId, query.since);
    const { contracts, months } = await changesOf(deps.pool, pair, pair.version.rowCount ?? 0);
    // Kept as JSON text: sent as it is, not parsed and written again.
    const head = JSON.stringify({ object: 'version_changes', datasetId: params.id, versionId: pair.versionId, sinceVersionId: pair.sinceVersionId }).slice(0, -1);
    res.type('application/json').send(`${head},"contracts":${contracts},"months":${months}}`);
  },
});
