// The start of a file: read until its first line is whole (or 64 KiB), to detect its delimiter
// before any record is read. The build and the rejected rows read a file the same way.

const SNIFF_BYTES = 64 * 1024;
const DELIMITERS = [',', ';', '\t'] as const;

/** The delimiter used most on the header line (`,` when none is). */
export function detectDelimiter(headerLine: string): string {
  let best: string = ',';
  let bestCount = 0;
  for (const d of DELIMITERS) {
    const count = headerLine.split(d).length - 1;
    if (count > bestCount) {
      best = d;
      bestCount = count;
    }
  }
  return best;
}

/** The chunks read so far (to be read again as the file's start), their size, and the delimiter. */
export async function readFileHead(iterator: AsyncIterator<Buffer>): Promise<{ head: Buffer[]; bytes: number; delimiter: string }> {
  const head: Buffer[] = [];
  let bytes = 0;
  for (;;) {
    const next = await iterator.next();
    if (next.done) break;
    head.push(next.value);
    bytes += next.value.length;
    if (next.value.includes(0x0a) || bytes >= SNIFF_BYTES) break;
  }
  const text = Buffer.concat(head).toString('utf8').replace(/^\uFEFF/, '');
  return { head, bytes, delimiter: detectDelimiter(text.split(/\r?\n/, 1)[0] ?? '') };
}
