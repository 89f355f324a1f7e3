// Upload reception: how the file of a request arrives, by its content type. The file itself as
// text/csv (rawBody.ts), multipart/form-data with the file in `file` (multipart.ts), or JSON naming
// an upload made earlier (uploadId.ts). What the received file becomes: shared/domain/intake.ts.
import type { Request, Response } from 'express';
import type { z } from 'zod';
import { type ReceivedFile, versionOfFile } from '../../shared/domain/intake.ts';
import { EXPRESS_BUILD_MAX_BYTES, type VersionRecord } from '../../shared/domain/versions.ts';
import { Problem } from '../../shared/platform/problems.ts';
import type { Deps } from '../defineOperation.ts';
import { requestPath } from '../problemResponses.ts';
import { receiveMultipartFile } from './multipart.ts';
import { receiveRawBody, versionOfStreamingBody } from './rawBody.ts';
import { receiveUploadId } from './uploadId.ts';

type ReceptionDeps = Pick<Deps, 'config' | 'pool' | 'boss' | 'blobs'>;
/** The operation's JSON body naming an upload. */
type UploadIdBody = z.ZodType<{ uploadId: string }>;

/**
 * The version of the file the request brings, created with its build job. A text/csv body with a
 * store that reads while it writes is built while it streams in, unless its Content-Length says it
 * is small: that one is stored whole first, like any other file, so that it can be built in the
 * express lane (shared/domain/versions.ts), where no build waits on a client.
 */
export async function receiveVersion(req: Request, res: Response, deps: ReceptionDeps, datasetId: string, uploadIdBody: UploadIdBody): Promise<VersionRecord> {
  const request = { datasetId, requestPath: requestPath(req) };
  const declared = req.get('content-length');
  const small = declared !== undefined && Number(declared) <= EXPRESS_BUILD_MAX_BYTES;
  if (req.is('text/csv') && deps.blobs.readsWhileWritten && !small) {
    return versionOfStreamingBody(req, deps, { ...request, maxBytes: deps.config.maxUploadBytes });
  }
  return versionOfFile(deps, await receiveFile(req, res, deps, uploadIdBody), request);
}

/** The file to build: stored now from the body, or named by an upload made earlier. */
async function receiveFile(req: Request, res: Response, deps: ReceptionDeps, uploadIdBody: UploadIdBody): Promise<ReceivedFile> {
  const max = deps.config.maxUploadBytes;
  if (req.is('text/csv')) return { kind: 'blob', blob: await receiveRawBody(req, deps.blobs, max) };
  if (req.is('multipart/form-data')) return { kind: 'blob', blob: await receiveMultipartFile(req, res, deps.blobs, max) };
  if (req.is('application/json')) return { kind: 'upload', uploadId: await receiveUploadId(req, uploadIdBody) };
  throw new Problem('unsupported-media-type', 'Send the file as text/csv, as multipart/form-data in the field "file", or JSON {"uploadId": …}.');
}
