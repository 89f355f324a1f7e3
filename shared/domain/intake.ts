// Intake: a file received for a dataset becomes a version and its build job. The file is stored
// whole first (from a request's body, or put earlier through an upload URL), or it is still
// streaming in while the version is built. api/reception/ receives files over HTTP; what a
// received file becomes, and what is undone when it never arrives whole, is decided here.
import type { PgBoss } from 'pg-boss';
import { type BlobSource, type BlobStore, type StoredBlob, TooLarge } from '../blobs/blobStore.ts';
import { type Pool, withTransaction } from '../platform/db.ts';
import { Problem } from '../platform/problems.ts';
import { attachBlob, findUpload, markUploaded, useUpload } from './uploads.ts';
import { createVersion, deleteVersion, streamedFileArrived, type VersionRecord } from './versions.ts';

export type IntakeDeps = { pool: Pool; boss: PgBoss; blobs: BlobStore };

/** A file to build: stored whole now, or named by an upload made earlier. */
export type ReceivedFile = { kind: 'blob'; blob: StoredBlob } | { kind: 'upload'; uploadId: string };

/** The dataset a version is for, and the path it was asked at (kept on the version). */
export type VersionRequest = { datasetId: string; requestPath: string };

/**
 * A file streaming in, with a store that can be read while written: the version and its build job
 * are created as the first bytes arrive, so the worker builds while the file still streams in.
 * A build that catches up with a slow file hands its slot back; a second job, sent once the file is
 * whole (streamedFileArrived), builds it then. If the file fails (413, a dropped connection), the
 * store deletes the blob and the version is removed, as if never created (if the database is
 * away, the sweep fails it). `declaredBytes`: the size announced, if any (already checked against
 * `maxBytes`).
 */
export async function versionWhileStreaming(
  deps: IntakeDeps,
  source: BlobSource,
  request: VersionRequest & { maxBytes: number; declaredBytes: number | null },
): Promise<VersionRecord> {
  let version: VersionRecord | undefined;
  try {
    const blob = await deps.blobs.write(source, request.maxBytes, async (blobId) => {
      version = await withTransaction(deps.pool, (client) =>
        createVersion(client, deps.boss, { datasetId: request.datasetId, blobId, bytesTotal: request.declaredBytes, requestPath: request.requestPath, whole: false }),
      );
    });
    await streamedFileArrived(deps.pool, deps.boss, version!, blob.bytes);
    return version!;
  } catch (error) {
    if (version) await deleteVersion(deps.pool, version.id);
    throw error;
  }
}

/** The version of a file stored whole first: from the body (multipart, any other store), or an upload's. */
export async function versionOfFile(deps: IntakeDeps, file: ReceivedFile, request: VersionRequest): Promise<VersionRecord> {
  if (file.kind === 'upload') await recordDirectUpload(deps, file.uploadId, request.datasetId);

  return withTransaction(deps.pool, async (client) => {
    if (file.kind === 'blob') {
      return createVersion(client, deps.boss, { datasetId: request.datasetId, blobId: file.blob.id, bytesTotal: file.blob.bytes, requestPath: request.requestPath, whole: true });
    }
    const used = await useUpload(client, file.uploadId, request.datasetId);
    if ('refused' in used) {
      if (used.refused === 'missing') throw new Problem('not-found', `No upload with id ${JSON.stringify(file.uploadId)} exists for this dataset.`);
      throw new Problem('conflict', used.refused === 'used' ? 'This upload was already used by a version.' : 'This upload has no file yet: PUT the file to its URL first.');
    }
    return createVersion(client, deps.boss, {
      datasetId: request.datasetId,
      blobId: used.blobId,
      bytesTotal: used.bytes,
      requestPath: request.requestPath,
      uploadId: file.uploadId,
      whole: true,
    });
  });
}

/**
 * With an object store the client PUTs straight to the bucket, so the service learns of the file
 * only now: a pending upload whose object exists becomes uploaded (413 over its limit).
 */
async function recordDirectUpload(deps: IntakeDeps, uploadId: string, datasetId: string): Promise<void> {
  if (!deps.blobs.uploadedSize) return;
  const upload = await findUpload(deps.pool, uploadId);
  if (!upload || upload.datasetId !== datasetId || upload.status !== 'pending' || !upload.blobId) return;
  const bytes = await deps.blobs.uploadedSize(upload.blobId);
  if (bytes === undefined) return; // no file yet: useUpload answers 409
  if (bytes > upload.maxBytes) throw new TooLarge(upload.maxBytes);
  await markUploaded(deps.pool, upload.id, bytes);
}

/**
 * The file put to an upload URL, stored: it becomes the upload's file and the one it replaces is
 * deleted. False when the upload was used by a version meanwhile: the file is deleted again.
 */
export async function attachUploadedFile(deps: Pick<IntakeDeps, 'pool' | 'blobs'>, uploadId: string, blob: StoredBlob): Promise<boolean> {
  const attached = await attachBlob(deps.pool, uploadId, blob);
  if (!attached) {
    await deps.blobs.delete(blob.id);
    return false;
  }
  if (attached.previousBlobId) await deps.blobs.delete(attached.previousBlobId);
  return true;
}
