import { z } from 'zod';
import { datasetNotFound, findDataset } from '../../../shared/domain/datasets.ts';
import { SIGNED_URL_TTL_SECONDS, signingSecret, signPath } from '../../../shared/platform/signedUrls.ts';
import { createUpload, UNUSED_UPLOAD_HOURS, uploadPath } from '../../../shared/domain/uploads.ts';
import { resumablePath } from '../../reception/resumable.ts';
import { keepAnswerWithout } from '../../filters/idempotency.ts';
import { defineOperation, type Deps } from '../../defineOperation.ts';
import { tenantOf } from '../../principal.ts';
import { DatasetIdParams } from '../datasets/schemas.ts';

/**
 * An upload's answer is kept without its URL (a live capability) but with what signs it again:
 * the upload's id, expiry and, with an object store, its blob. No secret in it.
 */
type UrlInputs = { uploadId: string; expiresAt: string; blobId: string | null };

export const CreateUploadBody = z
  .strictObject({
    filename: z.string().min(1).max(255).optional(),
    contentType: z.literal('text/csv').optional(),
  })
  .meta({ id: 'CreateUploadRequest' });

export const UploadSchema = z
  .object({
    id: z.string(),
    object: z.literal('upload'),
    datasetId: z.string(),
    status: z.enum(['pending', 'uploaded', 'used']),
    url: z.string().meta({ description: 'Signed URL: PUT the raw file here, with no Authorization header. Valid one hour.' }),
    method: z.literal('PUT'),
    expiresAt: z.string().meta({ format: 'date-time' }),
    maxBytes: z.number().int(),
    tusEndpoint: z.string().meta({
      description:
        'Signed tus 1.0 endpoint for a resumable upload of the same file (creation, creation-with-upload, termination, expiration), ' +
        'for tus clients such as tus-js-client or Uppy: no Authorization header, the signature is the permission. ' +
        'Valid 24 hours; an unfinished resumable upload expires then.',
    }),
  })
  .meta({ id: 'Upload' });

export default defineOperation({
  operationId: 'createUpload',
  method: 'post',
  path: '/v1/datasets/:id/uploads',
  surface: 'v1',
  tags: ['Uploads'],
  summary: 'Request an upload URL',
  description:
    'Returns a signed URL to PUT a large file to, valid one hour, and a signed tus endpoint to upload it resumably ' +
    '(a connection lost at 90% resumes at 90%), valid 24 hours; then create a version with JSON {"uploadId": …}. ' +
    'Neither needs a credential: the signature is the permission.',
  params: DatasetIdParams,
  body: CreateUploadBody,
  bodyExample: { filename: 'contracts-2026-11.csv', contentType: 'text/csv' },
  responses: {
    201: {
      description: 'The upload, pending its file.',
      schema: UploadSchema,
      example: {
        id: 'upl_9x2kq7m4p1s8v3d6f0hw',
        object: 'upload',
        datasetId: 'ds_4tq8m2x7k1p9v3s6d0fw',
        status: 'pending',
        url: 'https://api.example.com/uploads/upl_9x2kq7m4p1s8v3d6f0hw?expires=1795428000&signature=kB2q…',
        method: 'PUT',
        expiresAt: '2026-11-23T10:00:00.000Z',
        maxBytes: 2147483648,
        tusEndpoint: 'https://api.example.com/uploads/upl_9x2kq7m4p1s8v3d6f0hw/tus?expires=1795510800&signature=Qm7x…',
      },
    },
  },
  problems: ['not-found', 'bad-request', 'unsupported-media-type'],
  keptAnswers: {
    /** The kept document with its URL signed again: the same bytes as the first answer. */
    async uploadUrl({ res, deps, keptBody }, inputs: UrlInputs) {
      const answer = JSON.parse(keptBody.toString('utf8')) as Record<string, unknown>;
      answer['url'] = await uploadUrl(deps, inputs);
      answer['tusEndpoint'] = await tusEndpoint(deps, inputs);
      res.end(Buffer.from(JSON.stringify(answer)));
    },
  },
  async handle({ res, deps, params, body }) {
    const dataset = await findDataset(deps.pool, tenantOf(res), params.id);
    if (!dataset) throw datasetNotFound(params.id);
    // An object store takes the file itself, through its own presigned PUT URL; otherwise our signed /uploads URL.
    const directBlobId = await deps.blobs.newDirectUpload?.();
    const upload = await createUpload(deps.pool, {
      datasetId: dataset.id,
      filename: body.filename,
      contentType: body.contentType ?? 'text/csv',
      maxBytes: deps.config.maxUploadBytes,
      ...(directBlobId && { blobId: directBlobId }),
    });
    const inputs: UrlInputs = { uploadId: upload.id, expiresAt: upload.expiresAt.toISOString(), blobId: directBlobId ?? null };
    const answer = {
      id: upload.id,
      object: 'upload',
      datasetId: dataset.id,
      status: upload.status,
      url: await uploadUrl(deps, inputs),
      method: 'PUT',
      expiresAt: inputs.expiresAt,
      maxBytes: upload.maxBytes,
      tusEndpoint: await tusEndpoint(deps, inputs),
    };
    // The URLs are the permission to write the file: a kept answer holds what signs them, not them.
    keepAnswerWithout(res, Buffer.from(JSON.stringify({ ...answer, url: null, tusEndpoint: null })), { uploadUrl: inputs });
    res.status(201).json(answer);
  },
});

/**
 * The upload URL, from its inputs alone: our HMAC over the upload's path and expiry, or the
 * object store's presigned PUT, signed as of the moment the upload was made (its expiry less the
 * URL's lifetime). The same upload always gets the same URL.
 */
async function uploadUrl(deps: Pick<Deps, 'pool' | 'blobs' | 'config'>, u: UrlInputs): Promise<string> {
  const expires = Date.parse(u.expiresAt) / 1000;
  if (u.blobId && deps.blobs.presignUpload) {
    return deps.blobs.presignUpload(u.blobId, new Date((expires - SIGNED_URL_TTL_SECONDS) * 1000), SIGNED_URL_TTL_SECONDS);
  }
  return deps.config.baseUrl + signPath(await signingSecret(deps.pool), uploadPath(u.uploadId), expires);
}

/** The signed tus endpoint, valid as long as the upload is kept unused (24 hours from its request). */
async function tusEndpoint(deps: Pick<Deps, 'pool' | 'config'>, u: UrlInputs): Promise<string> {
  const requestedAt = Date.parse(u.expiresAt) / 1000 - SIGNED_URL_TTL_SECONDS;
  return deps.config.baseUrl + signPath(await signingSecret(deps.pool), resumablePath(u.uploadId), requestedAt + UNUSED_UPLOAD_HOURS * 3600);
}
