// The PostgreSQL blob store (the default): files as numbered 1 MiB chunks in `blob_chunks`,
// written and read as streams, so no file is ever held whole in memory or on local disk, and
// every process on any machine sees it. A file is written whole from one stream, or resumably
// (tus) in pieces that may come to different processes: `resumable_blobs` keeps such a file's
// declared length and the bytes received. The only writer of both tables.
import { promisify } from 'node:util';
import zlib from 'node:zlib';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { DataStore, ERRORS, Upload } from '@tus/utils';
import { to as copyTo } from 'pg-copy-streams';
import { type BlobSource, type BlobStore, type StoredBlob, TooLarge } from './blobStore.ts';
import { type ChunkEncoding, completeBlob, deleteBlobRecord, insertBlob, insertUnwrittenBlob, WriterBehind, type WriterHeartbeat } from './blobRecords.ts';
import { type Client, type Pool, type Queryable, withTransaction, WITHOUT_WAITING_FOR_WAL } from '../platform/db.ts';
import { newId } from '../platform/ids.ts';
import { readerDigest } from '../platform/streamDigest.ts';

export const CHUNK_BYTES = 1024 * 1024;

/** A stream's pieces gathered into chunks of CHUNK_BYTES (the last one shorter). */
class Gathered {
  private pieces: Buffer[] = [];
  private bytes = 0;

  /** Adds a piece; true once a chunk is full. */
  add(piece: Buffer): boolean {
    this.pieces.push(piece);
    this.bytes += piece.length;
    return this.bytes >= CHUNK_BYTES;
  }

  /** What was gathered, as one buffer (undefined when nothing), and starts again. */
  take(): Buffer | undefined {
    if (this.bytes === 0) return undefined;
    const data = this.pieces.length === 1 ? this.pieces[0]! : Buffer.concat(this.pieces, this.bytes);
    this.pieces = [];
    this.bytes = 0;
    return data;
  }
}

/** zstd's fastest level: about 0.15 s of a CPU for 64 MB of CSV here, 3 to 7 times smaller. */
const compress = (data: Buffer) => zstdCompress(data, { chunkSize: CHUNK_BYTES, params: { [zlib.constants.ZSTD_c_compressionLevel]: 1 } });
const zstdCompress = promisify(zlib.zstdCompress);

/**
 * A chunk of a blob written whole, committed without waiting for the WAL to reach the disk
 * (WITHOUT_WAITING_FOR_WAL): a blob is complete only once completeBlob
 * commits, and that commit waits for the WAL, every chunk before it included. A crash before it
 * loses a blob that was not complete anyway (its writer failed with the database). Waiting at
 * every 1 MiB chunk made the web process's backend flush the build's WAL too, chunk after chunk.
 */
const INSERT_CHUNK_LATER_DURABLE = `INSERT INTO blob_chunks (blob_id, seq, data)
  SELECT $1, $2, $3 FROM ${WITHOUT_WAITING_FOR_WAL}`;

/**
 * Streams `source` into a new blob. Over `maxBytes` it stops reading, deletes what it wrote and
 * throws 413. Chunks are written as they fill, one statement each, with autocommit, so that a
 * reader may follow the blob while it is written (`onCreated` tells its id as it starts); the
 * blob is complete once its size is set. An abandoned one is deleted, which tells such a reader.
 */
async function writeBlob(
  db: Pool,
  heartbeat: WriterHeartbeat,
  source: BlobSource,
  maxBytes: number,
  onCreated?: (id: string) => Promise<void>,
): Promise<StoredBlob> {
  const id = newId('blob');
  // Hashed as it streams here, unless it already is (the idempotency filter hashes a request's body).
  const hash = readerDigest(source);
  await insertBlob(db, id, 'zstd', { waitForWal: false });
  heartbeat.add(id);
  let seq = 0;
  let bytes = 0;
  const gathered = new Gathered();
  // The chunk being compressed and stored while the next one is read: one chunk in hand at a
  // time made a request's receiving wait for every statement (a 64 MB PUT took 1.9 s here).
  let storing: Promise<void> = Promise.resolve();
  /** Starts storing what was gathered; resolves once the chunk before it is stored. */
  const flush = (): Promise<void> => {
    const data = gathered.take();
    if (!data) return storing;
    const frame = compress(data); // on the thread pool, in one pass (chunkSize: zlib's 16 KiB steps cost a callback each)
    const previous = storing;
    const at = seq++;
    storing = (async () => {
      const compressed = await frame;
      await previous;
      await db.query(INSERT_CHUNK_LATER_DURABLE, [id, at, compressed]);
    })();
    storing.catch(() => {}); // its failure is thrown by the next flush, or at the end
    return previous;
  };
  try {
    await onCreated?.(id);
    for await (const chunk of source as AsyncIterable<Buffer>) {
      bytes += chunk.length;
      if (bytes > maxBytes) throw new TooLarge(maxBytes);
      hash.update(chunk);
      if (gathered.add(chunk)) await flush();
    }
    await flush();
    await storing;
    const sha256 = hash.sha256();
    await completeBlob(db, id, bytes, sha256, seq);
    return { id, bytes, sha256 };
  } catch (error) {
    await storing.catch(() => {}); // no chunk may be stored after the blob is gone
    // If the database is away, the blob stays; its heartbeat has stopped, so the sweep removes it.
    await deleteBlobRecord(db, id).catch(() => {});
    throw error;
  } finally {
    heartbeat.remove(id);
  }
}

