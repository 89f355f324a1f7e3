import { z } from 'zod';
import { datasetNotFound, findDataset } from '../../../shared/datasets.ts';
import { SIGNED_URL_TTL_SECONDS, signingSecret, signPath } from '../../../shared/signedUrls.ts';
import { createUpload, uploadPath } from '../../../shared/uploads.ts';
import { defineOperation } from '../../operation.ts';
import { tenantOf } from '../../principal.ts';
import { DatasetIdParams } from '../datasets/schemas.ts';

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
    'Returns a signed URL to PUT a large file to, valid one hour, then create a version with JSON {"uploadId": …}. ' +
    'The PUT needs no credential: the signature is the permission.',
  params: DatasetIdParams,
  body: CreateUploadBody,
  responses: { 201: { description: 'The upload, pending its file.', schema: UploadSchema } },
  problems: ['not-found', 'bad-request', 'unsupported-media-type'],
  async handle({ res, deps, params, body }) {
    const dataset = await findDataset(deps.pool, tenantOf(res), params.id);
    if (!dataset) throw datasetNotFound(params.id);
    // An object store takes the file itself, through its own presigned PUT URL; otherwise our signed /uploads URL.
    const direct = await deps.blobs.presignUpload?.(SIGNED_URL_TTL_SECONDS);
    const upload = await createUpload(deps.pool, {
      datasetId: dataset.id,
      filename: body.filename,
      contentType: body.contentType ?? 'text/csv',
      maxBytes: deps.config.maxUploadBytes,
      ...(direct && { blobId: direct.blobId }),
    });
    const url = direct?.url ?? deps.config.baseUrl + signPath(await signingSecret(deps.pool), uploadPath(upload.id), upload.expiresAt.getTime() / 1000);
    res.status(201).json({
      id: upload.id,
      object: 'upload',
      datasetId: dataset.id,
      status: upload.status,
      url,
      method: 'PUT',
      expiresAt: upload.expiresAt.toISOString(),
      maxBytes: upload.maxBytes,
    });
  },
});
