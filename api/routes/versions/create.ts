// POST /v1/datasets/{id}/versions: the file itself (text/csv, streamed), multipart/form-data with
// the file in `file`, or JSON {uploadId}, received by api/reception/. The version and its build job
// are written in one transaction; then the request waits for the outcome up to `Prefer: wait=N` seconds.
import { buildingVersionExample, csvExample, ids, versionExample } from '../../examples.ts';
import { z } from 'zod';
import { datasetNotFound, findDataset } from '../../../shared/domain/datasets.ts';
import { FINISHED, findVersion } from '../../../shared/domain/versions.ts';
import { defineOperation } from '../../defineOperation.ts';
import { tenantOf } from '../../principal.ts';
import { receiveVersion } from '../../reception/index.ts';
import { DatasetIdParams } from '../datasets/schemas.ts';
import { keepStreamedAnswer } from '../../filters/idempotency.ts';
import { StreamedJson } from '../../streamedJson.ts';
import { hasValidationProblem, problemOf, replayValidationProblem, sendValidationProblem, VersionSchema } from './render.ts';
import { renderVersion } from '../../../shared/domain/versions.ts';

const DEFAULT_WAIT_S = 30;
const MAX_WAIT_S = 300;

export const FromUploadBody = z.strictObject({ uploadId: z.string().min(1).max(100) }).meta({ id: 'CreateVersionFromUpload' });

/** `Prefer: wait=N` (RFC 7240): 0 allowed, above 300 counts as 300, default 30. */
export function preferredWait(header: string | undefined): number {
  const match = /(?:^|[,;\s])wait\s*=\s*"?(\d+)"?/i.exec(header ?? '');
  return match ? Math.min(Number(match[1]), MAX_WAIT_S) : DEFAULT_WAIT_S;
}

export default defineOperation({
  operationId: 'createVersion',
  method: 'post',
  path: '/v1/datasets/:id/versions',
  surface: 'v1',
  tags: ['Versions'],
  summary: 'Create a version from a contract file',
  description:
    'Uploads a CSV file of contract rows (or names an upload made through an upload URL) and builds it into a version. ' +
    'The request waits for the build up to `Prefer: wait=N` seconds (default 30, at most 300, 0 allowed): 201 when the version is ' +
    'active, 422 `ingest-validation-failed` listing every row error (nothing is written), or 202 while it is still building, ' +
    'with Location to follow. A file that needs more memory to build than a build may use fails with 413 `payload-too-large` ' +
    '(nothing is written; the same file fails again); a version that could not be built at all, with 500 `internal`. ' +
    'Either problem names the failed version in `versionId`. ' +
    "Builds are shared fairly between accounts: when several accounts have builds queued, each account's next build is taken in turn, " +
    "and a dataset's builds run one at a time, in creation order. A file of at most 1 MiB (sent with its Content-Length, or named by an upload) " +
    'from an account with nothing else queued, to a dataset with no other version queued or building, is built in slots that larger files never take: ' +
    'its answer comes within about 2 seconds whatever other accounts have queued or building. ' +
    'A 422 (and its replay) is sent a page of row errors at a time at the pace the client reads it, holding nothing shared meanwhile; ' +
    'a client that takes nothing of it for CLIENT_STALL_TIMEOUT_MS (60 s by default) has its connection closed.',
  params: DatasetIdParams,
  requestHeaders: z.object({
    Prefer: z.string().optional().meta({
      description: 'wait=N: how many seconds to wait for the build before answering 202 (default 30, 0 for none, above 300 counts as 300).',
      example: 'wait=60',
    }),
  }),
  otherBodies: {
    'text/csv': { schema: z.string().meta({ description: 'The CSV file itself, streamed.' }), example: csvExample },
    'multipart/form-data': { schema: z.object({ file: z.string().meta({ format: 'binary' }) }), example: { file: csvExample } },
    'application/json': { schema: FromUploadBody, example: { uploadId: ids.upload } },
  },
  responses: {
    201: {
      description: 'The version, active (or superseded when a newer version became active first).',
      schema: VersionSchema,
      example: versionExample,
      headers: { Location: 'URL of the version.', 'Preference-Applied': 'wait=N' },
    },
    202: {
      description: 'Still queued or building; poll Location.',
      schema: VersionSchema,
      example: buildingVersionExample,
      headers: { Location: 'URL of the version.', 'Preference-Applied': 'wait=N' },
    },
  },
  problems: ['not-found', 'bad-request', 'conflict', 'ingest-validation-failed', 'payload-too-large', 'unsupported-media-type'],
  problemHeaders: { 422: { Location: 'ingest-validation-failed: URL of the failed version (its first errors, errorCount and errorsUrl).' } },
  keptAnswers: {
    /** A version's 422 with every row error: streamed, never held whole, so kept as the version's id. */
    validationProblemOf: ({ res, deps }, versionId: string) => replayValidationProblem(res, deps.pool, deps.config, versionId),
  },
  async handle({ req, res, deps, params }) {
    const tenant = tenantOf(res);
    const dataset = await findDataset(deps.pool, tenant, params.id);
    if (!dataset) throw datasetNotFound(params.id);
    const wait = preferredWait(req.get('prefer'));
    const created = await receiveVersion(req, res, deps, dataset.id, FromUploadBody);

    let version = created;
    await deps.outcomes.waitFor(created.id, wait * 1000, async () => {
      version = (await findVersion(deps.pool, tenant, dataset.id, created.id)) ?? version;
      return FINISHED.includes(version.status);
    });

    res.set('Preference-Applied', `wait=${wait}`);
    if (hasValidationProblem(version)) {
      // Kept for replay as a reference to the version: the errors are streamed, never held whole.
      const failed = version;
      return sendValidationProblem(res, deps.pool, deps.config, failed, () => keepStreamedAnswer(res, { validationProblemOf: failed.id }));
    }
    const location = `${deps.config.baseUrl}/v1/datasets/${dataset.id}/versions/${version.id}`;
    const body = await renderVersion(deps.pool, version, deps.config);
    if (body.problem) throw problemOf(body.problem);
    res.status(FINISHED.includes(version.status) ? 201 : 202).location(location);
    await new StreamedJson().send(res, body);
  },
});
