// A failed version's row errors as the elements of a JSON array, streamed from PostgreSQL with
// COPY: a file with millions of bad rows is answered with memory that does not grow with it.
// Each element is built in SQL exactly as JSON.stringify would write {row, field, code, message}.
import { Transform, type Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { to as copyTo } from 'pg-copy-streams';
import { copyJsonLinesOut, type Pool } from '../platform/db.ts';
import { checkedId } from '../platform/ids.ts';

/** One element per line (COPY takes no parameters: the id is checked before it is inlined). */
function errorsCopySql(versionId: string): string {
  return copyJsonLinesOut(`SELECT '{"row":' || row_number || ',"field":' || to_json(field)::text || ',"code":' || to_json(code)::text
      || ',"message":' || to_json(message)::text || '}'
    FROM version_errors WHERE version_id = '${checkedId('ver', versionId)}' ORDER BY row_number, seq`);
}

/**
 * Turns COPY's lines into comma-separated elements: JSON text has no raw newline, so every newline
 * ends an element; the last one is held back and dropped at the end.
 */
function linesToElements(): Transform {
  let held: number | undefined;
  return new Transform({
    transform(chunk: Buffer, _encoding, done) {
      const out = Buffer.allocUnsafe(chunk.length);
      let n = 0;
      if (held !== undefined) out[n++] = held;
      for (let i = 0; i < chunk.length - 1; i++) out[n++] = chunk[i] === 0x0a ? 0x2c : chunk[i]!;
      held = chunk.length > 0 ? (chunk[chunk.length - 1] === 0x0a ? 0x2c : chunk[chunk.length - 1]) : held;
      done(null, out.subarray(0, n));
    },
    flush(done) {
      // `held` is the comma that ended the last element.
      done();
    },
  });
}

/** Writes the version's row errors (the inside of the array, no brackets) to `sink`, which stays open. */
export async function writeVersionErrorsJson(pool: Pool, versionId: string, sink: NodeJS.WritableStream): Promise<void> {
  const client = await pool.connect();
  let failure: Error | undefined;
  try {
    const rows: Readable = client.query(copyTo(errorsCopySql(versionId)));
    await pipeline(rows, linesToElements(), sink, { end: false });
  } catch (error) {
    failure = error as Error;
    throw error;
  } finally {
    // A COPY cut short (the reader went away) leaves the connection mid-protocol: drop it.
    client.release(failure);
  }
}
