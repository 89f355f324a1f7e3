// /uploads/{id}/tus?expires=…&signature=…: the upload's file, resumably, over the tus 1.0 protocol
// (api/reception/resumable.ts). As for the PUT, the signed URL is the permission: no
// Authorization, no Idempotency-Key (tus requests are safe to repeat: a PATCH names its offset).
// Creation, HEAD, PATCH and DELETE all go to this one URL.
import { z } from 'zod';
import { findUpload } from '../../../shared/domain/uploads.ts';
import { Problem } from '../../../shared/platform/problems.ts';
import { signatureValid, signingSecret } from '../../../shared/platform/signedUrls.ts';
import { defineOperation, type HttpMethod, type Operation, type ResponseSpec } from '../../defineOperation.ts';
import { resumablePath } from '../../reception/resumable.ts';
import { SignedUrlQuery } from '../../schemas.ts';
import type { ProblemType } from '../../../shared/platform/problems.ts';

const UploadIdParams = z.object({ uploadId: z.string().min(1).max(100) });
const TusResumable = z.literal('1.0.0').meta({ description: 'The tus protocol version: required on every request but OPTIONS.' });
const expiresHeader = 'When the unfinished upload expires (24 hours after the upload was requested), e.g. "Tue, 24 Nov 2026 08:00:00 GMT".';

/** Every tus request: the signature first (403 as for the PUT), then 409 once a version used the upload. */
const serveResumable: Operation['handle'] = async ({ req, res, deps, params, query }) => {
  const { uploadId } = params as { uploadId: string };
  const { expires, signature } = query as z.output<typeof SignedUrlQuery>;
  if (!signatureValid(await signingSecret(deps.pool), resumablePath(uploadId), expires, signature)) {
    throw new Problem('forbidden', 'The resumable upload URL is not valid or has expired. Request a new upload.');
  }
  const upload = await findUpload(deps.pool, uploadId);
  if (!upload) throw new Problem('forbidden', 'The resumable upload URL is not valid or has expired. Request a new upload.');
  if (upload.status === 'used' && req.method !== 'OPTIONS') {
    throw new Problem('conflict', 'This upload was already used by a version; request a new upload.');
  }
  await deps.resumable.serve(req, res);
};

function tusOperation(spec: {
  operationId: string;
  method: HttpMethod;
  summary: string;
  description: string;
  requestHeaders?: z.ZodObject<z.ZodRawShape>;
  body?: boolean;
  responses: Record<number, ResponseSpec>;
  problems: ProblemType[];
}): Operation {
  return defineOperation({
    operationId: spec.operationId,
    method: spec.method,
    path: '/uploads/:uploadId/tus',
    surface: 'public',
    tags: ['Uploads'],
    summary: spec.summary,
    description: spec.description,
    params: UploadIdParams,
    query: SignedUrlQuery,
    ...(spec.requestHeaders && { requestHeaders: spec.requestHeaders }),
    ...(spec.body && {
      otherBodies: {
        'application/offset+octet-stream': {
          schema: z.string().meta({ format: 'binary', description: 'The next bytes of the file, from Upload-Offset.' }),
          example: 'C-1001,Acme GmbH,Pro,2026-01-01,2026-12-31,1200.00,EUR\n',
        },
      },
    }),
    responses: spec.responses,
    problems: spec.problems,
    handle: serveResumable,
  });
}

export const createResumableUpload = tusOperation({
  operationId: 'createResumableUpload',
  method: 'post',
  summary: 'Start a resumable upload (tus creation)',
  description:
    'The upload object\'s tusEndpoint, as tus clients (tus-js-client, Uppy) take it: declare the file\'s size in Upload-Length, ' +
    'optionally send its first bytes in the same request (creation-with-upload). The upload URL (Location) is this same URL. ' +
    'One resumable upload per upload; 413 when Upload-Length is over maxBytes.',
  requestHeaders: z.object({
    'Tus-Resumable': TusResumable,
    'Upload-Length': z.string().meta({ description: 'The file\'s size in bytes, e.g. "1073741824".' }),
    'Upload-Metadata': z.string().optional().meta({ description: 'tus metadata: comma-separated "key base64(value)" pairs, e.g. "filename Y29udHJhY3RzLmNzdg==". Kept, not used.' }),
  }),
  body: true,
  responses: {
    201: {
      description: 'Created. Send the bytes with PATCH to Location (this URL).',
      headers: {
        Location: 'The upload URL: this same signed URL.',
        'Upload-Offset': 'With creation-with-upload: the bytes stored so far.',
        'Upload-Expires': expiresHeader,
        'Tus-Resumable': '1.0.0',
      },
    },
  },
  problems: ['forbidden', 'conflict', 'bad-request', 'payload-too-large', 'precondition-failed', 'not-implemented', 'locked', 'unavailable'],
});

