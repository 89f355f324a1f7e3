// Files no one should send, and what they get: records too long to read, a NUL in a cell, bytes
// that are not UTF-8 wherever the chunks are cut, a U+FFFD the file really holds; read in time
// linear in their size and memory bounded whatever their shape.
import { execFile } from 'node:child_process';
import { Writable } from 'node:stream';
import { promisify } from 'node:util';
import { expect } from 'chai';
import type { RowError } from '../shared/contract/fields.ts';
import { parseContracts } from '../shared/ingest/parseContracts.ts';
import { codes, HEADER, newDataset, postCsv } from './support/ingest.ts';
import { useService } from './support/service.ts';

const MiB = 1024 * 1024;

/** The errors parseContracts reports for `input` given as these chunks, as "row:field:code". */
async function read(chunks: Buffer[], maxRecordBytes?: number): Promise<string[]> {
  const errors: RowError[] = [];
  async function* source() {
    yield* chunks;
  }
  await parseContracts({
    source: source(),
    versionId: 'ver_test',
    sink: new Writable({ write: (_chunk, _encoding, done) => done() }),
    report: (error) => void errors.push(error),
    ...(maxRecordBytes !== undefined && { maxRecordBytes }),
  });
  return errors.map((e) => `${e.row}:${e.field}:${e.code}`);
}

/** `input` cut in two at every position, and in one-byte chunks. */
function cuts(input: Buffer): Buffer[][] {
  const all = [[input], [...input].map((b) => Buffer.from([b]))];
  for (let at = 1; at < input.length; at++) all.push([input.subarray(0, at), input.subarray(at)]);
  return all;
}

/** Every way of cutting `input` gives `expected`. */
async function expectEveryCut(input: Buffer | string, expected: string[], maxRecordBytes?: number): Promise<void> {
  const bytes = Buffer.from(input);
  for (const chunks of cuts(bytes)) {
    expect(await read(chunks, maxRecordBytes), `cut after ${chunks[0]!.length} bytes of ${JSON.stringify(bytes.toString('latin1'))}`).to.deep.equal(expected);
  }
}

describe('hostile files: records too long to read', () => {
  it('when a record is longer than the cap, then row_too_long in its place, and the rows after it keep their numbers, in any chunks', async () => {
    const csv = [
      'customer,amount',
      'Acme,1',
      '"a quoted value over the cap, with ""quotes"",\nline breaks\r\nand delimiters",2',
      '',
      'Beta,x',
      'a line without quotes that is over the cap,3',
      '"Gamma\nInc.",4',
      'Delta,-1',
    ].join('\n');
    await expectEveryCut(csv, ['3:*:row_too_long', '5:amount:not_a_number', '6:*:row_too_long', '8:amount:negative'], 20);
  });

  it('when a record has exactly 1 MiB (the default cap), then it is read; one byte more, then row_too_long', async () => {
    const row = (bytes: number) => `${'x'.repeat(bytes - 2)},1`;
    const csv = `customer,amount\n${row(MiB)}\n${row(MiB + 1)}\nok,2\n`;
    const chunks = [Buffer.from(csv.slice(0, 700_000)), Buffer.from(csv.slice(700_000, 1_500_000)), Buffer.from(csv.slice(1_500_000))];
    expect(await read(chunks)).to.deep.equal(['2:customer:too_long', '3:*:row_too_long']);
  });

  it('when the header is longer than the cap, then row_too_long for row 1 and nothing else', async () => {
    await expectEveryCut('customer,amount,a_very_long_unknown_column\nAcme,x,\n', ['1:*:row_too_long'], 30);
  });

  it('when the file ends inside a quoted value over the cap, then row_too_long; under it, malformed_row', async () => {
    await expectEveryCut('customer,amount\nAcme,1\n"never closed, and long,2\nok,3\n', ['3:*:row_too_long'], 20);
    await expectEveryCut('customer,amount\nAcme,1\n"never,2\n', ['3:*:malformed_row'], 20);
  });
});

