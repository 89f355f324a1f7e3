// The contractId hashes' list (shared/ingest/numberSet.ts): whether any two values are equal,
// whether they sit in memory, in runs spilled to its temporary file, or across both.
import { expect } from 'chai';
import fc from 'fast-check';
import { readdirSync } from 'node:fs';
import { HashList, sortHashes } from '../shared/ingest/numberSet.ts';

function listOf(values: number[], inMemory: number): HashList {
  const list = new HashList(inMemory);
  for (const v of values) list.add(v);
  return list;
}

describe('hash list', () => {
  it('when values outgrow memory, then repeats are found wherever they sit: one run, two runs, a run and memory, or nowhere', () => {
    const distinct = Array.from({ length: 10_500 }, (_, i) => (i * 7919) % 2 ** 53);
    const spilled = listOf(distinct, 1000);
    expect(spilled.hasRepeat()).to.equal(false);
    spilled.close();
    for (const [first, second] of [[10, 20], [10, 5000], [10, 10_400], [9000, 10_499], [10_200, 10_300]] as const) {
      const values = [...distinct];
      values[second] = values[first]!;
      const list = listOf(values, 1000);
      expect(list.hasRepeat(), `${first} and ${second}`).to.equal(true);
      list.close();
    }
  });

  it('when random values come, then it says what a Set says, at any memory size', () => {
    fc.assert(
      fc.property(fc.array(fc.integer({ min: 0, max: 60 }), { maxLength: 80 }), fc.integer({ min: 2, max: 20 }), (values, inMemory) => {
        const list = listOf(values, inMemory);
        expect(list.hasRepeat()).to.equal(new Set(values).size !== values.length);
        list.close();
      }),
      { numRuns: 500 },
    );
  });

  it('when many hashes are sorted, then the order is the plain sort\'s, however the values spread over the buckets', () => {
    let x = 12345;
    const random = () => {
      x = (Math.imul(x ^ (x >>> 15), 0x2c1b3c6d) + 0x9e3779b9) | 0;
      return x >>> 0;
    };
    const spreads: Record<string, (i: number) => number> = {
      hashes: () => random() * 0x200000 + (random() >>> 11),
      'all in the first bucket': () => random() % 2 ** 30,
      'two buckets, many repeats': (i) => (i % 2) * (2 ** 53 - 1) - (i % 2) * (random() % 7),
      'the extremes': (i) => (i % 3 === 0 ? 0 : i % 3 === 1 ? 2 ** 53 - 1 : 2 ** 42),
    };
    for (const [spread, value] of Object.entries(spreads)) {
      for (const n of [70_000, 200_003]) {
        const values = Float64Array.from({ length: n }, (_, i) => value(i));
        const expected = Float64Array.from(values).sort();
        expect(Buffer.from(sortHashes(values).buffer).equals(Buffer.from(expected.buffer)), `${spread}, ${n}`).to.equal(true);
      }
    }
  });

  it('when the list spills, then its file is nowhere in the temporary folder (unlinked at once)', () => {
    const list = listOf(Array.from({ length: 5000 }, (_, i) => i), 100);
    expect(readdirSync(process.env['TMPDIR'] ?? '/tmp').filter((f) => f.startsWith(`dataset-service-hashes-${process.pid}-`))).to.deep.equal([]);
    expect(list.hasRepeat()).to.equal(false);
    list.close();
  });
});
