// A file's bytes in chunks that end between characters, without the byte order mark a file may
// start with, telling whether any were not UTF-8: a character cut by a chunk's end is carried over
// to the next chunk, so that each chunk is checked whole (one native, vectorized check a chunk
// while all is well) and a cut is never taken for bad bytes. Once bad bytes were met, the reader
// of the chunks checks each record's cells itself (see parseContracts.ts): the record with the
// bad bytes is reported, the others are read.
import { isUtf8 } from 'node:buffer';

const NOTHING = Buffer.alloc(0);
/** The byte order mark U+FEFF as UTF-8: a whole character, so the first chunk handed out holds all of it or none. */
const BOM = Buffer.from([0xef, 0xbb, 0xbf]);

export class Utf8Chunks {
  /** The start of a character cut by the end of the previous chunk. */
  private pending: Buffer | undefined;
  /** Whether any bad bytes were met so far. */
  sawBadBytes = false;
  /** Nothing was handed out yet: a byte order mark would come first. */
  private atStart = true;

  /** The chunk, with the start of a character the previous one cut before it and without the one it cuts. */
  write(chunk: Buffer): Buffer {
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
    if (!this.sawBadBytes && !isUtf8(bytes)) this.sawBadBytes = true;
    return this.withoutBom(bytes);
  }

  /** The end of the input: a character still cut short is bad bytes, handed over as they are. */
  end(): Buffer {
    const rest = this.pending;
    if (!rest) return NOTHING;
    this.pending = undefined;
    this.sawBadBytes = true;
    return this.withoutBom(rest);
  }

  private withoutBom(bytes: Buffer): Buffer {
    if (!this.atStart || bytes.length === 0) return bytes;
    this.atStart = false;
    return bytes.subarray(0, BOM.length).equals(BOM) ? bytes.subarray(BOM.length) : bytes;
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