describe('hostile files: characters and bytes', () => {
  it('when a cell holds NUL, then invalid_character for that field only; in an ignored column, nothing', async () => {
    const csv = 'customer,amount,product,notes\nA\0b,1,,\nOk,\0,Pro\0,\nFine,2,,a\0b\n\0,3,,\n';
    await expectEveryCut(csv, ['2:customer:invalid_character', '3:product:invalid_character', '3:amount:invalid_character', '5:customer:invalid_character']);
  });

  it('when the file holds U+FFFD itself (EF BF BD, valid UTF-8), then it is read like any character', async () => {
    await expectEveryCut('customer,amount\nOk,1\nA\uFFFDb,2\n\uFFFD,3\n', []);
  });

  it('when valid multi-byte characters are cut at any position, then nothing is reported', async () => {
    await expectEveryCut('customer,amount\né€😀,1\n\uFEFF𝄞,2\n', []);
  });

  const BAD = {
    'an overlong "/" (C0 AF)': [0xc0, 0xaf],
    'an overlong "/" (E0 80 AF)': [0xe0, 0x80, 0xaf],
    'a surrogate encoded in UTF-8 (ED A0 80)': [0xed, 0xa0, 0x80],
    'a code point past U+10FFFF (F4 90 80 80)': [0xf4, 0x90, 0x80, 0x80],
    'a Latin-1 "ü" (FC)': [0xfc],
    'a stray continuation byte (80)': [0x80],
    'a sequence cut short (E2 82)': [0xe2, 0x82],
  };
  for (const [what, bytes] of Object.entries(BAD)) {
    it(`when a row holds ${what}, cut at any position, then not_utf8 for that row only`, async () => {
      const csv = Buffer.concat([Buffer.from('customer,amount\nOk,1\nM'), Buffer.from(bytes), Buffer.from('ller,2\nAlso ok,3\n')]);
      await expectEveryCut(csv, ['3:*:not_utf8']);
    });
  }

  it('when the file ends inside a character, then not_utf8 for its last row', async () => {
    await expectEveryCut(Buffer.concat([Buffer.from('customer,amount\nOk,1\nx,2'), Buffer.from([0xf0, 0x9f, 0x98])]), ['3:*:not_utf8']);
    await expectEveryCut(Buffer.concat([Buffer.from('customer,amount\nOk,1\n'), Buffer.from([0xe2, 0x82])]), ['3:*:not_utf8']);
  });

  it('when the header has bad bytes, then not_utf8 for row 1 and nothing else', async () => {
    await expectEveryCut(Buffer.concat([Buffer.from('custo'), Buffer.from([0xff]), Buffer.from('mer,amount\nOk,x\n')]), ['1:*:not_utf8']);
  });

  it('when a file holds only blank lines, then empty_file, whatever the chunks; a blank first line before rows, missing_column', async () => {
    await expectEveryCut('\n \r\n\t\n', ['1:*:empty_file']);
    await expectEveryCut('\n\ncustomer,amount\nAcme,1\n', ['1:customer:missing_column']);
  });
});

/** A header, then a row 2 of `bytes` bytes: one quoted cell, or a line that never ends; in 1 MiB chunks. */
async function* oneHugeRow(shape: 'cell' | 'line', bytes: number): AsyncGenerator<Buffer> {
  yield Buffer.from(shape === 'cell' ? 'customer,amount\n"' : 'customer,amount\nx,');
  const block = Buffer.alloc(MiB, 'a');
  for (let left = bytes; left > 0; left -= MiB) yield left >= MiB ? block : block.subarray(0, left);
  if (shape === 'cell') yield Buffer.from('",1\nAcme,x\n');
}