const POLL_MS = 10;

/**
 * The blob's bytes, streamed by `COPY (SELECT data … ORDER BY seq) TO STDOUT (FORMAT binary)`:
 * raw bytes (a bytea in a query result would be decoded as UTF-8 by node-postgres and encoded
 * back, which breaks bytes that are not UTF-8 and characters split across two chunks), read
 * ahead while the caller works, with the stream's backpressure bounding memory. A blob still
 * being written is followed: each pass copies the chunks written so far, until the blob is
 * complete; it fails if the blob is deleted (its upload failed), and throws WriterBehind when the
 * writer sends nothing new for `patienceMs` (the reader hands its place back rather than wait on
 * a slow client). Stopping early discards the connection (it may be mid-COPY).
 */
async function* readBlob(pool: Pool, id: string, patienceMs: number): AsyncGenerator<Buffer> {
  const client = await pool.connect();
  let finished = false;
  try {
    const first = await blobRow(client, id);
    const stored = storedBytes(client, id, first, patienceMs);
    yield* first?.chunk_encoding === 'zstd' ? zstdDecoded(stored) : stored;
    finished = true;
  } finally {
    client.release(finished ? undefined : new Error('blob read stopped'));
  }
}

/**
 * A whole blob's bytes read a chunk at a time, each chunk with a query of its own on a pooled
 * connection that goes back to the pool before the chunk is handed over: for answers that wait on
 * their client (downloads), which must hold no connection while they wait. One chunk (1 MiB
 * stored) in hand at a time. A blob not yet whole is refused.
 */
async function* readBlobInPages(pool: Pool, id: string): AsyncGenerator<Buffer> {
  const row = await blobRow(pool, id);
  if (!row || row.bytes === null) throw new Error(`blob ${id} is not whole`);
  const pages = chunksOneByOne(pool, id);
  yield* row.chunk_encoding === 'zstd' ? zstdDecoded(pages) : pages;
}

async function* chunksOneByOne(pool: Pool, id: string): AsyncGenerator<Buffer> {
  for (let seq = 0; ; seq++) {
    const { rows } = await pool.query<{ data: Buffer }>('SELECT data FROM blob_chunks WHERE blob_id = $1 AND seq = $2', [id, seq]);
    if (!rows[0]) return;
    yield rows[0].data;
  }
}

type BlobRow = { bytes: string | null; chunk_encoding: ChunkEncoding };
const blobRow = async (client: Queryable, id: string): Promise<BlobRow | undefined> =>
  (await client.query<BlobRow>('SELECT bytes, chunk_encoding FROM blobs WHERE id = $1', [id])).rows[0];

/**
 * The chunks' stored bytes, in pieces as they arrive, following a blob still being written (see
 * readBlob); `row` is the blob as readBlob read it, for the first pass.
 */
async function* storedBytes(client: Client, id: string, row: BlobRow | undefined, patienceMs: number): AsyncGenerator<Buffer> {
  let seq = 0;
  let lastChunkAt = Date.now();
  for (;; row = await blobRow(client, id)) {
    if (!row) throw new Error(`blob ${id} is gone: its upload did not complete`);
    const complete = row.bytes !== null; // seen before the pass: the pass gets every chunk
    const before = seq;
    const copy = client.query(
      copyTo(`COPY (SELECT data FROM blob_chunks WHERE blob_id = ${client.escapeLiteral(id)} AND seq >= ${seq} ORDER BY seq) TO STDOUT (FORMAT binary)`),
    );
    yield* copyFieldBytes(copy, () => seq++);
    if (complete) return;
    if (seq > before) lastChunkAt = Date.now();
    else if (Date.now() - lastChunkAt > patienceMs) throw new WriterBehind(id, patienceMs);
    else await new Promise((resolve) => setTimeout(resolve, POLL_MS));
  }
}

