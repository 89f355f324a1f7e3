// The customers' runs of months (shared/ingest/customerRuns.ts) against the plainest model: a set
// of months per customer and currency, with fast-check's random contracts (overlapping, adjacent,
// nested, repeated, in any order).
import { expect } from 'chai';
import fc from 'fast-check';
import { CustomerRuns } from '../shared/ingest/customerRuns.ts';

type Contract = { customer: number; currency: number; start: number; months: number };

/** The runs a set of months makes: maximal stretches of consecutive months. */
function runsOf(months: Set<number>): [number, number][] {
  const sorted = [...months].sort((a, b) => a - b);
  const runs: [number, number][] = [];
  for (const m of sorted) {
    const last = runs.at(-1);
    if (last && last[1] + 1 === m) last[1] = m;
    else runs.push([m, m]);
  }
  return runs;
}

describe('customer runs', () => {
  it('when contracts come in any order, then each customer and currency has the runs its months make, and is new exactly once', () => {
    // Few customers, short terms in a short span: many runs that touch, overlap and join.
    const contract = fc.record({ customer: fc.nat(2), currency: fc.nat(1), start: fc.integer({ min: 24_000, max: 24_030 }), months: fc.integer({ min: 1, max: 5 }) });
    fc.assert(
      fc.property(fc.array(contract, { maxLength: 40 }), (contracts: Contract[]) => {
        const runs = new CustomerRuns(3);
        const model = new Map<string, Set<number>>();
        let fresh = 0;
        for (const c of contracts) {
          if (runs.add(c.customer, c.currency, c.start, c.start + c.months - 1)) fresh++;
          const key = `${c.customer}/${c.currency}`;
          if (!model.has(key)) model.set(key, new Set());
          for (let m = c.start; m < c.start + c.months; m++) model.get(key)!.add(m);
        }
        expect(fresh).to.equal(model.size);
        const seen = new Map<number, [number, number][]>();
        const firsts: number[] = [];
        let entry = -1;
        runs.forEachRun((currency, start, end, first) => {
          if (first) {
            entry++;
            firsts.push(currency);
            seen.set(entry, []);
          }
          seen.get(entry)!.push([start, end]);
        });
        const expected = [...model.values()].map(runsOf).sort((a, b) => a[0]![0] - b[0]![0] || a.length - b.length);
        const actual = [...seen.values()].sort((a, b) => a[0]![0] - b[0]![0] || a.length - b.length);
        expect(actual.map((r) => JSON.stringify(r)).sort()).to.deep.equal(expected.map((r) => JSON.stringify(r)).sort());
        expect(runs.runCount).to.equal(expected.reduce((n, r) => n + r.length, 0));
      }),
      { numRuns: 2000 },
    );
  });

  it('when there are more entries and runs than a page holds, then each still has its own runs', () => {
    // 70,000 customers in two currencies: 140,000 entries, 280,000 runs; then a third contract
    // joins the two runs of half of them (run nodes freed and reused across pages), and a fourth
    // comes before the first run of a third of them. Each customer's months are its own.
    const customers = 70_000;
    const runs = new CustomerRuns(customers);
    const base = (c: number) => 20 * (c % 5000);
    for (let c = 0; c < customers; c++) {
      for (const currency of [1, 2]) {
        expect(runs.add(c, currency, base(c), base(c) + 5)).to.equal(true);
        expect(runs.add(c, currency, base(c) + 10, base(c) + 12)).to.equal(false);
      }
    }
    expect(runs.runCount).to.equal(4 * customers);
    for (let c = 0; c < customers; c += 2) runs.add(c, 1, base(c) + 6, base(c) + 9);
    for (let c = 0; c < customers; c += 3) runs.add(c, 2, base(c) - 5, base(c) - 3);
    const seen: string[] = [];
    runs.forEachRun((currency, start, end, first) => seen.push(`${currency}:${start}-${end}${first ? '*' : ''}`));
    const expected: string[] = [];
    for (let c = 0; c < customers; c++) {
      const b = base(c);
      expected.push(...(c % 2 === 0 ? [`1:${b}-${b + 12}*`] : [`1:${b}-${b + 5}*`, `1:${b + 10}-${b + 12}`]));
      expected.push(...(c % 3 === 0 ? [`2:${b - 5}-${b - 3}*`, `2:${b}-${b + 5}`] : [`2:${b}-${b + 5}*`]), `2:${b + 10}-${b + 12}`);
    }
    expect(seen).to.deep.equal(expected);
    expect(runs.runCount).to.equal(expected.length);
  });
});
