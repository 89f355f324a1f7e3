// POST /v1/datasets/{id}/versions: the file itself (text/csv, streamed), multipart/form-data with
// the file in `file`, or JSON {uploadId}. The version and its build job are written in one
// transaction; then the request waits for the outcome up to `Prefer: wait=N` seconds.
import type { Request, Response } from 'express';
import multer from 'multer';
import { z } from 'zod';
import { type StoredBlob, TooLarge } from '../../../shared/blobs/blobStore.ts';
import { datasetNotFound, findDataset } from '../../../shared/domain/datasets.ts';
import { withTransaction } from '../../../shared/platform/db.ts';
import { badRequest, Problem } from '../../../shared/platform/problems.ts';
import { findUpload, markUploaded, useUpload } from '../../../shared/domain/uploads.ts';
import { createVersion, deleteVersion, FINISHED, findVersion, streamedFileArrived, type VersionRecord } from '../../../shared/domain/versions.ts';
import { parseOrThrow, readJsonBody } from '../../body.ts';
import { defineOperation, type Deps } from '../../defineOperation.ts';
import { tenantOf } from '../../principal.ts';
import { requestPath } from '../../problemResponses.ts';
import { DatasetIdParams } from '../datasets/schemas.ts';
import { keepStreamedAnswer } from '../../filters/idempotency.ts';
import { StreamedJson } from '../../streamedJson.ts';
import { hasValidationProblem, problemOf, renderVersion, replayValidationProblem, sendValidationProblem, VersionSchema } from './render.ts';

const DEFAULT_WAIT_S = 30;
const MAX_WAIT_S = 300;

export const FromUploadBody = z.strictObject({ uploadId: z.string().min(1).max(100) }).meta({ id: 'CreateVersionFromUpload' });

/** `Prefer: wait=N` (RFC 7240): 0 allowed, above 300 counts as 300, default 30. */
export function preferredWait(header: string | undefined): number {
  const match = /(?:^|[,;\s])wait\s*=\s*"?(\d+)"?/i.exec(header ?? '');
  return match ? Math.min(Number(match[1]), MAX_WAIT_S) : DEFAULT_WAIT_S;
}


/**
 * The file of a multipart/form-data body, stored as it arrives. What the multipart reader refuses
 * (no boundary, a truncated body, a part header over its limit) is the body's fault: 400. What
 * the store fails with while the part itself was fine (its database gone) stays the service's.
 */
function multipartFile(req: Request, res: Response, deps: Deps): Promise<StoredBlob> {
  const max = deps.config.maxUploadBytes;
  const storeFailures = new WeakSet<object>();
  const storage: multer.StorageEngine = {
    _handleFile: (_req, file, done) => {
      deps.blobs.write(file.stream, max).then(
        (blob) => done(null, { blob } as Partial<Express.Multer.File>),
        (error: unknown) => {
          if (!file.stream.errored && error instanceof Object) storeFailures.add(error);
          done(error);
        },
      );
    },
    _removeFile: (_req, file, done) => {
      const blob = (file as unknown as { blob?: StoredBlob }).blob;
      (blob ? deps.blobs.delete(blob.id) : Promise.resolve()).then(() => done(null), done);
    },
  };
  const upload = multer({ storage, limits: { files: 1, fields: 20, fileSize: max } }).single('file');
  return new Promise((resolve, reject) => {
    upload(req, res, (error: unknown) => {
      if (error instanceof multer.MulterError) {
        if (error.code === 'LIMIT_FILE_SIZE') return reject(new TooLarge(max));
        return reject(badRequest('The multipart body is not valid.', [{ field: error.field ?? 'file', code: 'invalid', message: error.message }]));
      }
      if (error instanceof TooLarge || (error instanceof Object && storeFailures.has(error))) return reject(error);
      if (error) {
        return reject(badRequest('The multipart body is not valid.', [{ field: '', code: 'malformed_multipart', message: (error as Error).message }]));
      }
      const blob = (req.file as unknown as { blob?: StoredBlob } | undefined)?.blob;
      if (!blob) return reject(badRequest('The multipart body has no file.', [{ field: 'file', code: 'required', message: 'Send the CSV file in the form field "file".' }]));
      resolve(blob);
    });
  });
}

/**
 * With an object store the client PUTs straight to the bucket, so the service learns of the file
 * only now: a pending upload whose object exists becomes uploaded (413 over its limit).
 */
async function recordDirectUpload(deps: Deps, uploadId: string, datasetId: string): Promise<void> {
  if (!deps.blobs.uploadedSize) return;
  const upload = await findUpload(deps.pool, uploadId);
  if (!upload || upload.datasetId !== datasetId || upload.status !== 'pending' || !upload.blobId) return;
  const bytes = await deps.blobs.uploadedSize(upload.blobId);
  if (bytes === undefined) return; // no file yet: useUpload answers 409
  if (bytes > upload.maxBytes) throw new TooLarge(upload.maxBytes);
  await markUploaded(deps.pool, upload.id, bytes);
}

/**
 * A text/csv body with a store that can be read while written: the version and its build job
 * are created as the first bytes arrive, so the worker builds while the file still streams in.
 * A build that catches up with a slow body hands its slot back; a second job, sent once the body is
 * whole (streamedFileArrived), builds it then. If the body fails (413, a dropped connection), the store deletes the blob
 * and the version is removed, as if never created (if the database is away, the sweep fails it).
 */
