// The contractId hashes' list (shared/ingest/numberSet.ts): whether any two values are equal,
// whether they sit in memory, in runs spilled to its temporary file, or across both.
import { expect } from 'chai';
import fc from 'fast-check';
import { readdirSync } from 'node:fs';
import { HashList } from '../shared/ingest/numberSet.ts';

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

  it('when the list spills, then its file is nowhere in the temporary folder (unlinked at once)', () => {
    const list = listOf(Array.from({ length: 5000 }, (_, i) => i), 100);
    expect(readdirSync(process.env['TMPDIR'] ?? '/tmp').filter((f) => f.startsWith(`dataset-service-hashes-${process.pid}-`))).to.deep.equal([]);
    expect(list.hasRepeat()).to.equal(false);
    list.close();
  });
});
