// A file's records read again, numbered exactly as the build numbered them (the header is row 1;
// blank, malformed and overlong records count too), with the delimiter the build detected: for
// giving users back the rows their file had, as they wrote them.
import { CsvRecords } from './csvRecords.ts';
import { readFileHead } from './fileHead.ts';
import { Utf8Chunks } from './utf8Chunks.ts';

const SLICE_BYTES = 64 * 1024;

/** A record of the file: its cells, or null when it could not be read (overlong, unterminated quote). */
export type SourceRecord = { row: number; cells: string[] | null };

export type SourceRecords = { delimiter: string; records: AsyncGenerator<SourceRecord> };

/** The records of `source`, in order; invalid UTF-8 reads as U+FFFD. */
export async function sourceRecords(source: AsyncIterable<Buffer>): Promise<SourceRecords> {
  const iterator = source[Symbol.asyncIterator]();
  const { head, delimiter } = await readFileHead(iterator);

  async function* records(): AsyncGenerator<SourceRecord> {
    let row = 0;
    let ready: SourceRecord[] = [];
    const csv = new CsvRecords(delimiter, {
      record: (cells) => ready.push({ row: ++row, cells: cells.texts() }),
      malformed: () => ready.push({ row: ++row, cells: null }),
      overlong: () => ready.push({ row: ++row, cells: null }),
    });
    const utf8 = new Utf8Chunks();
    const take = () => {
      const out = ready;
      ready = [];
      return out;
    };
    try {
      const chunks = async function* () {
        yield* head;
        for (let next = await iterator.next(); !next.done; next = await iterator.next()) yield next.value;
      };
      for await (const chunk of chunks()) {
        for (let at = 0; at < chunk.length; at += SLICE_BYTES) {
          csv.push(utf8.write(chunk.subarray(at, at + SLICE_BYTES)));
          yield* take();
        }
      }
      csv.push(utf8.end());
      csv.end();
      yield* take();
    } finally {
      await iterator.return?.();
    }
  }
  return { delimiter, records: records() };
}
