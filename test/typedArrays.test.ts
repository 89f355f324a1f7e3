// Arrays reserved at their longest length (shared/ingest/typedArrays.ts): the tally's per-name,
// per-customer and per-contractId arrays come from one buffer mapped on its own, so that they
// are never grown by copies (whose freed copies stayed resident in the allocator).
import { expect } from 'chai';
import { freeNow, grown, Reservation } from '../shared/platform/typedArrays.ts';

describe('reserved arrays', () => {
  it('when arrays are taken from a reservation, then each starts zero, none overlaps another, and one too many is refused', () => {
    const reservation = new Reservation(Reservation.bytes(4 * 3, 8 * 2, 4 * 5));
    const a = reservation.int32(3);
    const b = reservation.float64(2);
    const c = reservation.int32(5);
    expect([...a, ...b, ...c].every((v) => v === 0)).to.equal(true);
    a.fill(-1);
    b.fill(Math.PI);
    c.fill(7);
    expect([...a]).to.deep.equal([-1, -1, -1]);
    expect([...b]).to.deep.equal([Math.PI, Math.PI]);
    expect([...c]).to.deep.equal([7, 7, 7, 7, 7]);
    // A small reservation is made as it is: V8 counts all of it as external memory until the next collection.
    expect(a.buffer.byteLength).to.equal(Reservation.bytes(4 * 3, 8 * 2, 4 * 5));
    expect(() => reservation.int32(1)).to.throw(/no room/);
  });

  it('when more than 1 MiB is reserved, then at least 32 MiB are, so that the allocator maps the buffer on its own', () => {
    const reservation = new Reservation(1024 * 1024 + 8);
    const a = reservation.int32(10);
    expect(a.buffer.byteLength).to.be.greaterThan(32 * 1024 * 1024);
    expect(() => reservation.float64(a.buffer.byteLength / 8)).to.throw(/no room/);
    reservation.free();
  });

  it('when a reserved array is freed alone, then it stays (it goes with its reservation); free() lets them all go', () => {
    const reservation = new Reservation(2 * 1024 * 1024);
    const a = reservation.int32(10);
    const b = reservation.int32(10);
    const own = new Int32Array(10);
    freeNow(a, own);
    expect(a.length).to.equal(10);
    expect(own.length).to.equal(0);
    // An array that is all of its (small) reservation stays too.
    const whole = new Reservation(Reservation.bytes(4 * 10)).int32(10);
    expect(whole.byteLength).to.equal(whole.buffer.byteLength);
    freeNow(whole);
    expect(whole.length).to.equal(10);
    const held = process.memoryUsage().arrayBuffers;
    reservation.free();
    expect(a.length).to.equal(0);
    expect(b.length).to.equal(0);
    expect(held - process.memoryUsage().arrayBuffers).to.be.at.least(32 * 1024 * 1024);
  });

  it('when an array grows, then its copy keeps its values and is half as long again, up to the most asked for (but never short of what is needed)', () => {
    const page = new Uint8Array(4096).fill(7);
    expect(grown(page, 100)).to.equal(page);
    const bigger = grown(page, 5000);
    expect([bigger.length, bigger[4095], bigger[4096]]).to.deep.equal([6144, 7, 0]);
    expect(grown(page, 5000, 6000).length).to.equal(6000);
    expect(grown(page, 9000, 6000).length).to.equal(9000);
  });
});
