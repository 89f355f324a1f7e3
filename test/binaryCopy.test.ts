// The binary COPY writer's values (shared/ingest/binaryCopy.ts): a text value is a cell's bytes
// copied as they are, wherever they sit in the record's buffer; an amount is its ASCII digits
// turned into PostgreSQL's numeric (base-10000 digits), which must read back as the same number.
import { expect } from 'chai';
import fc from 'fast-check';
import { BinaryCopyWriter } from '../shared/ingest/binaryCopy.ts';

/** The rows' values as written: the header skipped, each row's one field's bytes (null for NULL). */
function fieldValues(stream: Buffer): (Buffer | null)[] {
  const values: (Buffer | null)[] = [];
  let at = 11 + 4 + 4; // signature, flags, header extension length (0)
  for (;;) {
    const fields = stream.readInt16BE(at);
    at += 2;
    if (fields === -1) return values;
    const length = stream.readInt32BE(at);
    at += 4;
    values.push(length === -1 ? null : stream.subarray(at, at + length));
    if (length > 0) at += length;
  }
}

/** Each value's UTF-8 bytes, written from a buffer that holds them among other bytes. */
function writtenTexts(values: (string | null)[]): (Buffer | null)[] {
  const writer = new BinaryCopyWriter();
  for (const value of values) {
    const bytes = Buffer.from(`«${value ?? ''}»`);
    writer.row(1, 4 + bytes.length);
    if (value === null) writer.null();
    else writer.text(bytes, 2, bytes.length - 2); // « and » are two bytes each
  }
  return fieldValues(Buffer.concat([...writer.take(), ...writer.finish()]));
}

/** A numeric value in binary (ndigits, weight, sign, dscale, base-10000 digits) as text with its 2 decimals. */
function numericText(value: Buffer): string {
  const digits = value.readInt16BE(0);
  const weight = value.readInt16BE(2);
  expect(value.readInt16BE(4), 'sign').to.equal(0);
  expect(value.readInt16BE(6), 'display scale').to.equal(2);
  let units = 0n; // in 1/10000
  for (let i = 0; i < digits; i++) units += BigInt(value.readInt16BE(8 + 2 * i)) * 10000n ** BigInt(weight - i + 1);
  const cents = units / 100n;
  return `${cents / 100n}.${String(cents % 100n).padStart(2, '0')}`;
}

function writtenAmounts(amounts: string[]): string[] {
  const writer = new BinaryCopyWriter();
  for (const amount of amounts) {
    const bytes = Buffer.from(` ${amount} `);
    writer.row(1, 4 + 20);
    writer.numeric(bytes, 1, bytes.length - 1);
  }
  return fieldValues(Buffer.concat([...writer.take(), ...writer.finish()])).map((v) => numericText(v!));
}

/** An amount as the validator accepts it, with its 2 decimals. */
const twoDecimals = (amount: string) => {
  const [whole, fraction = ''] = amount.split('.');
  return `${BigInt(whole!)}.${fraction.padEnd(2, '0')}`;
};

/** Each amount written by numeric() from its digits and by numericCents() from its cents: the two streams. */
function bothWays(amounts: string[]): [Buffer, Buffer] {
  const digits = new BinaryCopyWriter();
  const cents = new BinaryCopyWriter();
  for (const amount of amounts) {
    const bytes = Buffer.from(amount);
    digits.row(1, 4 + 20);
    digits.numeric(bytes, 0, bytes.length);
    cents.row(1, 4 + 20);
    cents.numericCents(Number(twoDecimals(amount).replace('.', '')));
  }
  return [Buffer.concat([...digits.take(), ...digits.finish()]), Buffer.concat([...cents.take(), ...cents.finish()])];
}

describe('binary COPY values', () => {
  it('when text values hold ASCII, Latin, Cyrillic, CJK and emoji, short and long, then each is written byte for byte', () => {
    const values = ['', 'Acme Corp', 'Lefèvre Software S.à r.l.', 'Газпромбанк', 'サポート 有限公司', 'rocket 🚀 and 𝄞', 'x'.repeat(64), 'y'.repeat(65), 'Ж'.repeat(500), null];
    expect(writtenTexts(values)).to.deep.equal(values.map((v) => (v === null ? null : Buffer.from(v))));
  });

  it('when any strings are written (property), then their bytes are their UTF-8', () => {
    fc.assert(
      fc.property(fc.array(fc.string({ unit: 'grapheme', maxLength: 80 }), { maxLength: 20 }), (values) => {
        expect(writtenTexts(values)).to.deep.equal(values.map((v) => Buffer.from(v)));
      }),
      { numRuns: 500 },
    );
  });

  it('when a value fills most of a batch, then the rows after it still come out whole', () => {
    const long = 'Ж'.repeat(100_000); // 200,000 bytes: the next rows cross the 256 KiB batch
    const values = [long, ...Array.from({ length: 2_000 }, (_, i) => `row ${i} ✓`)];
    expect(writtenTexts(values)).to.deep.equal(values.map((v) => Buffer.from(v)));
  });

  it('when amounts have 1 to 18 digits, leading zeros, zero, and 0 to 2 decimals (property), then each reads back as the same number', () => {
    const fixed = ['0', '0.0', '0.00', '0.5', '0.05', '7', '10000', '9999', '12345.6', '000123.40', '999999999999999999.99', '100000000.01'];
    expect(writtenAmounts(fixed)).to.deep.equal(fixed.map(twoDecimals));
    const amount = fc
      .tuple(fc.stringMatching(/^[0-9]{1,18}$/), fc.constantFrom('', '.', '..'), fc.stringMatching(/^[0-9]{2}$/))
      .map(([whole, dot, cents]) => (dot === '' ? whole : `${whole}.${cents.slice(0, dot.length)}`));
    fc.assert(
      fc.property(fc.array(amount, { maxLength: 20 }), (amounts) => {
        expect(writtenAmounts(amounts)).to.deep.equal(amounts.map(twoDecimals));
      }),
      { numRuns: 500 },
    );
  });

  it('when amounts up to 2^53 cents are written from their cents (property), then the bytes are those written from their digits', () => {
    const fixed = ['0', '0.01', '0.1', '1', '99.99', '100', '10000', '10000.5', '90071992547409.91', '00012.30'];
    const [digits, cents] = bothWays(fixed);
    expect(cents).to.deep.equal(digits);
    const amount = fc
      .tuple(fc.bigInt({ min: 0n, max: BigInt(Number.MAX_SAFE_INTEGER) }), fc.constantFrom(0, 1, 2))
      .map(([value, decimals]) => {
        const text = String(value).padStart(3, '0');
        return decimals === 0 ? text.slice(0, -2) : `${text.slice(0, -2)}.${text.slice(-2, decimals === 1 ? -1 : undefined)}`;
      });
    fc.assert(
      fc.property(fc.array(amount, { maxLength: 20 }), (amounts) => {
        const [fromDigits, fromCents] = bothWays(amounts);
        expect(fromCents).to.deep.equal(fromDigits);
      }),
      { numRuns: 500 },
    );
  });
});
