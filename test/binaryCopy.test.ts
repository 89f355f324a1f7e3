// The binary COPY writer's text values (shared/ingest/binaryCopy.ts): encoded to UTF-8 in
// JavaScript, unit by unit, they must be the bytes Buffer's own encoder gives, for every string.
import { expect } from 'chai';
import fc from 'fast-check';
import { BinaryCopyWriter } from '../shared/ingest/binaryCopy.ts';

/** The rows' values as written: the header skipped, each row's one field's bytes (null for NULL). */
function textValues(stream: Buffer): (Buffer | null)[] {
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

function written(values: (string | null)[]): (Buffer | null)[] {
  const writer = new BinaryCopyWriter();
  for (const value of values) {
    writer.row(1, 4 + 3 * (value?.length ?? 0));
    writer.text(value);
  }
  return textValues(Buffer.concat([...writer.take(), ...writer.finish()]));
}

describe('binary COPY text values', () => {
  it('when values hold ASCII, Latin, Cyrillic, CJK, emoji (surrogate pairs) and lone surrogates, then each is written as Buffer encodes it', () => {
    const values = [
      '',
      'Acme Corp',
      'Lefèvre Software S.à r.l.',
      'Газпромбанк',
      'Αθηναϊκή',
      'サポート 有限公司',
      'Nguyễn Phát',
      '\u007f\u0080\u07ff\u0800\uffff',
      'rocket 🚀 and 𝄞',
      'lone \ud800 high',
      'lone \udc00 low',
      'high at the end \udbff',
      '\udc00\ud800 reversed pair',
      'two lows \udc00\udc01, two highs \ud800\ud801',
      null,
    ];
    expect(written(values)).to.deep.equal(values.map((v) => (v === null ? null : Buffer.from(v, 'utf8'))));
  });

  it('when any strings are written (property), then their bytes are those of Buffer.from(value, "utf8")', () => {
    fc.assert(
      fc.property(fc.array(fc.string({ unit: 'binary', maxLength: 40 }), { maxLength: 20 }), (values) => {
        expect(written(values)).to.deep.equal(values.map((v) => Buffer.from(v, 'utf8')));
      }),
      { numRuns: 500 },
    );
  });

  it('when a value fills most of a batch, then the rows after it still come out whole', () => {
    const long = 'Ж'.repeat(100_000); // 200,000 bytes: the next rows cross the 256 KiB batch
    const values = [long, ...Array.from({ length: 2_000 }, (_, i) => `row ${i} ✓`)];
    expect(written(values)).to.deep.equal(values.map((v) => Buffer.from(v, 'utf8')));
  });
});
