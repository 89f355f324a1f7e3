// What a blob store is: where files live, written and read as streams. The stores are
// postgresBlobStore.ts (the default) and s3BlobStore.ts (an S3-compatible object store);
// createBlobStore.ts picks one. Either way a file is also a row in `blobs` (blobRecords.ts).
import type { Readable } from 'node:stream';
import type { DataStore } from '@tus/utils';
import { Problem } from '../platform/problems.ts';

export type StoredBlob = { id: string; bytes: number; sha256: Buffer };

/** The 413 for a file over its limit, whoever notices it (a store, a route). */
export class TooLarge extends Problem {
  constructor(maxBytes: number) {
    super('payload-too-large', `The file is larger than the limit of ${maxBytes} bytes.`);
  }
}

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
  /** A blob's bytes as a stream, read ahead with backpressure (a build's read: it may hold a connection throughout). */
  read(id: string): AsyncIterable<Buffer>;
  /**
   * A whole blob's bytes a page at a time (about 1 MiB), holding no connection or pooled socket
   * between pages: for an answer that waits on its client, however slowly it reads.
   */
  readInPages(id: string): AsyncIterable<Buffer>;
  delete(id: string): Promise<void>;
  /** Object stores only: a new blob whose bytes the client PUTs straight to the store (its id). */
  newDirectUpload?(): Promise<string>;
  /**
   * Object stores only: the presigned PUT URL of such a blob, as signed at `signedAt` for
   * `expiresSeconds`: the same inputs give the same URL, so an answer can be rendered again.
   */
  presignUpload?(blobId: string, signedAt: Date, expiresSeconds: number): Promise<string>;
  /**
   * Resumable uploads into blobs (the tus protocol, served by @tus/server), keyed by blob id:
   * postgresResumableStore.ts or s3ResumableStore.ts. Their offsets are kept in PostgreSQL, so
   * that any process can resume an upload another one started.
   */
  readonly resumable: DataStore;
  /**
   * The size of a blob a client uploaded itself (straight to the object store, or resumably);
   * undefined while it is not whole.
   */
  uploadedSize?(id: string): Promise<number | undefined>;
  /** Object stores only: a presigned GET URL serving the blob as a named download. */
  presignDownload?(id: string, download: { filename: string; contentType: string }, expiresSeconds: number): Promise<string>;
  close(): Promise<void>;
};
