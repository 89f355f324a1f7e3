// `node test/bench/reader.ts <what> [MB]`: the CSV reading path alone (bytes → records → row
// validation → binary COPY rows), through parseContracts into a sink that discards, so the
// reader's own cost and memory show without PostgreSQL. Sources come in 1 MiB chunks, as the
// blob store hands them out.
//   file <path>      a file on disk (e.g. one written by writeContractFile)
//   contracts <rows> a generated contract file of that many rows (written to the temp folder)
//   realistic <rows> a realistic one (test/support/realisticContracts.ts), every field quoted with --quoted
//   cell <MB>        a header, then one quoted cell of MB megabytes, then a valid row
//   line <MB>        a header, then a line that never ends (MB megabytes, no line break)
// With --tally the rows are also counted into the metrics and catalog, as a build does.
// Prints one JSON line: milliseconds, bytes, rows, error codes seen, peak RSS in MiB. Run it under
// `/usr/bin/time -v` for the kernel's own figure.
import { createReadStream } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { parseContracts } from '../../shared/ingest/parseContracts.ts';
import { CONTRACT_HEADER } from '../support/contracts.ts';
import { realisticBlocks, realisticHeader } from '../support/realisticContracts.ts';
import { GuardedTally, type TallyEnd } from '../../shared/ingest/tally.ts';
import { LocalTallyFeed } from '../../shared/ingest/tallyFeed.ts';
import { writeBlocks, writeContractFile } from './support.ts';

const MiB = 1024 * 1024;

async function* repeated(head: string, fill: number, bytes: number, tail: string): AsyncGenerator<Buffer> {
  yield Buffer.from(head);
  const block = Buffer.alloc(MiB, fill);
  for (let left = bytes; left > 0; left -= MiB) yield left >= MiB ? block : block.subarray(0, left);
  if (tail) yield Buffer.from(tail);
}

async function source(what: string, arg: string): Promise<AsyncIterable<Buffer>> {
  const size = Math.round(Number(arg) * MiB);
  switch (what) {
    case 'file':
      return createReadStream(arg, { highWaterMark: MiB });
    case 'contracts': {
      const path = join(tmpdir(), `reader-bench-${arg}.csv`);
      await readFile(path).then(
        () => undefined,
        () => writeContractFile(path, Number(arg)),
      );
      return createReadStream(path, { highWaterMark: MiB });
    }
    case 'realistic': {
      const shape = process.argv.includes('--quoted') ? { quoteAll: true, crlf: true } : {};
      const path = join(tmpdir(), `reader-bench-realistic${shape.quoteAll ? '-quoted' : ''}-${arg}.csv`);
      await readFile(path).then(
        () => undefined,
        () => writeBlocks(path, realisticHeader(shape), realisticBlocks(0, Number(arg), Number(arg), shape)),
      );
      return createReadStream(path, { highWaterMark: MiB });
    }
    case 'cell':
      return repeated(`${CONTRACT_HEADER}c1,"`, 0x61, size, `",,,,,\nc2,Acme,,2026-01-01,2026-12-31,5,EUR\n`);
    case 'line':
      return repeated(`${CONTRACT_HEADER}c1,`, 0x61, size, '');
    default:
      throw new Error(`unknown source ${what}: file, contracts, cell or line`);
  }
}

const [what = 'contracts', arg = '1000000'] = process.argv.slice(2).filter((a) => !a.startsWith('--'));
const tally = process.argv.includes('--tally') ? new LocalTallyFeed(new GuardedTally()) : undefined;
const input = await source(what, arg);
const codes = new Map<string, number>();
const sink = new Writable({ write: (_chunk, _encoding, done) => done() });
const started = performance.now();
const outcome = await parseContracts({
  source: input,
  versionId: 'ver_bench',
  sink,
  ...(tally && { tally }),
  report: (e) => void codes.set(`${e.row}:${e.code}`, (codes.get(`${e.row}:${e.code}`) ?? 0) + 1),
});
const tallied: TallyEnd | undefined = await tally?.end();
const ms = Math.round(performance.now() - started);
const peak = Number(/VmHWM:\s+(\d+) kB/.exec(await readFile('/proc/self/status', 'utf8'))![1]) / 1024;
const errors = [...codes].slice(0, 5).map(([k, n]) => (n > 1 ? `${k}×${n}` : k));
console.log(JSON.stringify({ what, arg, tally: tallied ? (tallied.complete ? 'complete' : `gave up on ${tallied.gaveUpOn}`) : 'off', ms, bytes: outcome.bytes, rows: outcome.rows, errors, errorKinds: codes.size, peakRssMiB: Math.round(peak) }));
