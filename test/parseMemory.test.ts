// What a build's parse holds outside its heap (shared/ingest/parseContracts.ts): a build
// allocates little on its V8 heap, so collections are rare, and buffers it merely let go were
// freed tens of MiB late (a 10M-row build's worker grew by 20 MiB). The COPY batches' buffers are
// written again once the sink has taken them, and a source's chunks that are the parse's own are
// freed as soon as they are read.
import { Writable } from 'node:stream';
import { expect } from 'chai';
import { parseContracts } from '../shared/ingest/parseContracts.ts';
import { realisticCsv } from './support/realisticContracts.ts';

/** The rows of a binary COPY stream: each row's field count checked, -1 at the end. */
function copyRows(stream: Buffer): number {
  let at = 11 + 4 + 4 + stream.readInt32BE(15); // signature, flags, header extension
  for (let rows = 0; ; rows++) {
    const fields = stream.readInt16BE(at);
    at += 2;
    if (fields === -1) {
      expect(at, 'the end-of-data marker ends the stream').to.equal(stream.length);
      return rows;
    }
    expect(fields).to.equal(9);
    for (let f = 0; f < fields; f++) {
      const length = stream.readInt32BE(at);
      at += 4 + Math.max(length, 0);
    }
  }
}

/** A file's bytes in chunks of 64 KiB, each a whole buffer of its own (as a blob's decoder hands them out). */
function ownChunks(text: string): Buffer[] {
  const bytes = Buffer.from(text);
  const chunks: Buffer[] = [];
  for (let at = 0; at < bytes.length; at += 64 * 1024) {
    const chunk = Buffer.alloc(Math.min(64 * 1024, bytes.length - at));
    bytes.copy(chunk, 0, at);
    chunks.push(chunk);
  }
  return chunks;
}

async function* from(chunks: Buffer[]) {
  yield* chunks;
}

describe("a parse's memory outside the heap", () => {
  it('when the COPY stream runs to many batches, then a few buffers carry them all, written again once the sink took each, and the rows come out whole', async () => {
    const buffers = new Set<ArrayBufferLike>();
    const sent: Buffer[] = [];
    const outcome = await parseContracts({
      source: from([Buffer.from(realisticCsv(40_000))]), // about 4 MB of COPY rows: 16 batches
      versionId: 'ver_memory',
      sink: new Writable({
        write(batch: Buffer, _encoding, done) {
          buffers.add(batch.buffer);
          sent.push(Buffer.from(batch)); // what a socket would have sent, before the buffer is written again
          done();
        },
      }),
      report: (error) => expect.fail(JSON.stringify(error)),
    });
    expect(outcome.rows).to.equal(40_000);
    expect(copyRows(Buffer.concat(sent))).to.equal(40_000);
    expect(sent.length).to.be.at.least(12);
    expect(buffers.size).to.be.at.most(4);
  });

  it('when the source is the parse\'s own, then each of its chunks is freed once read; otherwise none is touched', async () => {
    for (const releaseChunks of [true, false]) {
      const chunks = ownChunks(realisticCsv(5_000));
      const outcome = await parseContracts({
        source: from(chunks),
        releaseChunks,
        versionId: 'ver_memory',
        sink: new Writable({ write: (_batch, _encoding, done) => done() }),
        report: (error) => expect.fail(JSON.stringify(error)),
      });
      expect(outcome.rows).to.equal(5_000);
      expect(chunks.length).to.be.at.least(5);
      expect(chunks.map((c) => (c.buffer as ArrayBuffer).detached)).to.deep.equal(chunks.map(() => releaseChunks));
    }
  });
});