/**
 * A zstd blob's bytes: its chunks' frames, one after another, are one zstd stream, decoded by one
 * decoder as they arrive, in pieces of 64 KiB. (A decoder per chunk, zstdDecompressSync, is faster
 * but left a 10M-row build's worker 20 MiB larger: each call allocates and frees a context and
 * its window, and the allocator keeps what they freed.)
 */
async function* zstdDecoded(stored: AsyncGenerator<Buffer>): AsyncGenerator<Buffer> {
  const first = await stored.next();
  if (first.done) return; // an empty file has no chunk, and no frame to decode
  const decoder = zlib.createZstdDecompress({ chunkSize: 64 * 1024 });
  const feeding = pipeline(Readable.from(withFirst(first.value, stored), { objectMode: false }), decoder);
  feeding.catch(() => {}); // its failure is the decoder's, thrown below
  try {
    for await (const piece of decoder) yield piece as Buffer;
    await feeding;
  } finally {
    decoder.destroy(); // stopped early: the source stops too
  }
}

async function* withFirst(first: Buffer, rest: AsyncGenerator<Buffer>): AsyncGenerator<Buffer> {
  yield first;
  yield* rest;
}

/**
 * The bytes of the one field of each row of a binary COPY stream, in pieces as they arrive.
 * Format: signature (11 bytes), flags (4), header extension (4 + its length); each row a field
 * count (2), then per field its length (4) and bytes; -1 as field count at the end.
 */
export async function* copyFieldBytes(stream: AsyncIterable<Buffer>, onRow?: () => void): AsyncGenerator<Buffer> {
  let skip = 11 + 4; // signature and flags
  let want: 'extension' | 'fields' | 'length' | 'data' = 'extension';
  let dataLeft = 0;
  let small = Buffer.alloc(0); // a field count or length split across chunks
  for await (let chunk of stream) {
    while (chunk.length > 0) {
      if (skip > 0) {
        const n = Math.min(skip, chunk.length);
        skip -= n;
        chunk = chunk.subarray(n);
        continue;
      }
      if (want === 'data') {
        const n = Math.min(dataLeft, chunk.length);
        const piece = chunk.subarray(0, n);
        dataLeft -= n;
        chunk = chunk.subarray(n);
        if (dataLeft === 0) want = 'fields';
        // Nothing of a piece is touched once it is handed over: a build frees each one it has read
        // (parseContracts' releaseChunks).
        yield piece;
        continue;
      }
      const size: number = want === 'fields' ? 2 : 4;
      const n = Math.min(size - small.length, chunk.length);
      small = Buffer.concat([small, chunk.subarray(0, n)]);
      chunk = chunk.subarray(n);
      if (small.length < size) continue;
      const value: number = size === 2 ? small.readInt16BE(0) : small.readInt32BE(0);
      small = Buffer.alloc(0);
      if (want === 'extension') {
        skip = value;
        want = 'fields';
      } else if (want === 'fields') {
        if (value === -1) return;
        if (value !== 1) throw new Error(`blob COPY: ${value} fields in a row`);
        onRow?.();
        want = 'length';
      } else {
        dataLeft = value;
        want = value > 0 ? 'data' : 'fields';
      }
    }
  }
}

type ResumableRow = { length: string; received: string; metadata: Record<string, string | null> | null; created_at: Date };

/**
 * Resumable uploads (@tus/server's DataStore), keyed by blob id. The bytes go to `blob_chunks` as
 * they arrive, each chunk stored in the same statement that moves the offset in
 * `resumable_blobs`, so that the offset any process reads is exactly what is stored.
 */
class PostgresResumableStore extends DataStore {
  private readonly pool: Pool;

  constructor(pool: Pool) {
    super();
    this.pool = pool;
    this.extensions = ['creation', 'creation-with-upload', 'termination', 'expiration'];
  }

  override async create(upload: Upload): Promise<Upload> {
    const length = upload.size ?? 0;
    await withTransaction(this.pool, async (client) => {
      await insertUnwrittenBlob(client, upload.id);
      await client.query('INSERT INTO resumable_blobs (blob_id, length, metadata) VALUES ($1, $2, $3)', [upload.id, length, upload.metadata ?? null]);
      if (length === 0) await completeBlob(client, upload.id, 0, null);
    });
    upload.creation_date = new Date().toISOString();
    return upload;
  }

