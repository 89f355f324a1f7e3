// Property-based fuzzing of the CSV reading path, for a bounded time: arbitrary text and bytes
// (quotes, line breaks, delimiters, NUL, non-ASCII, bad bytes) cut into arbitrary chunks. A failure
// prints the seed and the shrunk input; replay it with `fc.assert(…, { seed, path })`.
import { Writable } from 'node:stream';
import { expect } from 'chai';
import fc from 'fast-check';
import type { RowError } from '../shared/contract/fields.ts';
import { parseContracts } from '../shared/ingest/parseContracts.ts';
import { csvParse, fast } from './support/csv.ts';

/** Each property runs until this many runs or this many milliseconds, whichever comes first. */
const RUNS = 10_000;
const TIME_MS = 1000;
const bounded = { numRuns: RUNS, plugins: [fc.interruptAfterTimeLimit(TIME_MS)] };

const TEXT_PIECES = ['"', '""', ',', ';', '\t', '\n', '\r\n', '\r', 'a', 'bc', ' ', 'é', '€', '😀', '\uFFFD', '\u0000', '\uD800', 'x"y'];
const textOf = (pieces: string[]) => fc.array(fc.constantFrom(...pieces), { maxLength: 40 }).map((chosen) => chosen.join(''));
const text = textOf(TEXT_PIECES);
/**
 * For csv-parse: it reads bytes, so a lone surrogate (what the decoder makes of bad bytes) comes back
 * as U+FFFD; and it takes a NUL after a closing quote for the end of its buffer (`!nextChr`).
 */
const csvParseText = textOf(TEXT_PIECES.filter((p) => p.isWellFormed() && p !== '\u0000'));
const delimiter = fc.constantFrom(',', ';', '\t');
/** Chunk sizes, cycled. */
const chunking = fc.array(fc.integer({ min: 1, max: 9 }), { minLength: 1, maxLength: 4 });

describe('fuzzing the CSV reader (fast-check, bounded time)', () => {
  it('when any text is read in any chunks, then it never throws and reads what csv-parse reads', () => {
    fc.assert(
      fc.property(csvParseText, delimiter, chunking, (input, d, sizes) => {
        const expected = csvParse(input, d);
        expect(fast(input, d)).to.deep.equal(expected);
        expect(fast(input, d, sizes)).to.deep.equal(expected);
      }),
      bounded,
    );
  });

  it('when any text is read with a small record cap, then the records are the same whatever the chunks', () => {
    fc.assert(
      fc.property(text, delimiter, chunking, fc.integer({ min: 0, max: 24 }), (input, d, sizes, cap) => {
        expect(fast(input, d, sizes, cap)).to.deep.equal(fast(input, d, undefined, cap));
      }),
      bounded,
    );
  });

  it('when records of known bytes are written as CSV, then each is read back, or reported overlong in its place exactly when over the cap', () => {
    const cell = fc.array(fc.constantFrom('"', ',', '\n', '\r', 'a', 'é', '😀', ' ', '\u0000'), { maxLength: 6 }).map((p) => p.join(''));
    const records = fc.array(fc.array(cell, { minLength: 1, maxLength: 4 }), { minLength: 1, maxLength: 8 });
    fc.assert(
      fc.property(records, fc.constantFrom('\n', '\r\n', '\r'), fc.boolean(), fc.integer({ min: 0, max: 30 }), chunking, (generated, rd, trailing, cap, sizes) => {
        const quote = (c: string) => (/[",\r\n]/.test(c) ? `"${c.replaceAll('"', '""')}"` : c);
        const lines = generated.map((cells) => cells.map(quote).join(','));
        const input = lines.join(rd) + (trailing ? rd : '');
        // A last record that is one empty cell and has no line break is no record at all.
        const rows = !trailing && lines.at(-1) === '' ? generated.slice(0, -1) : generated;
        const expected = rows.map((cells, i) => (Buffer.byteLength(lines[i]!) > cap ? 'overlong' : cells));
        expect(fast(input, ',', sizes, cap)).to.deep.equal(expected);
      }),
      bounded,
    );
  });
});

const BYTE_PIECES = [
  'customer', 'amount', 'currency', 'startDate', ',', ';', '"', '\n', '\r', 'Acme', '12.50', 'EUR', '2026-01-01', ' ',
  [0x00], [0xc3, 0xa9], [0xe2, 0x82, 0xac], [0xf0, 0x9f, 0x98, 0x80], [0xef, 0xbf, 0xbd], [0xef, 0xbb, 0xbf],
  [0xc0, 0xaf], [0xe0, 0x80, 0xaf], [0xed, 0xa0, 0x80], [0xff], [0x80], [0xe2, 0x82], [0xf4, 0x90, 0x80, 0x80],
].map((p) => Buffer.from(p as string | number[]));
const bytes = fc.oneof(
  fc.array(fc.constantFrom(...BYTE_PIECES), { maxLength: 40 }).map((pieces) => Buffer.concat(pieces)),
  fc.uint8Array({ maxLength: 60 }).map((b) => Buffer.from(b)),
);
const withHeader = fc.tuple(fc.boolean(), bytes).map(([header, body]) => (header ? Buffer.concat([Buffer.from('customer,amount,currency\n'), body]) : body));

/** The errors parseContracts reports for `input` cut into chunks of the given sizes (cycled). */
async function reports(input: Buffer, sizes: number[], maxRecordBytes?: number): Promise<RowError[]> {
  const errors: RowError[] = [];
  async function* chunks() {
    for (let at = 0, k = 0; at < input.length; k++) {
      const size = sizes[k % sizes.length]!;
      yield input.subarray(at, at + size);
      at += size;
    }
  }
  await parseContracts({
    source: chunks(),
    versionId: 'ver_fuzz',
    sink: new Writable({ write: (_chunk, _encoding, done) => done() }),
    report: (error) => void errors.push(error),
    ...(maxRecordBytes !== undefined && { maxRecordBytes }),
  });
  return errors;
}

describe('fuzzing the contract file reader (fast-check, bounded time)', () => {
  it('when any bytes are read in any chunks, then it never throws, reports rows in order, and reports the same whatever the chunks', async () => {
    await fc.assert(
      fc.asyncProperty(withHeader, chunking, fc.option(fc.integer({ min: 1, max: 40 }), { nil: undefined }), async (input, sizes, cap) => {
        const whole = await reports(input, [input.length || 1], cap);
        const rows = whole.map((e) => e.row);
        expect(rows).to.deep.equal(rows.toSorted((a, b) => a - b));
        for (const row of rows) expect(row).to.be.a('number').and.at.least(1);
        expect(await reports(input, sizes, cap)).to.deep.equal(whole);
      }),
      bounded,
    );
  });
});
