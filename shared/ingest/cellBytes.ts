// A cell's text, read on its UTF-8 bytes where it lies (csvRecords.ts hands cells over as spans of
// bytes): the white space around it, as String.prototype.trim sees it, and its length in
// characters. The validator and the blank-line check use them; no string is made.

/** A printable ASCII character: never white space. */
const printable = (c: number) => c > 32 && c < 127;

/**
 * The length of the white space character at `b[i]` (before `end`) as String.prototype.trim counts
 * white space (ECMAScript's WhiteSpace and LineTerminator: ASCII's, U+00A0, U+1680, U+2000–U+200A,
 * U+2028, U+2029, U+202F, U+205F, U+3000, U+FEFF), or 0 when the character there is not one.
 */
function spaceAt(b: Uint8Array, i: number, end: number): number {
  const c = b[i]!;
  if (c < 0x80) return c === 32 || (c >= 9 && c <= 13) ? 1 : 0;
  if (c === 0xc2) return i + 1 < end && b[i + 1] === 0xa0 ? 2 : 0;
  if (i + 2 >= end) return 0;
  const c1 = b[i + 1]!;
  const c2 = b[i + 2]!;
  if (c === 0xe1) return c1 === 0x9a && c2 === 0x80 ? 3 : 0;
  if (c === 0xe2) {
    if (c1 === 0x80) return c2 <= 0x8a || c2 === 0xa8 || c2 === 0xa9 || c2 === 0xaf ? 3 : 0; // c2 ≥ 0x80: a continuation byte
    return c1 === 0x81 && c2 === 0x9f ? 3 : 0;
  }
  if (c === 0xe3) return c1 === 0x80 && c2 === 0x80 ? 3 : 0;
  if (c === 0xef) return c1 === 0xbb && c2 === 0xbf ? 3 : 0;
  return 0;
}

/** The cell `b[start, end)` has no white space around it, as its two ends tell (most cells): trim() need not be called. */
export const bare = (b: Uint8Array, start: number, end: number) => end === start || (printable(b[start]!) && printable(b[end - 1]!));

/** A cell `b[start, end)` without the white space around it, as `[start, end)` in `into`. */
export function trim(b: Uint8Array, start: number, end: number, into: Int32Array): void {
  if (!bare(b, start, end)) {
    for (let k = 0; start < end && (k = spaceAt(b, start, end)) > 0; ) start += k;
    while (end > start) {
      let last = end - 1;
      while (last > start && (b[last]! & 0xc0) === 0x80) last--; // back to the last character's first byte
      if (spaceAt(b, last, end) !== end - last) break;
      end = last;
    }
  }
  into[0] = start;
  into[1] = end;
}

/** Characters (code points) in the UTF-8 bytes `b[start, end)`: the bytes that do not continue a character. */
export function characters(b: Uint8Array, start: number, end: number): number {
  let n = 0;
  for (let i = start; i < end; i++) if ((b[i]! & 0xc0) !== 0x80) n++;
  return n;
}
