// Strings to UTF-8 in JavaScript, unit by unit, as Buffer's write does it (a lone surrogate
// becomes U+FFFD): the build encodes every text cell of every row for COPY (the tally reads its
// names' bytes back from the COPY row), and cells are short, so a call into C++ per cell cost more
// than the encoding (one per non-ASCII cell was 5% of a build thread's time on names beyond ASCII).

/** At most this many bytes a UTF-16 unit: room to make before encoding. */
export const MAX_BYTES_PER_UNIT = 3;

/** Writes `value` as UTF-8 into `bytes` at `at` (room made by the caller: 3 bytes a unit); returns where it ends. */
export function writeUtf8(value: string, bytes: Uint8Array, at: number): number {
  const n = value.length;
  let out = at;
  for (let i = 0; i < n; i++) {
    const c = value.charCodeAt(i);
    if (c < 0x80) {
      bytes[out++] = c;
    } else if (c < 0x800) {
      bytes[out] = 0xc0 | (c >> 6);
      bytes[out + 1] = 0x80 | (c & 0x3f);
      out += 2;
    } else if (c < 0xd800 || c > 0xdfff) {
      bytes[out] = 0xe0 | (c >> 12);
      bytes[out + 1] = 0x80 | ((c >> 6) & 0x3f);
      bytes[out + 2] = 0x80 | (c & 0x3f);
      out += 3;
    } else {
      const next = i + 1 < n ? value.charCodeAt(i + 1) : 0;
      if (c <= 0xdbff && next >= 0xdc00 && next <= 0xdfff) {
        const p = 0x10000 + ((c - 0xd800) << 10) + (next - 0xdc00);
        bytes[out] = 0xf0 | (p >> 18);
        bytes[out + 1] = 0x80 | ((p >> 12) & 0x3f);
        bytes[out + 2] = 0x80 | ((p >> 6) & 0x3f);
        bytes[out + 3] = 0x80 | (p & 0x3f);
        out += 4;
        i++;
      } else {
        bytes[out] = 0xef; // U+FFFD for a lone surrogate
        bytes[out + 1] = 0xbf;
        bytes[out + 2] = 0xbd;
        out += 3;
      }
    }
  }
  return out;
}
