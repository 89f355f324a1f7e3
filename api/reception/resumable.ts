// Resumable uploads over the tus 1.0 protocol (creation, creation-with-upload, termination,
// expiration), served by @tus/server at an upload's signed tus URL (api/routes/uploads/resumable.ts
// checks the signature first). The file goes to the upload's blob through
// shared/domain/resumableUploads.ts; requests on one upload take turns through UploadLocks, across
// processes. Every refusal is a problem document, with the status tus prescribes.
import type { Request, Response } from 'express';
import { Server } from '@tus/server';
import { NodeRequest, sendNodeResponse } from 'srvx/node';
import type { BlobStore } from '../../shared/blobs/blobStore.ts';
import { ResumableUploads } from '../../shared/domain/resumableUploads.ts';
import { findUpload } from '../../shared/domain/uploads.ts';
import type { Config } from '../../shared/platform/config.ts';
import { isDatabaseUnavailable, type Pool } from '../../shared/platform/db.ts';
import type { Logger } from '../../shared/platform/log.ts';
import { Problem, type ProblemType } from '../../shared/platform/problems.ts';
import { UploadLocks } from './uploadLocks.ts';

/** The tus URL of an upload: creation, then HEAD, PATCH and DELETE, all at the same (signed) URL. */
export const resumablePath = (uploadId: string) => `/uploads/${uploadId}/tus`;
const uploadIdIn = (url: string) => /^\/uploads\/([^/]+)\/tus$/.exec(new URL(url).pathname)?.[1];

const problemTypeOf: Record<number, ProblemType> = {
  400: 'bad-request',
  403: 'forbidden',
  404: 'not-found',
  409: 'conflict',
  410: 'gone',
  412: 'precondition-failed',
  413: 'payload-too-large',
  415: 'unsupported-media-type',
  423: 'locked',
  501: 'not-implemented',
  503: 'unavailable',
};

export type ResumableReception = {
  /** Answers a tus request whose URL signature was checked. */
  serve(req: Request, res: Response): Promise<void>;
  stop(): Promise<void>;
};

export function createResumableReception(deps: { config: Config; pool: Pool; blobs: BlobStore; log: Logger }, databaseUrl: string): ResumableReception {
  const { config, pool, log } = deps;
  const locks = new UploadLocks(pool, databaseUrl, log);
  const tus = new Server({
    path: '/uploads',
    datastore: new ResumableUploads(pool, deps.blobs),
    locker: locks,
    maxSize: async (_req, id) => (id ? (await findUpload(pool, id))?.maxBytes : undefined) ?? config.maxUploadBytes,
    // The upload's URL is the one the creation came to: its signature covers all of its requests.
    generateUrl: (req) => {
      const url = new URL(req.url);
      return config.baseUrl + url.pathname + url.search;
    },
    getFileIdFromRequest: (req) => uploadIdIn(req.url),
    namingFunction: (req) => uploadIdIn(req.url)!,
    onResponseError: (_req, error) => {
      if (!(error instanceof Error)) return undefined; // a refusal of the protocol's: its status stands
      if (isDatabaseUnavailable(error)) {
        log.warn({ err: error }, 'database unavailable');
        return { status_code: 503, body: 'The service cannot reach its database right now. Resume the upload shortly: nothing received is lost.' };
      }
      log.error({ err: error }, 'resumable upload failed');
      return { status_code: 500, body: 'The service failed while taking this part of the upload. Resume it: the bytes it stored are kept.' };
    },
  });

  return {
    async serve(req, res) {
      const answer = await tus.handleWeb(new NodeRequest({ req, res }));
      if (answer.status < 400) {
        await sendNodeResponse(res, answer);
        return;
      }
      const headers: Record<string, string> = {};
      answer.headers.forEach((value, name) => {
        if (!name.startsWith('content-')) headers[name] = value;
      });
      const detail = (await answer.text()).trim();
      const type = problemTypeOf[answer.status] ?? 'internal';
      throw new Problem(type, detail || `The tus request was refused (${answer.status}).`, { headers });
    },
    stop: () => locks.stop(),
  };
}
