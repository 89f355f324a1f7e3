// The tally's life outside the V8 heap (shared/ingest/tally.ts): a tally thread's heap is small
// and rarely collected, so what a finished tally held must go when it is closed, not at the next
// full collection (250 small builds left a worker 70 MiB larger). And a tally sized to its rows
// (limitsFor, for a build of one batch) counts what one of the default limits does.
import { Writable } from 'node:stream';
import { expect } from 'chai';
import { currencyIndex } from '../shared/ingest/currencies.ts';
import { parseContracts } from '../shared/ingest/parseContracts.ts';
import { DEFAULT_TALLY_LIMITS, GuardedTally, limitsFor, limitsForFile, Tally } from '../shared/ingest/tally.ts';
import { type TallyBatch, TallyBatchWriter } from '../shared/ingest/tallyBatch.ts';
import type { TallyFeed } from '../shared/ingest/tallyFeed.ts';
import { contractsCsv } from './support/contracts.ts';
import { MetricsBook } from '../shared/figures/book.ts';
import { realisticCsv } from './support/realisticContracts.ts';

/** The rows of a CSV file as the validator hands them to a tally, all in one batch. */
async function oneBatch(csv: string): Promise<TallyBatch> {
  const writer = new TallyBatchWriter();
  const feed: TallyFeed = {
    addContractId: (text, start, end) => writer.addContractId(text, start, end),
    add: (row) => writer.add(row),
    flush: () => undefined,
    end: () => Promise.reject(new Error('not called by the parse')),
    result: () => Promise.reject(new Error('not called by the parse')),
    close: () => {},
  };
  const sink = new Writable({ write: (_chunk, _encoding, done) => done() });
  await parseContracts({ source: (async function* () { yield Buffer.from(csv); })(), versionId: '00000000-0000-4000-8000-000000000000', sink, report: () => {}, tally: feed });
  return writer.batch;
}

/** What a tally of these limits counts of the batch. */
function counted(batch: TallyBatch, limits: typeof DEFAULT_TALLY_LIMITS) {
  const tally = new Tally(limits);
  try {
    tally.addBatch(batch);
    const end = tally.end();
    return { end, result: end.complete ? tally.result(end.presentContractIds, 'ver_test') : undefined };
  } finally {
    tally.close();
  }
}

