// The tally's name table (shared/ingest/nameTable.ts) against the plainest model, a Map: the same
// numbers in the same order for any names (any code point, the empty name, names longer than a
// page of bytes would hold twice), the names read back, and the limits. Names are UTF-8 bytes, as
// the tally's batches carry them; a valid row's text is well-formed (bad bytes are reported first).
import { expect } from 'chai';
import fc from 'fast-check';
import { NameTable } from '../shared/ingest/nameTable.ts';
import { CUSTOMER_BYTES, ROW_FIELDS } from '../shared/ingest/tallyBatch.ts';

/** The UTF-8 bytes of `name`. */
const bytes = (name: string) => new Uint8Array(Buffer.from(name, 'utf8'));
/** Any text a valid cell may hold: any code point, no lone surrogate. */
const text = (maxLength: number) => fc.string({ unit: 'binary', maxLength }).map((s) => s.toWellFormed());

describe('name table', () => {
  it('when names come in any order, then each gets the number a Map of first sightings gives, and reads back the same', () => {
    // Few distinct names, so that most lookups find one; any code points, the empty name too.
    const name = fc.oneof(fc.constantFrom('', 'Acme', 'Acme ', 'Müller GmbH', '東京海上', 'a'.repeat(2500), 'Ж'.repeat(600_000)), text(12));
    fc.assert(
      fc.property(fc.array(name, { maxLength: 300 }), (names: string[]) => {
        const table = new NameTable({ maxNames: 1_000, maxBytes: 10_000_000 });
        const model = new Map<string, number>();
        for (const n of names) {
          if (!model.has(n)) model.set(n, model.size);
          // In the middle of a longer array, as in a batch.
          const b = bytes(n);
          const padded = new Uint8Array(b.length + 4);
          padded.set(b, 2);
          expect(table.numberOf(padded, 2, b.length)).to.equal(model.get(n));
        }
        expect(table.size).to.equal(model.size);
        for (const [n, number] of model) expect(table.nameOf(number)).to.equal(n);
      }),
      { numRuns: 500 },
    );
  });

  it('when names come in batches (some rows without one), then numbersOf gives what numberOf would, the slots growing mid-batch too', () => {
    const name = fc.oneof(fc.constantFrom('', 'Acme', 'Müller GmbH', '東京海上'), text(8), fc.nat(3000).map((i) => `Customer ${i}`));
    const row = fc.option(name, { nil: null });
    fc.assert(
      fc.property(fc.array(fc.array(row, { maxLength: 1500 }), { maxLength: 4 }), (batches: (string | null)[][]) => {
        const table = new NameTable({ maxNames: 100_000, maxBytes: 1_000_000 });
        const model = new Map<string, number>();
        for (const batch of batches) {
          // As a tally batch lays them out: ROW_FIELDS numbers a row, the length at CUSTOMER_BYTES (-1: none), bytes end to end.
          const stride = ROW_FIELDS;
          const lengths = new Float64Array(batch.length * stride);
          const starts = new Int32Array(batch.length);
          const all = bytes(batch.map((n) => n ?? '').join(''));
          let at = 0;
          batch.forEach((n, i) => {
            const length = n === null ? 0 : Buffer.byteLength(n);
            lengths[i * stride + CUSTOMER_BYTES] = n === null ? -1 : length;
            starts[i] = at;
            at += length;
          });
          const out = new Int32Array(batch.length);
          expect(table.numbersOf(all, starts, lengths, stride, CUSTOMER_BYTES, batch.length, out)).to.equal(true);
          const expected = batch.map((n) => {
            if (n === null) return -1;
            if (!model.has(n)) model.set(n, model.size);
            return model.get(n)!;
          });
          expect([...out]).to.deep.equal(expected);
        }
        expect(table.size).to.equal(model.size);
      }),
      { numRuns: 200 },
    );
    // One batch that fills the first slots several times over (fast-check's arrays stay short).
    const table = new NameTable({ maxNames: 100_000, maxBytes: 1_000_000 });
    const names = Array.from({ length: 5000 }, (_, i) => `Customer ${i % 3000}`);
    const lengths = Float64Array.from(names, (n) => n.length);
    const starts = new Int32Array(names.length);
    names.reduce((at, n, i) => ((starts[i] = at), at + n.length), 0);
    const out = new Int32Array(names.length);
    expect(table.numbersOf(bytes(names.join('')), starts, lengths, 1, 0, names.length, out)).to.equal(true);
    expect([...out]).to.deep.equal(names.map((_, i) => i % 3000));
  });

  it('when there are more names than it may hold, or more bytes, then it is full and answers -1 from then on', () => {
    const byCount = new NameTable({ maxNames: 2, maxBytes: 1_000 });
    expect([byCount.numberOf(bytes('a'), 0, 1), byCount.numberOf(bytes('b'), 0, 1), byCount.numberOf(bytes('a'), 0, 1)]).to.deep.equal([0, 1, 0]);
    expect(byCount.numberOf(bytes('c'), 0, 1)).to.equal(-1);
    expect(byCount.full).to.equal(true);
    expect(byCount.numberOf(bytes('a'), 0, 1)).to.equal(-1);

    const byBytes = new NameTable({ maxNames: 100, maxBytes: 5 });
    expect(byBytes.numberOf(bytes('ab'), 0, 2)).to.equal(0);
    expect(byBytes.numberOf(bytes('ü'), 0, 2)).to.equal(1); // two bytes, one character
    expect(byBytes.numberOf(bytes('c'), 0, 1)).to.equal(2);
    expect(byBytes.numberOf(bytes('d'), 0, 1)).to.equal(-1);
  });

  it('when it holds 100,000 names, then each still finds its own (the slots grew many times)', () => {
    const table = new NameTable({ maxNames: 1_000_000, maxBytes: 10_000_000 });
    const name = (i: number) => bytes(`Customer ${i}`);
    for (let i = 0; i < 100_000; i++) table.numberOf(name(i), 0, name(i).length);
    for (let i = 0; i < 100_000; i += 997) expect(table.numberOf(name(i), 0, name(i).length)).to.equal(i);
    expect(table.size).to.equal(100_000);
  });
});
