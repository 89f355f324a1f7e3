// Where files live: PostgreSQL (the default: shared/postgresBlobStore.ts) or an S3-compatible
// object store (shared/s3BlobStore.ts). Either way a file is a row in `blobs` (id, size, SHA-256,
// shared/blobs.ts) plus its bytes, written and read as streams.
import type { Readable } from 'node:stream';
import type { Config } from './config.ts';
import type { Pool } from './db.ts';
import { type StoredBlob, WriterHeartbeat } from './blobs.ts';
import { createPostgresBlobStore } from './postgresBlobStore.ts';

export type BlobSource = Readable | AsyncIterable<Buffer> | Iterable<Buffer>;

export type BlobStore = {
  readonly kind: 'postgres' | 's3';
  /**
   * Streams `source` into a new blob; over `maxBytes` it stops, deletes what it wrote and throws
   * 413. `onCreated` is told the blob's id before its bytes are written.
   */
  write(source: BlobSource, maxBytes: number, onCreated?: (blobId: string) => Promise<void>): Promise<StoredBlob>;
  /** Whether read() may start while the blob is still being written (it follows the writer). */
  readonly readsWhileWritten?: boolean;
  read(id: string): AsyncIterable<Buffer>;
  delete(id: string): Promise<void>;
  /** Object stores only: a new blob whose bytes the client PUTs straight to the store (its id). */
  newDirectUpload?(): Promise<string>;
  /**
   * Object stores only: the presigned PUT URL of such a blob, as signed at `signedAt` for
   * `expiresSeconds`: the same inputs give the same URL, so an answer can be rendered again.
   */
  presignUpload?(blobId: string, signedAt: Date, expiresSeconds: number): Promise<string>;
  /** Object stores only: the size of a blob a client uploaded itself; undefined while absent. */
  uploadedSize?(id: string): Promise<number | undefined>;
  /** Object stores only: a presigned GET URL serving the blob as a named download. */
  presignDownload?(id: string, download: { filename: string; contentType: string }, expiresSeconds: number): Promise<string>;
  close(): Promise<void>;
};

/** The configured store. The S3 client is loaded only when it is used (it costs ~50 MiB of memory). */
export async function createBlobStore(config: Config, pool: Pool): Promise<BlobStore> {
  const writers = new WriterHeartbeat(pool, config.blobHeartbeatMs);
  if (config.blobStore.kind !== 's3') return createPostgresBlobStore(pool, writers, config.streamedBuildPatienceMs);
  const { createS3BlobStore } = await import('./s3BlobStore.ts');
  return createS3BlobStore(config.blobStore, pool, writers);
}
