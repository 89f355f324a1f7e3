// The tally's thread (node:worker_threads), started by a build thread (worker/tallyThreads.ts): it
// counts a build's rows into its metrics and catalog (shared/ingest/tally.ts) while the build
// thread reads, validates and COPYs the next ones. The rows come in batches whose buffers are
// transferred, and go back the same way to be filled again. One build at a time: each starts
// with `start`, and every message names its build, so that what is left of a stopped one is
// told apart. Its heap is capped like a build thread's: the tally gives up before its live objects
// fill it (shared/platform/heapRoom.ts), and if the thread ends all the same, the build computes
// the figures in SQL.
import { type MessagePort, parentPort } from 'node:worker_threads';
import { BookShare } from '../shared/ingest/bookShare.ts';
import { GuardedTally, type TallyEnd, type TallyLimits, type TallyResult } from '../shared/ingest/tally.ts';
import { buffersOf, type TallyBatch } from '../shared/ingest/tallyBatch.ts';
import { figuresBuffers, type LinesSink } from '../shared/figures/customerChanges.ts';
import { LINES_STOPPED, LINES_WRITTEN } from '../shared/ingest/tallyFeed.ts';
import { lowerThreadPriority } from '../shared/platform/threadPriority.ts';

/** Build thread → tally thread. */
export type ToTallyThread =
  | { type: 'start'; build: number; limits?: TallyLimits }
  | { type: 'batch'; build: number; batch: TallyBatch }
  | { type: 'end'; build: number }
  | { type: 'result'; build: number; distinctContractIds: number; versionId: string; lines?: SharedArrayBuffer; share?: { port: MessagePort; state: SharedArrayBuffer } }
  | { type: 'close'; build: number };

/** Tally thread → build thread. */
export type FromTallyThread =
  | { type: 'batch'; build: number; batch: TallyBatch }
  | { type: 'ended'; build: number; end: TallyEnd }
  | { type: 'result'; build: number; result: TallyResult | undefined; stoppedBy?: string }
  | { type: 'lines'; build: number; chunk: ArrayBuffer; length: number; last: boolean };

/** Chunks (64 KiB each) sent and not yet written by the build: the book waits past these, so that PostgreSQL sets the pace. */
const LINES_AHEAD = 32;

/**
 * Sends each chunk of the customers' rows to the build as the book fills it, waiting (Atomics.wait:
 * this thread has nothing else to do meanwhile) while LINES_AHEAD are unwritten; throws if the
 * build stopped taking them (the tally then gives up, and SQL computes the figures). The last
 * says so: the build ends their COPY then, before the book's documents are made.
 */
function linesTo(flow: SharedArrayBuffer, build: number): LinesSink {
  const state = new Int32Array(flow);
  let sent = 0;
  return (chunk, last) => {
    for (;;) {
      if (Atomics.load(state, LINES_STOPPED) !== 0) throw new Error("the build stopped taking the customers' rows");
      const written = Atomics.load(state, LINES_WRITTEN);
      if (sent - written < LINES_AHEAD) break;
      Atomics.wait(state, LINES_WRITTEN, written, 1000);
    }
    sent++;
    // A chunk is a buffer of its own (64 KiB or more, never Buffer's pool) from its start: it goes whole, else a copy.
    const own = chunk.byteOffset === 0 ? (chunk.buffer as ArrayBuffer) : new Uint8Array(chunk).buffer;
    answer({ type: 'lines', build, chunk: own, length: chunk.length, last }, [own]);
  };
}

/**
 * The tally thread's nice value (0 is the default): its rows can wait, the build thread's cannot.
 * On 2 cores PostgreSQL, the tally and the build thread took equal turns, and the build thread,
 * the one a build waits for, ran 60-78% of the time; the build thread waits on the tally only when
 * three batches are behind. Realistic 1M rows, three interleaved pairs: 2.88, 2.86, 2.88 s ->
 * 2.68, 2.66, 2.81 s (5 gave 2.94, 2.79, 2.72).
 */
const TALLY_NICE = 10;

const port = parentPort!;
lowerThreadPriority(TALLY_NICE);
let build = -1;
let tally: GuardedTally | undefined;

const answer = (message: FromTallyThread, transfer: ArrayBuffer[] = []) => port.postMessage(message, transfer);

port.on('message', (message: ToTallyThread) => {
  if (message.type === 'start') {
    tally?.close();
    build = message.build;
    tally = new GuardedTally(message.limits);
    return;
  }
  if (message.build !== build || !tally) return; // a stopped build's
  switch (message.type) {
    case 'batch':
      tally.addBatch(message.batch);
      return answer({ type: 'batch', build, batch: message.batch }, buffersOf(message.batch));
    case 'end':
      return answer({ type: 'ended', build, end: tally.end() });
    case 'result': {
      const lines = message.lines;
      // A large build's book is walked with its build thread's help (bookShare.ts).
      const flow = lines && new Int32Array(lines);
      const share = flow && message.share && new BookShare(message.share.port, message.share.state, () => Atomics.load(flow, LINES_STOPPED) !== 0);
      const result = tally.result(message.distinctContractIds, message.versionId, lines && linesTo(lines, build), share);
      share?.close();
      const stoppedBy = tally.stoppedBy;
      return answer({ type: 'result', build, result, ...(stoppedBy !== undefined && { stoppedBy }) }, result ? figuresBuffers(result.figures) : []);
    }
    case 'close':
      tally.close();
      tally = undefined;
  }
});
