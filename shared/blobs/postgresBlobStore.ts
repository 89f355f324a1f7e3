// The PostgreSQL blob store (the default): files as numbered 1 MiB chunks in `blob_chunks`,
// written and read as streams, so no file is ever held whole in memory or on local disk, and
// every process on any machine sees it.
import { createHash } from 'node:crypto';
import { to as copyTo } from 'pg-copy-streams';
import { type BlobSource, type BlobStore, type StoredBlob, TooLarge } from './blobStore.ts';
import { completeBlob, deleteBlobRecord, insertBlob, WriterBehind, type WriterHeartbeat } from './blobRecords.ts';
import type { Pool, Queryable } from '../platform/db.ts';
import { newId } from '../platform/ids.ts';

export const CHUNK_BYTES = 1024 * 1024;

/**
 * Streams `source` into a new blob. Over `maxBytes` it stops reading, deletes what it wrote and
 * throws 413. Chunks are written as they fill, one statement each, with autocommit, so that a
 * reader may follow the blob while it is written (`onCreated` tells its id as it starts); the
 * blob is complete once its size is set. An abandoned one is deleted, which tells such a reader.
 */
async function writeBlob(
  db: Queryable,
  heartbeat: WriterHeartbeat,
  source: BlobSource,
  maxBytes: number,
  onCreated?: (id: string) => Promise<void>,
): Promise<StoredBlob> {
  const id = newId('blob');
  const hash = createHash('sha256');
  await insertBlob(db, id);
  heartbeat.add(id);
  let seq = 0;
  let bytes = 0;
  let pending: Buffer[] = [];
  let pendingBytes = 0;
  const flush = async () => {
    if (pendingBytes === 0) return;
    const data = pending.length === 1 ? pending[0]! : Buffer.concat(pending, pendingBytes);
    pending = [];
    pendingBytes = 0;
    await db.query('INSERT INTO blob_chunks (blob_id, seq, data) VALUES ($1, $2, $3)', [id, seq++, data]);
  };
  try {
    await onCreated?.(id);
    for await (const chunk of source as AsyncIterable<Buffer>) {
      bytes += chunk.length;
      if (bytes > maxBytes) throw new TooLarge(maxBytes);
      hash.update(chunk);
      pending.push(chunk);
      pendingBytes += chunk.length;
      if (pendingBytes >= CHUNK_BYTES) await flush();
    }
    await flush();
    const sha256 = hash.digest();
    await completeBlob(db, id, bytes, sha256);
    return { id, bytes, sha256 };
  } catch (error) {
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
    let seq = 0;
    let lastChunkAt = Date.now();
    for (;;) {
      const { rows } = await client.query<{ bytes: number | null }>('SELECT bytes FROM blobs WHERE id = $1', [id]);
      if (!rows[0]) throw new Error(`blob ${id} is gone: its upload did not complete`);
      const complete = rows[0].bytes !== null; // seen before the pass: the pass gets every chunk
      const before = seq;
      const copy = client.query(
        copyTo(`COPY (SELECT data FROM blob_chunks WHERE blob_id = ${client.escapeLiteral(id)} AND seq >= ${seq} ORDER BY seq) TO STDOUT (FORMAT binary)`),
      );
      yield* copyFieldBytes(copy, () => seq++);
      if (complete) break;
      if (seq > before) lastChunkAt = Date.now();
      else if (Date.now() - lastChunkAt > patienceMs) throw new WriterBehind(id, patienceMs);
      else await new Promise((resolve) => setTimeout(resolve, POLL_MS));
    }
    finished = true;
  } finally {
    client.release(finished ? undefined : new Error('blob read stopped'));
  }
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
        yield chunk.subarray(0, n);
        dataLeft -= n;
        chunk = chunk.subarray(n);
        if (dataLeft === 0) want = 'fields';
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

export function createPostgresBlobStore(pool: Pool, writers: WriterHeartbeat, patienceMs: number): BlobStore {
  return {
    kind: 'postgres',
    write: (source, maxBytes, onCreated) => writeBlob(pool, writers, source, maxBytes, onCreated),
    readsWhileWritten: true,
    read: (id) => readBlob(pool, id, patienceMs),
    delete: (id) => deleteBlobRecord(pool, id),
    close: async () => writers.stop(),
  };
}
