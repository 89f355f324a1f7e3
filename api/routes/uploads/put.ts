// PUT /uploads/{id}?expires=…&signature=…: the file of an upload URL, outside /v1. The signed URL
// is the permission: no Authorization, no Idempotency-Key (a PUT of the same file is idempotent).
import { csvExample, ids } from '../../examples.ts';
import { z } from 'zod';
import { attachUploadedFile } from '../../../shared/domain/intake.ts';
import { Problem } from '../../../shared/platform/problems.ts';
import { signatureValid, signingSecret } from '../../../shared/platform/signedUrls.ts';
import { findUpload, uploadPath } from '../../../shared/domain/uploads.ts';
import { defineOperation } from '../../defineOperation.ts';
import { receiveRawBody } from '../../reception/rawBody.ts';
import { SignedUrlQuery } from '../../schemas.ts';

const forbidden = () => new Problem('forbidden', 'The upload URL is not valid or has expired. Request a new one.');
const used = () => new Problem('conflict', 'This upload was already used by a version; request a new upload URL.');

export default defineOperation({
  operationId: 'putUpload',
  method: 'put',
  path: '/uploads/:uploadId',
  surface: 'public',
  tags: ['Uploads'],
  summary: 'Upload the file to a signed URL',
  description: 'The raw file as the body. 403 for a bad or expired signature, 413 over maxBytes, 409 once the upload was used.',
  params: z.object({ uploadId: z.string().min(1).max(100) }),
  query: SignedUrlQuery,
  otherBodies: { 'text/csv': { schema: z.string().meta({ description: 'The CSV file.' }), example: csvExample } },
  responses: {
    200: {
      description: 'Stored.',
      schema: z.object({ id: z.string(), status: z.literal('uploaded'), bytes: z.number().int(), sha256: z.string() }),
      example: { id: ids.upload, status: 'uploaded', bytes: 9612345, sha256: '9f2c0b1e5d7a8c4f3e6b2a1d0c9e8f7a6b5c4d3e2f1a0b9c8d7e6f5a4b3c2d1e' },
    },
  },
  problems: ['forbidden', 'payload-too-large', 'conflict'],
  async handle({ req, res, deps, params, query }) {
    const secret = await signingSecret(deps.pool);
    if (!signatureValid(secret, uploadPath(params.uploadId), query.expires, query.signature)) throw forbidden();
    const upload = await findUpload(deps.pool, params.uploadId);
    if (!upload) throw forbidden();
    if (upload.status === 'used') throw used();
    const blob = await receiveRawBody(req, deps.blobs, upload.maxBytes);
    if (!(await attachUploadedFile(deps, upload.id, blob))) throw used();
    res.json({ id: upload.id, status: 'uploaded', bytes: blob.bytes, sha256: blob.sha256.toString('hex') });
  },
});