describe('hostile files: time and memory', () => {
  it('when one cell or one line grows from 1 to 4 to 16 MB, then the reading time grows about linearly (not with its square)', async function () {
    this.timeout(60_000);
    for (const shape of ['cell', 'line'] as const) {
      const ms: number[] = [];
      for (const mb of [1, 4, 16]) {
        let best = Infinity;
        for (let run = 0; run < 2; run++) {
          const errors: string[] = [];
          const started = performance.now();
          await parseContracts({
            source: oneHugeRow(shape, mb * MiB),
            versionId: 'ver_test',
            sink: new Writable({ write: (_chunk, _encoding, done) => done() }),
            report: (e) => void errors.push(`${e.row}:${e.field}:${e.code}`),
          });
          best = Math.min(best, performance.now() - started);
          expect(errors).to.deep.equal(shape === 'cell' ? ['2:*:row_too_long', '3:amount:not_a_number'] : ['2:*:row_too_long']);
        }
        ms.push(best);
      }
      // Linear: ×4 per step; its square would be ×16. Generous, for a loaded machine; a floor of
      // 25 ms keeps timer noise on tiny figures out of it.
      const [one, four, sixteen] = ms.map((t) => Math.max(t, 25)) as [number, number, number];
      expect(four, `${shape}: ${ms.map((t) => t.toFixed(0)).join(' / ')} ms`).to.be.below(8 * one);
      expect(sixteen, `${shape}: ${ms.map((t) => t.toFixed(0)).join(' / ')} ms`).to.be.below(8 * four);
    }
  });

  it('when a 64 MB line never ends or a 64 MB cell never closes, then a reader with 24 MB of heap reads it and reports row_too_long', async function () {
    this.timeout(60_000);
    for (const shape of ['line', 'cell']) {
      const { stdout } = await promisify(execFile)(process.execPath, ['--max-old-space-size=24', 'test/bench/reader.ts', shape, '64']);
      const result = JSON.parse(stdout) as { errors: string[]; peakRssMiB: number };
      expect(result.errors[0], shape).to.equal('2:row_too_long');
      expect(result.peakRssMiB, shape).to.be.below(160);
    }
  });
});

describe('hostile files through the service', () => {
  let key: string;
  const svc = useService();
  before(async () => {
    ({ key } = await svc.tenant());
  });

  it('when an 8 MB file is one quoted cell, then 422 with row_too_long for that row and the other rows still validated', async function () {
    this.timeout(60_000);
    const csv = Buffer.concat([
      Buffer.from(`${HEADER}\nc1,Acme,Pro,2026-01-01,2026-12-31,100,EUR\nc2,"`),
      Buffer.alloc(8_000_000, 'a'),
      Buffer.from('",,,,,\nc3,Beta,,2026-01-01,2026-12-31,x,EUR\n'),
    ]);
    const reply = await postCsv(svc, key, await newDataset(svc, key), csv);
    expect(reply.status, reply.text.slice(0, 300)).to.equal(422);
    expect(codes(reply)).to.deep.equal(['3:*:row_too_long', '4:amount:not_a_number']);
  });

  it('when an 8 MB line never ends, then 422 with row_too_long for it', async function () {
    this.timeout(60_000);
    const csv = Buffer.concat([Buffer.from(`${HEADER}\nc1,Acme,Pro,2026-01-01,2026-12-31,100,EUR\nc2,`), Buffer.alloc(8_000_000, 'a')]);
    const reply = await postCsv(svc, key, await newDataset(svc, key), csv);
    expect(reply.status, reply.text.slice(0, 300)).to.equal(422);
    expect(codes(reply)).to.deep.equal(['3:*:row_too_long']);
  });

  it('when a cell holds NUL, then 422 with invalid_character at once (not a failing build and a 500)', async () => {
    const reply = await postCsv(svc, key, await newDataset(svc, key), `${HEADER}\nc1,Ac\0me,Pro,2026-01-01,2026-12-31,100,EUR\nc2,Beta,P\0,,,,\n`);
    expect(reply.status, reply.text).to.equal(422);
    expect(codes(reply)).to.deep.equal(['2:customer:invalid_character', '3:product:invalid_character']);
  });

  it('when a file holds U+FFFD itself, then it is built and the character is kept', async () => {
    const ds = await newDataset(svc, key);
    const reply = await postCsv(svc, key, ds, `${HEADER}\nc1,Acme \uFFFD,Pro \uFFFD,2026-01-01,2026-12-31,100,EUR\n`);
    expect(reply.status, reply.text).to.equal(201);
    const catalog = await svc.request(`/v1/datasets/${ds}/catalog`, { key });
    expect(catalog.json.products).to.deep.equal([{ product: 'Pro \uFFFD', contracts: 1, customers: 1 }]);
  });
});
