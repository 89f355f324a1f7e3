// The tally's thread (node:worker_threads), started by a build thread (worker/tallyThreads.ts): it
// counts a build's rows into its metrics and catalog (shared/ingest/tally.ts) while the build
// thread reads, validates and COPYs the next ones. The rows come in batches whose buffers are
// transferred, and go back the same way to be filled again. One build at a time: each starts
// with `start`, and every message names its build, so that what is left of a stopped one is
// told apart. Its heap is capped like a build thread's; if it ends, the build computes the
// figures in SQL.
import { parentPort } from 'node:worker_threads';
import { GuardedTally, type TallyEnd, type TallyLimits, type TallyResult } from '../shared/ingest/tally.ts';
import { buffersOf, type TallyBatch } from '../shared/ingest/tallyBatch.ts';
import { lowerThreadPriority } from '../shared/platform/threadPriority.ts';

/** Build thread → tally thread. */
export type ToTallyThread =
  | { type: 'start'; build: number; limits?: TallyLimits }
  | { type: 'batch'; build: number; batch: TallyBatch }
  | { type: 'end'; build: number }
  | { type: 'result'; build: number; distinctContractIds: number; versionId: string }
  | { type: 'close'; build: number };

/** Tally thread → build thread. */
export type FromTallyThread =
  | { type: 'batch'; build: number; batch: TallyBatch }
  | { type: 'ended'; build: number; end: TallyEnd }
  | { type: 'result'; build: number; result: TallyResult | undefined };

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
    case 'result':
      return answer({ type: 'result', build, result: tally.result(message.distinctContractIds, message.versionId) });
    case 'close':
      tally.close();
      tally = undefined;
  }
});
