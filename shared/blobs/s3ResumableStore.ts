// Resumable uploads into the S3 blob store: @tus/s3-store's S3Store (a multipart upload to the
// blob's key, its state in `<key>.info`, a short last part in `<key>.part`), with the parts it has
// uploaded kept in `resumable_parts` (the only writer of that table) instead of asked of S3 with
// ListParts: the offset is then read from PostgreSQL by whichever process resumes, and the store
// works on S3-compatible servers without ListParts (s3rver, which the tests run). Nothing is
// cached per process, so that every process sees the upload as it is.
import { stat } from 'node:fs/promises';
import type { ReadStream } from 'node:fs';
import type { Readable } from 'node:stream';
import type { Part } from '@aws-sdk/client-s3';
import { S3Store, type MetadataValue } from '@tus/s3-store';
import { ERRORS, type KvStore } from '@tus/utils';
import type { S3ClientConfig } from '@aws-sdk/client-s3';
import type { Pool } from '../platform/db.ts';

/** No cache: an upload's `.info` is read from the bucket each time (another process may have changed it). */
const noCache: KvStore<MetadataValue> = {
  get: async () => undefined,
  set: async () => {},
  delete: async () => {},
  list: async () => [],
};

const isMissing = (error: unknown) => {
  const e = error as { name?: string; Code?: string; $metadata?: { httpStatusCode?: number } };
  return ['NotFound', 'NoSuchKey', 'NoSuchUpload'].includes(e?.name ?? e?.Code ?? '') || e?.$metadata?.httpStatusCode === 404;
};

export class S3ResumableStore extends S3Store {
  private readonly pool: Pool;

  constructor(clientConfig: S3ClientConfig & { bucket: string }, pool: Pool) {
    super({ s3ClientConfig: clientConfig, partSize: 8 * 1024 * 1024, useTags: false, cache: noCache });
    this.pool = pool;
    // Not creation-defer-length: a file's size is known when its upload starts, and checked then.
    this.extensions = ['creation', 'creation-with-upload', 'termination', 'expiration'];
  }

  protected override async uploadPart(metadata: MetadataValue, body: ReadStream | Readable | Buffer, partNumber: number): Promise<string> {
    const bytes = Buffer.isBuffer(body) ? body.length : (await stat((body as ReadStream).path)).size;
    const etag = await super.uploadPart(metadata, body, partNumber);
    await this.pool.query(
      `INSERT INTO resumable_parts (blob_id, part_number, etag, bytes) VALUES ($1, $2, $3, $4)
       ON CONFLICT (blob_id, part_number) DO UPDATE SET etag = excluded.etag, bytes = excluded.bytes`,
      [metadata.file.id, partNumber, etag, bytes],
    );
    return etag;
  }

  protected override async retrieveParts(id: string): Promise<Part[]> {
    const { rows } = await this.pool.query<{ part_number: number; etag: string; bytes: string }>(
      'SELECT part_number, etag, bytes FROM resumable_parts WHERE blob_id = $1 ORDER BY part_number',
      [id],
    );
    return rows.map((r) => ({ PartNumber: r.part_number, ETag: r.etag, Size: Number(r.bytes) }));
  }

  /** Termination: the multipart upload aborted (where the server can), its objects and parts deleted. */
  override async remove(id: string): Promise<void> {
    let uploadId: string | undefined;
    try {
      uploadId = (await this.getMetadata(id))['upload-id'];
    } catch (error) {
      if (isMissing(error)) throw ERRORS.FILE_NOT_FOUND;
      throw error;
    }
    await this.discard(id, uploadId);
    await this.client.deleteObject({ Bucket: this.bucket, Key: id });
  }

  /**
   * Deletes whatever a resumable upload left under a blob's key: its multipart upload, its
   * `.info` and `.part` objects, its recorded parts. For a blob that never had one, nothing.
   */
  async discardUnder(id: string): Promise<void> {
    let uploadId: string | undefined;
    try {
      uploadId = (await this.getMetadata(id))['upload-id'];
    } catch (error) {
      if (isMissing(error)) return;
      throw error;
    }
    await this.discard(id, uploadId);
  }

  close(): void {
    this.client.destroy();
  }

  private async discard(id: string, uploadId: string | undefined): Promise<void> {
    if (uploadId) {
      // A completed upload has nothing to abort; some servers (s3rver) cannot abort at all, and
      // a bucket lifecycle rule removes what is left (docs/operating.md, "Scaling").
      await this.client.abortMultipartUpload({ Bucket: this.bucket, Key: id, UploadId: uploadId }).catch(() => {});
    }
    await this.client.deleteObjects({ Bucket: this.bucket, Delete: { Objects: [{ Key: this.infoKey(id) }, { Key: this.partKey(id, true) }] } });
    await this.pool.query('DELETE FROM resumable_parts WHERE blob_id = $1', [id]);
  }
}
