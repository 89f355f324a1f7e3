// The PostgreSQL blob store (the default): files as numbered 1 MiB chunks in `blob_chunks`,
// written and read as streams, so no file is ever held whole in memory or on local disk, and
// every process on any machine sees it.
import { createHash } from 'node:crypto';
import type { QueryConfig } from 'pg';
import type { BlobSource, BlobStore } from './blobStore.ts';
import { type StoredBlob, TooLarge } from './blobs.ts';
import type { Pool, Queryable } from './db.ts';
import { newId } from './ids.ts';

export const CHUNK_BYTES = 1024 * 1024;

/**
 * Streams `source` into a new blob. Over `maxBytes` it stops reading, deletes what it wrote and
 * throws 413. Chunks are written as they fill, one statement each, with autocommit: a blob is
 * only referenced once complete, and an abandoned one is deleted.
 */
async function writeBlob(db: Queryable, source: BlobSource, maxBytes: number): Promise<StoredBlob> {
  const id = newId('blob');
  const hash = createHash('sha256');
  await db.query('INSERT INTO blobs (id) VALUES ($1)', [id]);
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
    await db.query('UPDATE blobs SET bytes = $2, sha256 = $3 WHERE id = $1', [id, bytes, sha256]);
    return { id, bytes, sha256 };
  } catch (error) {
    await deleteBlob(db, id).catch(() => {});
    throw error;
  }
}

/**
 * The blob's bytes, chunk by chunk (one query each, so memory holds one chunk at a time). The
 * result comes in binary format: as text, bytea arrives hex-encoded, twice its size, to be decoded.
 */
async function* readBlob(db: Queryable, id: string): AsyncGenerator<Buffer> {
  for (let seq = 0; ; seq++) {
    // Binary results, and the raw bytes handed back as they arrive (`binary` is a node-postgres
    // option that @types/pg does not declare).
    const query = {
      text: 'SELECT data FROM blob_chunks WHERE blob_id = $1 AND seq = $2',
      values: [id, seq],
      binary: true,
      types: { getTypeParser: () => (raw: Buffer) => raw },
    };
    const { rows } = await db.query<{ data: Buffer }>(query as QueryConfig);
    if (!rows[0]) return;
    yield rows[0].data;
  }
}

async function deleteBlob(db: Queryable, id: string): Promise<void> {
  await db.query('DELETE FROM blobs WHERE id = $1', [id]);
}

export function createPostgresBlobStore(pool: Pool): BlobStore {
  return {
    kind: 'postgres',
    write: (source, maxBytes) => writeBlob(pool, source, maxBytes),
    read: (id) => readBlob(pool, id),
    delete: (id) => deleteBlob(pool, id),
    close: async () => {},
  };
}