export const getResumableUploadOffset = tusOperation({
  operationId: 'getResumableUploadOffset',
  method: 'head',
  summary: 'Read a resumable upload\'s offset',
  description: 'How many bytes are stored: resume with a PATCH from there. A client that lost its connection starts here, from any process.',
  requestHeaders: z.object({ 'Tus-Resumable': TusResumable }),
  responses: {
    200: {
      description: 'No body; the offset and length as headers.',
      headers: {
        'Upload-Offset': 'The bytes stored, e.g. "536870912".',
        'Upload-Length': 'The declared size, e.g. "1073741824".',
        'Cache-Control': 'no-store',
        'Tus-Resumable': '1.0.0',
      },
    },
  },
  problems: ['forbidden', 'conflict', 'not-found', 'gone', 'precondition-failed', 'locked', 'unavailable'],
});

export const appendResumableUpload = tusOperation({
  operationId: 'appendResumableUpload',
  method: 'patch',
  summary: 'Send the next bytes of a resumable upload',
  description:
    'The bytes from Upload-Offset on (Content-Type application/offset+octet-stream). A connection cut mid-way keeps what arrived: ' +
    'HEAD to learn the offset and PATCH again. 409 when Upload-Offset is not the upload\'s offset (another request wrote meanwhile); ' +
    'a second PATCH while one is running asks the first to stop and takes over. With the last byte the upload is uploaded: ' +
    'create a version with {"uploadId"}. A PATCH whose client sends slowly holds nothing other requests need (its lock on the upload is a lease, ' +
    'held without a connection), however long it lasts.',
  requestHeaders: z.object({
    'Tus-Resumable': TusResumable,
    'Upload-Offset': z.string().meta({ description: 'Where these bytes start: the upload\'s offset, e.g. "536870912".' }),
  }),
  body: true,
  responses: {
    204: {
      description: 'Stored.',
      headers: { 'Upload-Offset': 'The bytes stored now.', 'Upload-Expires': `While unfinished: ${expiresHeader}`, 'Tus-Resumable': '1.0.0' },
    },
  },
  problems: ['forbidden', 'conflict', 'not-found', 'gone', 'payload-too-large', 'precondition-failed', 'locked', 'unavailable'],
});

export const terminateResumableUpload = tusOperation({
  operationId: 'terminateResumableUpload',
  method: 'delete',
  summary: 'Terminate a resumable upload',
  description: 'Deletes the bytes received; the upload is pending again, with no file, and a new resumable upload (or a PUT) may start.',
  requestHeaders: z.object({ 'Tus-Resumable': TusResumable }),
  responses: { 204: { description: 'Terminated.', headers: { 'Tus-Resumable': '1.0.0' } } },
  problems: ['forbidden', 'conflict', 'not-found', 'precondition-failed', 'locked', 'unavailable'],
});

export const describeResumableUploads = tusOperation({
  operationId: 'describeResumableUploads',
  method: 'options',
  summary: 'The tus versions and extensions offered',
  description: 'tus discovery (and a browser\'s CORS preflight: the signed URL is the permission, so any origin may send the file).',
  responses: {
    204: {
      description: 'No body.',
      headers: {
        'Tus-Version': '1.0.0',
        'Tus-Extension': 'creation,creation-with-upload,termination,expiration',
        'Tus-Max-Size': 'The size limit in bytes (maxBytes).',
      },
    },
  },
  problems: ['forbidden'],
});
