// UTF-8 bytes to text, chunk by chunk, telling bad bytes apart on the bytes themselves: a decoder's
// U+FFFD cannot be told from a U+FFFD the file really holds (valid UTF-8: EF BF BD). Each invalid
// sequence (a maximal subpart, as the Unicode standard counts them: overlong forms, encoded
// surrogates, stray continuation bytes, a sequence cut short) becomes one lone surrogate, which
// valid UTF-8 never decodes to; so text with bad bytes is exactly text that is not well-formed
// (`!text.isWellFormed()`), wherever the chunks were cut.
// A valid chunk costs one validation and one decoding, both native and vectorized; only a chunk
// holding bad bytes is walked byte by byte.
import { isUtf8 } from 'node:buffer';

/** What an invalid sequence becomes. */
export const BAD_BYTES = '\uD800';

export class Utf8Text {
  /** The start of a character cut by the end of the previous chunk. */
  private pending: Buffer | undefined;
  /** Whether any bad bytes were met so far. */
  sawBadBytes = false;

  write(chunk: Buffer): string {
    let bytes = chunk;
    if (this.pending) {
      bytes = Buffer.concat([this.pending, chunk]);
      this.pending = undefined;
    }
    const cut = cutCharacter(bytes);
    if (cut > 0) {
      this.pending = Buffer.from(bytes.subarray(bytes.length - cut));
      bytes = bytes.subarray(0, bytes.length - cut);
    }
    if (isUtf8(bytes)) return bytes.toString('utf8');
    this.sawBadBytes = true;
    return decodeMarkingBadBytes(bytes);
  }

  /** The end of the input: a character still cut short is bad bytes. */
  end(): string {
    if (!this.pending) return '';
    this.pending = undefined;
    this.sawBadBytes = true;
    return BAD_BYTES;
  }
}

/** How many bytes at the end of `bytes` start a multi-byte character that needs more bytes. */
function cutCharacter(bytes: Buffer): number {
  const n = bytes.length;
  for (let k = 1; k <= 3 && k <= n; k++) {
    const b = bytes[n - k]!;
    if ((b & 0xc0) === 0x80) continue; // a continuation byte: its lead is further back
    const length = b >= 0xc2 && b <= 0xdf ? 2 : b >= 0xe0 && b <= 0xef ? 3 : b >= 0xf0 && b <= 0xf4 ? 4 : 1;
    return length > k ? k : 0;
  }
  return 0; // complete, or bad bytes that more bytes cannot mend
}

/** Decodes `bytes`, each invalid sequence as BAD_BYTES (the slow path: only for chunks with some). */
function decodeMarkingBadBytes(bytes: Buffer): string {
  let text = '';
  let run = 0; // start of the current run of valid bytes
  let i = 0;
  while (i < bytes.length) {
    if (bytes[i]! < 0x80) {
      i++;
      continue;
    }
    const length = sequenceAt(bytes, i);
    if (length > 0) {
      i += length;
      continue;
    }
    text += bytes.toString('utf8', run, i) + BAD_BYTES;
    i -= length;
    run = i;
  }
  return text + bytes.toString('utf8', run, bytes.length);
}

/**
 * The well-formed UTF-8 sequence starting at `i` (Unicode's table 3-7): its length, or minus the
 * length of its maximal invalid subpart.
 */
function sequenceAt(bytes: Buffer, i: number): number {
  const lead = bytes[i]!;
  let more: number;
  let low = 0x80;
  let high = 0xbf;
  if (lead >= 0xc2 && lead <= 0xdf) more = 1;
  else if (lead >= 0xe0 && lead <= 0xef) {
    more = 2;
    if (lead === 0xe0) low = 0xa0; // else overlong
    else if (lead === 0xed) high = 0x9f; // else a surrogate
  } else if (lead >= 0xf0 && lead <= 0xf4) {
    more = 3;
    if (lead === 0xf0) low = 0x90; // else overlong
    else if (lead === 0xf4) high = 0x8f; // else past U+10FFFF
  } else return -1;
  for (let k = 1; k <= more; k++) {
    const b = bytes[i + k];
    if (b === undefined || b < low || b > high) return -k;
    low = 0x80;
    high = 0xbf;
  }
  return more + 1;
}
