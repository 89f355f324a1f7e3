// The blob store the service runs with (PostgreSQL by default, S3 with TEST_BLOB_STORE=s3): what is
// written is read back byte for byte, whatever the bytes and wherever the chunks are cut. On
// PostgreSQL, a file written whole is stored as zstd frames, one per 1 MiB chunk, and a blob
// stored raw (resumable uploads; every blob written before sql/014) is still read as it was.
import { expect } from 'chai';
import { randomBytes } from 'node:crypto';
import { WriterHeartbeat } from '../shared/blobs/blobRecords.ts';
import { CHUNK_BYTES, createPostgresBlobStore } from '../shared/blobs/postgresBlobStore.ts';
import { contractsCsv } from './support/contracts.ts';
import { useService } from './support/service.ts';

async function readAll(source: AsyncIterable<Buffer>): Promise<Buffer> {
  const parts: Buffer[] = [];
  for await (const part of source) parts.push(part);
  return Buffer.concat(parts);
}

/** The bytes in pieces of odd sizes, as a request body arrives. */
function* pieces(bytes: Buffer, size = 65_521): Generator<Buffer> {
  for (let at = 0; at < bytes.length; at += size) yield bytes.subarray(at, at + size);
}

describe('the blob store', () => {
  const svc = useService({ worker: false });
  // The PostgreSQL store itself, whichever store the service runs with.
  const postgresStore = () => createPostgresBlobStore(svc.db, new WriterHeartbeat(svc.db, 1000), 10_000);

  it('when a file of text or of random bytes is written whole, then it is read back byte for byte, across chunks', async () => {
    const csv = Buffer.from(contractsCsv(40_000)); // about 2.5 MiB: three chunks, the last short
    const noise = randomBytes(CHUNK_BYTES * 2 + 12_345); // does not compress: frames larger than their text
    for (const bytes of [csv, noise, Buffer.alloc(0), Buffer.from([0xef, 0xbf, 0xbd, 0xff, 0x00])]) {
      const blob = await svc.blobs.write(pieces(bytes), bytes.length);
      expect(blob.bytes).to.equal(bytes.length);
      expect((await readAll(svc.blobs.read(blob.id))).equals(bytes)).to.equal(true);
      await svc.blobs.delete(blob.id);
    }
  });

  it('when PostgreSQL stores a contract file, then its chunks are zstd frames several times smaller than the file', async () => {
    const store = postgresStore();
    const csv = Buffer.from(contractsCsv(40_000));
    const blob = await store.write(pieces(csv), csv.length);
    const { rows } = await svc.db.query<{ chunk_encoding: string; chunks: number; stored: string }>(
      `SELECT b.chunk_encoding, count(c.seq)::int AS chunks, sum(length(c.data)) AS stored
       FROM blobs b JOIN blob_chunks c ON c.blob_id = b.id WHERE b.id = $1 GROUP BY b.chunk_encoding`,
      [blob.id],
    );
    expect(rows[0]).to.include({ chunk_encoding: 'zstd', chunks: Math.ceil(csv.length / CHUNK_BYTES) });
    expect(Number(rows[0]!.stored)).to.be.below(csv.length / 3);
    expect((await readAll(store.read(blob.id))).equals(csv)).to.equal(true);
    await store.delete(blob.id);
  });

  it('when a chunk of a file written into PostgreSQL is lost (a database restart while it streams in), then the write fails and completes nothing', async () => {
    // Chunks commit without waiting for the WAL: one lost in a crash is what this stands for.
    const store = postgresStore();
    const bytes = randomBytes(CHUNK_BYTES * 3);
    let id: string | undefined;
    const source = async function* () {
      yield bytes.subarray(0, CHUNK_BYTES * 2);
      // The first chunk is stored by now (the second waits for it): it goes, as a crash would take it.
      for (let tries = 0; tries < 200; tries++) {
        const { rowCount } = await svc.db.query('DELETE FROM blob_chunks WHERE blob_id = $1 AND seq = 0', [id]);
        if (rowCount === 1) break;
        await new Promise((r) => setTimeout(r, 10));
      }
      yield bytes.subarray(CHUNK_BYTES * 2);
    };
    let failed: unknown;
    await store.write(source(), bytes.length * 2, async (created) => void (id = created)).catch((error: unknown) => (failed = error));
    expect(String(failed)).to.match(/chunks were lost/);
    const { rows } = await svc.db.query('SELECT bytes FROM blobs WHERE id = $1', [id]);
    expect(rows.filter((r) => r.bytes !== null)).to.deep.equal([]); // not completed (its record is gone, or left for the sweep)
  });

  it('when a file\'s record is lost while it is written (a restart, or the sweep), then the write fails and nothing of it is left to read, whatever the store', async () => {
    const bytes = randomBytes(CHUNK_BYTES * 3);
    let id: string | undefined;
    const source = async function* () {
      yield bytes.subarray(0, CHUNK_BYTES);
      // The one file being written here (no worker, no other request): its record goes.
      const { rows } = await svc.db.query<{ id: string }>('DELETE FROM blobs WHERE bytes IS NULL AND writer_seen_at IS NOT NULL RETURNING id');
      expect(rows).to.have.length(1);
      id = rows[0]!.id;
      yield bytes.subarray(CHUNK_BYTES);
    };
    let failed: unknown;
    const written = await svc.blobs.write(source(), bytes.length).catch((error: unknown) => (failed = error));
    expect(failed, `written as ${JSON.stringify(written)}`).to.be.an('error');
    expect((await svc.db.query('SELECT 1 FROM blobs WHERE id = $1', [id])).rowCount).to.equal(0);
    const read = await readAll(svc.blobs.read(id!)).catch((error: unknown) => error);
    expect(read).to.be.an('error');
  });

  it('when a blob was stored raw (before compression, or by a resumable upload), then it is read as it was', async () => {
    const store = postgresStore();
    const bytes = Buffer.concat([Buffer.from(contractsCsv(20_000)), randomBytes(1000)]);
    const id = `blob_raw${Date.now()}`;
    await svc.db.query('INSERT INTO blobs (id, bytes) VALUES ($1, $2)', [id, bytes.length]);
    for (let seq = 0; seq * CHUNK_BYTES < bytes.length; seq++) {
      await svc.db.query('INSERT INTO blob_chunks (blob_id, seq, data) VALUES ($1, $2, $3)', [id, seq, bytes.subarray(seq * CHUNK_BYTES, (seq + 1) * CHUNK_BYTES)]);
    }
    expect((await readAll(store.read(id))).equals(bytes)).to.equal(true);
    await store.delete(id);
  });
});