  override async getUpload(id: string): Promise<Upload> {
    const { rows } = await this.pool.query<ResumableRow>('SELECT length, received, metadata, created_at FROM resumable_blobs WHERE blob_id = $1', [id]);
    const row = rows[0];
    if (!row) throw ERRORS.FILE_NOT_FOUND;
    return new Upload({
      id,
      size: Number(row.length),
      offset: Number(row.received),
      ...(row.metadata && { metadata: row.metadata }),
      creation_date: row.created_at.toISOString(),
    });
  }

  /**
   * Appends the request's bytes from `offset` in 1 MiB chunks, each stored with its move of the
   * offset. A request cut off keeps what arrived (the last, shorter chunk too), which is where the
   * client resumes. Two writers at once (possible only if a lock was lost) cannot both append: the
   * second one's expected offset no longer matches, and it gets 409.
   */
  override async write(stream: Readable, id: string, offset: number): Promise<number> {
    let received = offset;
    const gathered = new Gathered();
    const flush = async () => {
      const data = gathered.take();
      if (!data) return;
      const moved = await appendChunk(this.pool, id, received, data);
      if (!moved) throw ERRORS.INVALID_OFFSET;
      received = moved.received;
      if (moved.received === moved.length) await completeBlob(this.pool, id, moved.length, null);
    };
    try {
      for await (const chunk of stream as AsyncIterable<Buffer>) {
        if (gathered.add(chunk)) await flush();
      }
    } catch (error) {
      await flush().catch(() => {});
      throw error;
    }
    await flush();
    return received;
  }

  override async remove(id: string): Promise<void> {
    const { rowCount } = await this.pool.query('SELECT 1 FROM resumable_blobs WHERE blob_id = $1', [id]);
    if (!rowCount) throw ERRORS.FILE_NOT_FOUND;
    await deleteBlobRecord(this.pool, id);
  }

  /** Expiry is the upload's (shared/domain/resumableUploads.ts); unused uploads are purged with their files. */
  override getExpiration(): number {
    return 0;
  }
}

/**
 * The size of a resumable blob received whole, completing it if its last chunk was stored but the
 * process stopped before marking it complete; undefined while bytes are missing.
 */
async function resumableBlobSize(db: Pool, id: string): Promise<number | undefined> {
  const { rows } = await db.query<{ bytes: string | null; length: string | null; received: string | null }>(
    'SELECT b.bytes, r.length, r.received FROM blobs b LEFT JOIN resumable_blobs r ON r.blob_id = b.id WHERE b.id = $1',
    [id],
  );
  const row = rows[0];
  if (!row) return undefined;
  if (row.bytes !== null) return Number(row.bytes);
  if (row.length === null || row.received !== row.length) return undefined;
  await completeBlob(db, id, Number(row.length), null);
  return Number(row.length);
}

/**
 * Stores the next chunk of a resumable blob if `expectedOffset` is still its offset: the new
 * offset and the declared length, or undefined when another writer moved it first.
 */
async function appendChunk(db: Queryable, id: string, expectedOffset: number, data: Buffer): Promise<{ received: number; length: number } | undefined> {
  const { rows } = await db.query<{ received: string; length: string }>(
    `WITH moved AS (
       UPDATE resumable_blobs SET received = received + $3::bigint, next_seq = next_seq + 1
       WHERE blob_id = $1::text AND received = $2::bigint RETURNING next_seq - 1 AS seq, received, length),
     stored AS (INSERT INTO blob_chunks (blob_id, seq, data) SELECT $1::text, seq, $4::bytea FROM moved)
     SELECT received, length FROM moved`,
    [id, expectedOffset, data.length, data],
  );
  return rows[0] && { received: Number(rows[0].received), length: Number(rows[0].length) };
}

export function createPostgresBlobStore(pool: Pool, writers: WriterHeartbeat, patienceMs: number): BlobStore {
  return {
    kind: 'postgres',
    write: (source, maxBytes, onCreated) => writeBlob(pool, writers, source, maxBytes, onCreated),
    readsWhileWritten: true,
    read: (id) => readBlob(pool, id, patienceMs),
    readInPages: (id) => readBlobInPages(pool, id),
    delete: (id) => deleteBlobRecord(pool, id),
    resumable: new PostgresResumableStore(pool),
    uploadedSize: (id) => resumableBlobSize(pool, id),
    close: async () => writers.stop(),
  };
}
