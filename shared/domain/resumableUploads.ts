// Resumable uploads (tus 1.0, served by @tus/server in api/reception/resumable.ts) of an upload's
// file. The protocol names an upload by our upload id; the bytes go to the upload's blob through
// the blob store's resumable store (keyed by blob id), whose offsets live in PostgreSQL. One tus
// upload per upload at a time, expiring with the upload 24 hours after it was requested; once
// whole, the upload is `uploaded` and a version uses it with {"uploadId"} as any other.
import { DataStore, ERRORS, Upload } from '@tus/utils';
import type { Readable } from 'node:stream';
import type { BlobStore } from '../blobs/blobStore.ts';
import type { Pool } from '../platform/db.ts';
import { newId } from '../platform/ids.ts';
import { endResumable, findUpload, markUploaded, startResumable, UNUSED_UPLOAD_HOURS } from './uploads.ts';

/** A tus answer (@tus/server sends `status_code` and `body`). */
const refusal = (status_code: number, body: string) => ({ status_code, body });

export class ResumableUploads extends DataStore {
  private readonly pool: Pool;
  private readonly blobs: BlobStore;

  constructor(pool: Pool, blobs: BlobStore) {
    super();
    this.pool = pool;
    this.blobs = blobs;
    this.extensions = blobs.resumable.extensions;
  }

  /** The blob of the upload's resumable upload, and when the upload was requested. */
  private async blobOf(uploadId: string): Promise<{ blobId: string; requestedAt: Date }> {
    const upload = await findUpload(this.pool, uploadId);
    if (!upload?.resumableAt || !upload.blobId) throw ERRORS.FILE_NOT_FOUND;
    return { blobId: upload.blobId, requestedAt: upload.createdAt };
  }

  override async create(upload: Upload): Promise<Upload> {
    const newBlobId = newId('blob');
    const started = await startResumable(this.pool, upload.id, newBlobId);
    if (!started) {
      throw refusal(409, 'This upload already has a file, or a resumable upload under way: resume that one (HEAD its URL), or request a new upload.');
    }
    try {
      await this.blobs.resumable.create(new Upload({ ...upload, id: started.blobId }));
    } catch (error) {
      await endResumable(this.pool, upload.id, newBlobId);
      throw error;
    }
    upload.creation_date = started.requestedAt.toISOString();
    return upload;
  }

  override async getUpload(id: string): Promise<Upload> {
    const { blobId, requestedAt } = await this.blobOf(id);
    const stored = await this.blobs.resumable.getUpload(blobId);
    return new Upload({
      id,
      offset: stored.offset,
      ...(stored.size !== undefined && { size: stored.size }),
      ...(stored.metadata && { metadata: stored.metadata }),
      creation_date: requestedAt.toISOString(),
    });
  }

  /** Appends from `offset`; the upload becomes `uploaded` with its last byte. */
  override async write(stream: Readable, id: string, offset: number): Promise<number> {
    const { blobId } = await this.blobOf(id);
    const received = await this.blobs.resumable.write(stream, blobId, offset);
    const stored = await this.blobs.resumable.getUpload(blobId);
    if (stored.size === received) await markUploaded(this.pool, id, received);
    return received;
  }

  /** Termination: the bytes are deleted and the upload is pending again, with no file. */
  override async remove(id: string): Promise<void> {
    const { blobId } = await this.blobOf(id);
    await this.blobs.resumable.remove(blobId);
    await endResumable(this.pool, id, this.blobs.kind === 'postgres' ? blobId : null);
  }

  /** An unfinished upload expires with its upload: 24 hours after it was requested. */
  override getExpiration(): number {
    return UNUSED_UPLOAD_HOURS * 3600_000;
  }

  /** Expired uploads are purged with their files by the retention job (uploads.ts, fileRetention.ts). */
  override async deleteExpired(): Promise<number> {
    return 0;
  }
}
