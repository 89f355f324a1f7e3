// The validator trims each cell on its UTF-8 bytes (shared/ingest/cellBytes.ts): the bytes left
// must be those of the cell's text trimmed by String.prototype.trim, for every white space
// character JavaScript trims and for the look-alikes it does not.
import { expect } from 'chai';
import fc from 'fast-check';
import { trim } from '../shared/ingest/cellBytes.ts';

const TRIMMED = ['\t', '\n', '\v', '\f', '\r', ' ', '\u00a0', '\u1680', ...Array.from({ length: 11 }, (_, i) => String.fromCharCode(0x2000 + i)), '\u2028', '\u2029', '\u202f', '\u205f', '\u3000', '\ufeff'];
/** Not trimmed, some with the same first bytes as white space: U+180E (no longer Zs), zero widths, U+2060, U+200B, U+20AC, U+3001, U+FEFE, U+00A1. */
const KEPT = ['\u180e', '\u200b', '\u2060', '\u20ac', '\u3001', '\ufefe', '\u00a1', '\u0085', 'x', 'é', '日', '🚀'];

function trimmedBytes(text: string): Buffer {
  const bytes = Buffer.from(`ab${text}cd`); // the cell lies among other bytes
  const span = new Int32Array(2);
  trim(bytes, 2, bytes.length - 2, span);
  return bytes.subarray(span[0], span[1]);
}

describe('cells trimmed on their bytes', () => {
  it('when a cell is white space JavaScript trims, or look-alikes it keeps, at either end or inside, then the bytes kept are those of text.trim()', () => {
    for (const space of TRIMMED) {
      for (const kept of KEPT) {
        for (const text of [space, `${space}${kept}`, `${kept}${space}`, `${space}${kept}${space}${kept}${space}`, `${space}${space}`, kept]) {
          expect(trimmedBytes(text), JSON.stringify(text)).to.deep.equal(Buffer.from(text.trim()));
        }
      }
    }
  });

  it('when cells are any mix of white space and other characters (property), then the bytes kept are those of text.trim()', () => {
    const piece = fc.oneof(fc.constantFrom(...TRIMMED, ...KEPT), fc.string({ unit: 'grapheme', maxLength: 3 }));
    fc.assert(
      fc.property(fc.array(piece, { maxLength: 12 }), (pieces) => {
        const text = pieces.join('');
        expect(trimmedBytes(text)).to.deep.equal(Buffer.from(text.trim()));
      }),
      { numRuns: 2000 },
    );
  });
});
