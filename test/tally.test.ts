// The tally's life outside the V8 heap (shared/ingest/tally.ts): a tally thread's heap is small
// and rarely collected, so what a finished tally held must go when it is closed, not at the next
// full collection (250 small builds left a worker 70 MiB larger).
import { expect } from 'chai';
import { currencyIndex } from '../shared/ingest/currencies.ts';
import { Tally } from '../shared/ingest/tally.ts';
import { TallyBatchWriter } from '../shared/ingest/tallyBatch.ts';

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
        startDay: 20_000 + i, startMonth: 657, endDay: 20_400 + i, endMonth: 670, cents: 1_000 + i, currency: currencyIndex(Buffer.from('EUR'), 0),
      });
    }
    tally.addBatch(writer.batch);
    expect(tally.end()).to.include({ complete: true, presentContractIds: 100, contractIdsDistinct: true });
    expect(tally.result(100).catalog.rowCount).to.equal(100);
    const held = process.memoryUsage().arrayBuffers;
    tally.close();
    // The amounts' bitmap (4 MiB), the days' (2 × 0.45 MiB), a page each of names and runs (4 × 0.75–1 MiB).
    expect(held - process.memoryUsage().arrayBuffers).to.be.at.least(8 * 1024 * 1024);
  });
});
