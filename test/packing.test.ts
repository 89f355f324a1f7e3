import { expect } from 'chai';
import fc from 'fast-check';
import { PackReader, PackWriter } from '../shared/figures/packing.ts';

describe('packed figures', () => {
  const wide = fc.oneof(
    fc.bigInt({ min: -(2n ** 60n), max: 2n ** 60n }),
    fc.bigInt({ min: -(2n ** 300n), max: 2n ** 300n }),
    fc.constantFrom(0n, 1n, -1n, 2n ** 50n - 1n, 2n ** 50n, -(2n ** 50n) + 1n, -(2n ** 50n), 2n ** 32n, 2n ** 64n - 1n),
  );

  it('when integers and BigInts of any size are packed, then they are read back as they were, in order', () => {
    fc.assert(
      fc.property(fc.array(fc.tuple(fc.integer({ min: -(2 ** 40), max: 2 ** 40 }), wide, fc.string())), (items) => {
        const out = new PackWriter();
        for (const [n, b, s] of items) {
          out.int(n);
          out.big(b);
          out.string(s);
        }
        const back = new PackReader(out.done());
        for (const [n, b, s] of items) {
          expect(back.int()).to.equal(n);
          expect(back.big()).to.equal(b);
          expect(back.string()).to.equal(s);
        }
        expect(back.ended).to.equal(true);
      }),
    );
  });

  it('when non-negative BigInts are read as 32-bit limbs, then each is its limbs exactly, and its double within 1e-15 of it; a negative or wider one is refused', () => {
    fc.assert(
      fc.property(fc.array(fc.bigInt({ min: 0n, max: 2n ** 160n - 1n }), { minLength: 1 }), (values) => {
        const out = new PackWriter();
        for (const v of values) out.big(v);
        const width = 5;
        const limbs = new Uint32Array(values.length * width);
        const approx = new Float64Array(values.length);
        new PackReader(out.done()).magnitudesInto(values.length, width, limbs, approx);
        values.forEach((v, i) => {
          let fromLimbs = 0n;
          for (let k = width - 1; k >= 0; k--) fromLimbs = (fromLimbs << 32n) + BigInt(limbs[i * width + k]!);
          expect(fromLimbs).to.equal(v);
          expect(Math.abs(approx[i]! - Number(v))).to.be.at.most(Number(v) * 1e-15);
        });
      }),
    );
    const refused = (v: bigint, width: number) => {
      const out = new PackWriter();
      out.big(v);
      return () => new PackReader(out.done()).magnitudesInto(1, width, new Uint32Array(width), new Float64Array(1));
    };
    expect(refused(-5n, 2)).to.throw(RangeError);
    expect(refused(-(2n ** 70n), 3)).to.throw(RangeError);
    expect(refused(2n ** 64n, 2)).to.throw(RangeError);
    expect(refused(2n ** 40n, 1)).to.throw(RangeError);
    expect(refused(2n ** 64n - 1n, 2)).to.not.throw();
  });

  it('when packed figures end early, then reading them throws rather than inventing values', () => {
    const out = new PackWriter();
    out.big(2n ** 100n);
    out.string('EUR');
    const cut = out.done().subarray(0, 5);
    expect(() => new PackReader(Buffer.from(cut)).big()).to.throw(RangeError);
  });
});