async function versionWhileStreaming(req: Request, deps: Deps, datasetId: string): Promise<VersionRecord> {
  const max = deps.config.maxUploadBytes;
  const declared = req.get('content-length') === undefined ? null : Number(req.get('content-length'));
  if (declared !== null && declared > max) throw new TooLarge(max);
  let version: VersionRecord | undefined;
  try {
    const blob = await deps.blobs.write(req, max, async (blobId) => {
      version = await withTransaction(deps.pool, (client) =>
        createVersion(client, deps.boss, { datasetId, blobId, bytesTotal: declared, requestPath: requestPath(req) }),
      );
    });
    await streamedFileArrived(deps.pool, deps.boss, version!, blob.bytes);
    return version!;
  } catch (error) {
    if (version) await deleteVersion(deps.pool, version.id);
    throw error;
  }
}

type ReceivedFile = { kind: 'blob'; blob: StoredBlob } | { kind: 'upload'; uploadId: string };

/** The file to build: stored now from the body, or named by an upload made earlier. */
async function receiveFile(req: Request, res: Response, deps: Deps): Promise<ReceivedFile> {
  const max = deps.config.maxUploadBytes;
  if (req.is('text/csv')) {
    if (Number(req.get('content-length')) > max) throw new TooLarge(max);
    return { kind: 'blob', blob: await deps.blobs.write(req, max) };
  }
  if (req.is('multipart/form-data')) return { kind: 'blob', blob: await multipartFile(req, res, deps) };
  if (req.is('application/json')) {
    const { uploadId } = parseOrThrow(FromUploadBody, await readJsonBody(req), 'request body');
    return { kind: 'upload', uploadId };
  }
  throw new Problem('unsupported-media-type', 'Send the file as text/csv, as multipart/form-data in the field "file", or JSON {"uploadId": …}.');
}

/** The version of a file stored whole first (multipart, an upload URL's file, any other store). */
async function versionFromFile(req: Request, res: Response, deps: Deps, datasetId: string): Promise<VersionRecord> {
  const file = await receiveFile(req, res, deps);
  if (file.kind === 'upload') await recordDirectUpload(deps, file.uploadId, datasetId);

  return withTransaction(deps.pool, async (client) => {
    if (file.kind === 'blob') {
      return createVersion(client, deps.boss, { datasetId, blobId: file.blob.id, bytesTotal: file.blob.bytes, requestPath: requestPath(req) });
    }
    const used = await useUpload(client, file.uploadId, datasetId);
    if ('refused' in used) {
      if (used.refused === 'missing') throw new Problem('not-found', `No upload with id ${JSON.stringify(file.uploadId)} exists for this dataset.`);
      throw new Problem('conflict', used.refused === 'used' ? 'This upload was already used by a version.' : 'This upload has no file yet: PUT the file to its URL first.');
    }
    return createVersion(client, deps.boss, {
      datasetId,
      blobId: used.blobId,
      bytesTotal: used.bytes,
      requestPath: requestPath(req),
      uploadId: file.uploadId,
    });
  });
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
    'Either problem names the failed version in `versionId`.',
  params: DatasetIdParams,
  otherBodies: {
    'text/csv': { schema: z.string().meta({ description: 'The CSV file itself, streamed.' }) },
    'multipart/form-data': { schema: z.object({ file: z.string().meta({ format: 'binary' }) }) },
    'application/json': { schema: FromUploadBody },
  },
  responses: {
    201: { description: 'The version, active (or superseded when a newer version became active first).', schema: VersionSchema, headers: { Location: 'URL of the version.', 'Preference-Applied': 'wait=N' } },
    202: { description: 'Still queued or building; poll Location.', schema: VersionSchema, headers: { Location: 'URL of the version.', 'Preference-Applied': 'wait=N' } },
  },
  problems: ['not-found', 'bad-request', 'conflict', 'ingest-validation-failed', 'payload-too-large', 'unsupported-media-type'],
  keptAnswers: {
    /** A version's 422 with every row error: streamed, never held whole, so kept as the version's id. */
    validationProblemOf: ({ res, deps }, versionId: string) => replayValidationProblem(res, deps.pool, deps.config.errorsBase, versionId),
  },
  async handle({ req, res, deps, params }) {
    const tenant = tenantOf(res);
    const dataset = await findDataset(deps.pool, tenant, params.id);
    if (!dataset) throw datasetNotFound(params.id);
    const wait = preferredWait(req.get('prefer'));
    const created = req.is('text/csv') && deps.blobs.readsWhileWritten
      ? await versionWhileStreaming(req, deps, dataset.id)
      : await versionFromFile(req, res, deps, dataset.id);

    let version = created;
    await deps.outcomes.waitFor(created.id, wait * 1000, async () => {
      version = (await findVersion(deps.pool, tenant, dataset.id, created.id)) ?? version;
      return FINISHED.includes(version.status);
    });

    res.set('Preference-Applied', `wait=${wait}`);
    if (hasValidationProblem(version)) {
      // Kept for replay as a reference to the version: the errors are streamed, never held whole.
      const failed = version;
      return sendValidationProblem(res, deps.pool, deps.config.errorsBase, failed, () => keepStreamedAnswer(res, { validationProblemOf: failed.id }));
    }
    const location = `${deps.config.baseUrl}/v1/datasets/${dataset.id}/versions/${version.id}`;
    const streamed = new StreamedJson();
    const body = renderVersion(deps.pool, version, deps.config.errorsBase, streamed);
    if (body.problem) throw problemOf(body.problem);
    res.status(FINISHED.includes(version.status) ? 201 : 202).location(location);
    await streamed.send(res, body);
  },
});
