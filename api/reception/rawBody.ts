// A file sent as the request body itself (text/csv; the PUT to an upload URL): stored as it
// streams in, or, with a store that reads while it writes, built while it streams in.
import type { Request } from 'express';
import { type BlobStore, type StoredBlob, TooLarge } from '../../shared/blobs/blobStore.ts';
import { type IntakeDeps, versionWhileStreaming, type VersionRequest } from '../../shared/domain/intake.ts';
import type { VersionRecord } from '../../shared/domain/versions.ts';

/** The body stored whole as a blob; 413 at once when its Content-Length is over `maxBytes`. */
export async function receiveRawBody(req: Request, blobs: BlobStore, maxBytes: number): Promise<StoredBlob> {
  if (Number(req.get('content-length')) > maxBytes) throw new TooLarge(maxBytes);
  return blobs.write(req, maxBytes);
}

/** The version of a body still streaming in (shared/domain/intake.ts); 413 at once when its Content-Length is over `maxBytes`. */
export async function versionOfStreamingBody(req: Request, deps: IntakeDeps, request: VersionRequest & { maxBytes: number }): Promise<VersionRecord> {
  const declaredBytes = req.get('content-length') === undefined ? null : Number(req.get('content-length'));
  if (declaredBytes !== null && declaredBytes > request.maxBytes) throw new TooLarge(request.maxBytes);
  return versionWhileStreaming(deps, req, { ...request, declaredBytes });
}