describe('tally', () => {
  it('when a tally is closed, then the memory it holds outside the heap is let go at once', () => {
    const tally = new Tally();
    const writer = new TallyBatchWriter();
    for (let i = 0; i < 100; i++) {
      const id = `c${i}`;
      const customer = `Customer ${i % 10}`;
      const text = Buffer.from(`${id}${customer}Pro`);
      writer.addContractId(text, 0, id.length);
      const productStart = id.length + customer.length;
      writer.add({
        hasContractId: true, text, customerStart: id.length, customerEnd: productStart, productStart, productEnd: text.length,
        startDay: 20_000 + i, endDay: 20_400 + i, cents: 1_000 + i, currency: currencyIndex(Buffer.from('EUR'), 0),
      });
    }
    tally.addBatch(writer.batch);
    const beforeEnd = process.memoryUsage().arrayBuffers;
    expect(tally.end()).to.include({ complete: true, presentContractIds: 100, contractIdsDistinct: true });
    // The sets (contractId hashes, amounts, days) go once every row is in: a reservation of at least 32 MiB, mapped.
    expect(beforeEnd - process.memoryUsage().arrayBuffers).to.be.at.least(32 * 1024 * 1024);
    const result = tally.result(100, 'ver_test')!;
    expect(result.catalog.rowCount).to.equal(100);
    const figure = (name: string) => result.catalog.fields.find((f) => f.name === name)!;
    expect(figure('amount')).to.include({ distinct: 100, min: '10.00', max: '10.99' });
    expect(figure('startDate')).to.include({ distinct: 100 });
    expect(figure('customer')).to.include({ distinct: 10 });
    const held = process.memoryUsage().arrayBuffers;
    tally.close();
    // The rest of it: at least 32 MiB, mapped (the names' arrays).
    expect(held - process.memoryUsage().arrayBuffers).to.be.at.least(32 * 1024 * 1024);
  });

  it('when a tally of few set slots (no bitmaps) meets more distinct dates than they hold, then it gives up on them (SQL counts instead)', async () => {
    const rows = Array.from({ length: 40 }, (_, i) => `c${i},Acme,Pro,2024-01-${String(1 + (i % 28)).padStart(2, '0')},2025-${String(1 + (i % 12)).padStart(2, '0')}-28,10.00,EUR`);
    const batch = await oneBatch(`contractId,customer,product,startDate,endDate,amount,currency\n${rows.join('\n')}\n`);
    const { end } = counted(batch, { ...DEFAULT_TALLY_LIMITS, setSlots: 16 });
    expect(end).to.include({ complete: false, gaveUpOn: 'distinct dates' });
    expect(counted(batch, { ...DEFAULT_TALLY_LIMITS, setSlots: 128 }).end.complete).to.equal(true);
  });

  it('when counting fails (here: no room for its arrays), then a guarded tally gives up, naming the error, and has no figures (SQL computes them)', async () => {
    const batch = await oneBatch(contractsCsv(10));
    const tally = new GuardedTally({ ...DEFAULT_TALLY_LIMITS, customers: -1 });
    tally.addBatch(batch);
    const end = tally.end();
    expect(end).to.include({ complete: false, presentContractIds: 0, contractIdsDistinct: false });
    expect(end.gaveUpOn).to.match(/^an error in the tally: /);
    expect(tally.result(10, 'ver_test')).to.equal(undefined);
    tally.close();
    const sound = new GuardedTally();
    sound.addBatch(batch);
    expect(sound.end()).to.deep.equal(counted(batch, DEFAULT_TALLY_LIMITS).end);
    sound.close();
  });

  for (const [name, csv] of [
    ['10 generated rows', contractsCsv(10)],
    ['a header and no rows', contractsCsv(0)],
    ['3,000 rows shaped like an export', realisticCsv(3000)],
    ['8,000 rows shaped like an export, every field quoted', realisticCsv(8000, { quoteAll: true, crlf: true })],
    ['2,000 generated rows, 1% of them bad', contractsCsv(2000, { badEvery: 100 })],
  ] as const) {
    it(`when a tally is sized to the rows of ${name} (limitsFor), then it counts what a tally of the default limits does, in less than 1 MiB`, async () => {
      const batch = await oneBatch(csv);
      const limits = limitsFor(batch.idCount, batch.rowCount, batch.byteCount);
      const held = process.memoryUsage().arrayBuffers;
      const sized = new Tally(limits);
      expect(process.memoryUsage().arrayBuffers - held).to.be.below(1024 * 1024);
      sized.close();
      const expected = counted(batch, DEFAULT_TALLY_LIMITS);
      expect(expected.end.complete).to.equal(true);
      expect(counted(batch, limits)).to.deep.equal(expected);
      for (const [limit, value] of Object.entries(limits)) expect(value).to.be.at.most(DEFAULT_TALLY_LIMITS[limit as keyof typeof limits]);
    });

    it(`when a tally is sized to the file of ${name} (limitsForFile, its bytes known before a row is read), then it counts what a tally of the default limits does`, async () => {
      const batch = await oneBatch(csv);
      const bytes = Buffer.byteLength(csv);
      const limits = limitsForFile(bytes)!;
      if (bytes <= 64 * 1024) {
        const held = process.memoryUsage().arrayBuffers;
        const sized = new Tally(limits);
        expect(process.memoryUsage().arrayBuffers - held).to.be.below(1024 * 1024);
        sized.close();
      }
      expect(counted(batch, limits)).to.deep.equal(counted(batch, DEFAULT_TALLY_LIMITS));
      for (const [limit, value] of Object.entries(limits)) expect(value).to.be.at.most(DEFAULT_TALLY_LIMITS[limit as keyof typeof limits]);
    });
  }

  it('when a tally streams the customers’ rows, then the chunk that ends them (COPY’s trailer) says it is the last, and comes before the documents are made', async () => {
    const batch = await oneBatch(realisticCsv(20_000));
    const tally = new Tally();
    tally.addBatch(batch);
    tally.end();
    const calls: { bytes: number; last: boolean; documentsMade: boolean }[] = [];
    let documentsMade = false;
    const monthly = MetricsBook.prototype.monthly;
    MetricsBook.prototype.monthly = function (this: MetricsBook) {
      documentsMade = true;
      return monthly.call(this);
    };
    try {
      const chunks: Buffer[] = [];
      const result = tally.result(batch.idCount, '00000000-0000-4000-8000-000000000000', (chunk, last) => {
        chunks.push(Buffer.from(chunk));
        calls.push({ bytes: chunk.length, last, documentsMade });
      });
      expect(result.figures.customers.streamed).to.equal(true);
      expect(calls.length).to.be.above(2); // 64 KiB chunks
      expect(calls.slice(0, -1).every((c) => !c.last)).to.equal(true);
      expect(calls.at(-1)).to.include({ last: true, documentsMade: false });
      expect(documentsMade).to.equal(true);
      expect(Buffer.concat(chunks).subarray(-2).readInt16BE()).to.equal(-1);
    } finally {
      MetricsBook.prototype.monthly = monthly;
      tally.close();
    }
  });

  it('when a file’s size is not known, then its tally has the default limits; a large file’s has them too', () => {
    expect(limitsForFile(null)).to.equal(undefined);
    expect(limitsForFile(500 * 1024 * 1024)).to.deep.equal(DEFAULT_TALLY_LIMITS);
  });
});
