// A build thread's tally thread (worker/tallyThread.ts), started with the first build of a batch
// of rows or more from a file of TALLY_THREAD_BYTES or more, kept warm while such builds come, and
// ended once idle (IDLE_MS), and the feed that hands it a build's rows. The build thread
// fills a batch while the tally thread counts the one before; three batches go round, so a tally
// that counts slower than the rows are read holds the build back (parseContracts waits on flush)
// rather than letting batches pile up. A build of fewer rows is counted in the build thread.
import { extname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { MessageChannel, type MessagePort, type Transferable, Worker } from 'node:worker_threads';
import { BookHelper, SHARE_STATE_BYTES } from '../shared/ingest/bookShare.ts';
import { GuardedTally, limitsFor, type TallyEnd, type TallyLimits, type TallyResult } from '../shared/ingest/tally.ts';
import { buffersOf, emptyBatch, type TallyBatch, TallyBatchWriter, type TalliedRow } from '../shared/ingest/tallyBatch.ts';
import type { Writable } from 'node:stream';
import { LINES_STOPPED, LINES_WRITTEN, type TallyFeed } from '../shared/ingest/tallyFeed.ts';
import type { FromTallyThread, ToTallyThread } from './tallyThread.ts';

const ENTRY = new URL(`./tallyThread${extname(fileURLToPath(import.meta.url))}`, import.meta.url);
/** The tally allocates little but its own arrays: a small young generation (three semi-spaces of 2 MiB; the worker's --max-semi-space-size=1 wins where given). */
const YOUNG_GENERATION_MB = 6;
/**
 * Files from which a build's rows are counted on a thread of its own (16 MiB: 160,000 rows shaped
 * like an export); smaller ones are counted in the build thread. The thread saves a build the
 * tally's time (a tenth of a second at this size) and costs the worker a heap of its own, 15-25
 * MiB: under the soak's mixed load of files up to 12 MiB, the worker peaked at 242 MiB without it
 * against 260-267 with it; a file of 31 MB took 9% longer counted in its build thread.
 */
export const TALLY_THREAD_BYTES = 16 * 2 ** 20;
/** A tally thread with no build for this long ends (the next large build starts another, in tens of milliseconds). */
const IDLE_MS = 30_000;
/** Batches going round between the build thread and the tally thread. */
const BATCHES = 3;
/** A batch goes once it holds this many rows: a message per 64 KiB of the file cost the build thread 0.3 s of 5 in posting alone. */
const BATCH_ROWS = 8192;

export class TallyThread {
  private readonly heapMb: number;
  private readonly idleMs: number;
  private worker: Worker | undefined;
  private idle: NodeJS.Timeout | undefined;
  private build = 0;
  private feeding: ThreadFeed | undefined;

  /** `heapMb`: the thread's old generation (TALLY_HEAP_MB); `idleMs`: how long it stays up with no build. */
  constructor(heapMb: number, idleMs = IDLE_MS) {
    this.heapMb = heapMb;
    this.idleMs = idleMs;
  }

  /** A feed for a new build of a file of `fileBytes` (null: not known yet), or undefined below TALLY_THREAD_BYTES: the build thread counts it. */
  feedFor(limits: TallyLimits | undefined, fileBytes: number | null): TallyFeed | undefined {
    return (fileBytes ?? Infinity) >= TALLY_THREAD_BYTES ? this.feed(limits) : undefined;
  }

  /** A feed for a new build (the previous one is over, or given up), whatever its file's size. */
  feed(limits?: TallyLimits): TallyFeed {
    clearTimeout(this.idle);
    this.feeding?.close('the next build started');
    const build = ++this.build;
    const feed = new ThreadFeed(build, limits, {
      post: (message, transfer) => {
        const worker = this.worker ?? this.spawn();
        // While a build is fed, the thread keeps the process up (it waits on the thread's answers); idle, it does not.
        if (message.type === 'start') worker.ref();
        worker.postMessage(message, transfer ?? []);
      },
      done: () => {
        this.worker?.unref();
        this.endWhenIdle();
      },
    });
    this.feeding = feed;
    return feed;
  }

  /** Whether its thread is up (it starts with the first build of a batch of rows or more). */
  get running(): boolean {
    return this.worker !== undefined;
  }

  /** Ends the thread. */
  async close(): Promise<void> {
    clearTimeout(this.idle);
    const worker = this.worker;
    this.worker = undefined;
    this.feeding?.lose('the build thread is closing');
    await worker?.terminate();
  }

  /** Ends the thread if no build comes within idleMs: its heap goes back to the system. */
  private endWhenIdle(): void {
    clearTimeout(this.idle);
    const worker = this.worker;
    if (worker === undefined) return;
    this.idle = setTimeout(() => {
      if (this.worker !== worker) return;
      this.worker = undefined;
      void worker.terminate();
    }, this.idleMs).unref();
  }

  private spawn(): Worker {
    const worker = new Worker(ENTRY, { resourceLimits: { maxOldGenerationSizeMb: this.heapMb, maxYoungGenerationSizeMb: YOUNG_GENERATION_MB } });
    worker.unref();
    worker.on('message', (message: FromTallyThread) => {
      if (this.feeding?.build === message.build) this.feeding.receive(message);
    });
    worker.on('error', () => {}); // told by 'exit'
    worker.once('exit', () => {
      if (this.worker === worker) this.worker = undefined; // the next build starts another
      if (this.feeding?.onThread) this.feeding.lose('its thread ended (out of memory?)'); // one counted in its build thread goes on
    });
    this.worker = worker;
    return worker;
  }
}

type Thread = {
  post: (message: ToTallyThread, transfer?: Transferable[]) => void;
  /** The build no longer waits on the thread. */
  done: () => void;
};

/**
 * A build's rows, to the tally thread once they fill a batch (BATCH_ROWS); a build whose file
 * ends first (fewer rows) is counted here, by a tally sized to its rows (limitsFor):
 * the thread's round trips, and a tally of default limits made and let go, cost a small build
 * more than counting its rows.
 */
class ThreadFeed implements TallyFeed {
  readonly build: number;
  private readonly limits: TallyLimits | undefined;
  private readonly thread: Thread;
  private readonly writer = new TallyBatchWriter();
  private readonly free: TallyBatch[] = [];
  /** Batches made for this build (the writer's first, and more while the thread is behind, up to BATCHES). */
  private batches = 1;
  /** Whether the thread has this build (its first batch was sent). */
  private started = false;
  /** The tally of a build counted here. */
  private local: GuardedTally | undefined;
  /** Why the tally thread can no longer count this build's rows (then SQL computes the figures). */
  private lost: string | undefined;
  /** Why the tally stopped before its figures (its heap near its limit, or an error), as it said. */
  private stoppedBy: string | undefined;
  private waitingForBatch: (() => void) | undefined;
  private waitingForEnd: ((end: TallyEnd) => void) | undefined;
  private waitingForResult: ((result: TallyResult | undefined) => void) | undefined;
  /** While the thread streams the customers' rows: where they go, and their flow (tallyThread.ts, linesTo). */
  private lines: { out: Writable; flow: Int32Array } | undefined;
  /** While this thread helps walk the book (help()). */
  private helper: BookHelper | undefined;

  constructor(build: number, limits: TallyLimits | undefined, thread: Thread) {
    this.build = build;
    this.limits = limits;
    this.thread = thread;
  }

  /** Whether the thread has this build (its first batch was sent). */
  get onThread(): boolean {
    return this.started;
  }

  addContractId(text: Uint8Array, start: number, end: number): void {
    if (this.lost === undefined) this.writer.addContractId(text, start, end);
  }

  add(row: TalliedRow): void {
    if (this.lost === undefined) this.writer.add(row);
  }

  flush(): Promise<void> | undefined {
    if (this.lost !== undefined || this.writer.size < BATCH_ROWS) return undefined;
    this.send();
    const next = this.free.pop() ?? (this.batches < BATCHES ? (this.batches++, emptyBatch()) : undefined);
    if (next) {
      this.writer.take(next);
      return undefined;
    }
    // Every batch is with the tally thread: wait for one to come back.
    return new Promise((resolve) => {
      this.waitingForBatch = () => {
        this.writer.take(this.free.pop() ?? emptyBatch());
        resolve();
      };
    });
  }

  end(): Promise<TallyEnd> {
    if (this.lost === undefined && !this.started) return Promise.resolve(this.endHere());
    if (this.lost === undefined && this.writer.size > 0) this.send();
    if (this.lost !== undefined) return Promise.resolve(this.lostEnd());
    return new Promise((resolve) => {
      this.waitingForEnd = resolve;
      this.thread.post({ type: 'end', build: this.build });
    });
  }

  get streamsLines(): boolean {
    return this.started && this.lost === undefined;
  }

  result(distinctContractIds: number, versionId: string, lines?: Writable, share = false): Promise<TallyResult | undefined> {
    if (this.lost !== undefined) return Promise.resolve(undefined);
    if (this.local) return Promise.resolve(this.local.result(distinctContractIds, versionId));
    const flow = lines && new SharedArrayBuffer(8);
    let shared: { port: MessagePort; state: SharedArrayBuffer } | undefined;
    if (lines && flow) {
      const state = new Int32Array(flow);
      this.lines = { out: lines, flow: state };
      // The COPY failed: the thread stops writing rows (its tally gives up, and SQL computes the figures).
      lines.once('error', () => this.stopLines());
      if (share) shared = this.help(lines, versionId);
    }
    return new Promise((resolve) => {
      this.waitingForResult = (result) => {
        this.lines = undefined;
        this.helper?.stop('the tally answered');
        this.helper = undefined;
        resolve(result);
      };
      this.thread.post({ type: 'result', build: this.build, distinctContractIds, versionId, ...(flow && { lines: flow }), ...(shared && { share: shared }) }, shared && [shared.port]);
    });
  }

  /**
   * This thread's help with the book (bookShare.ts): it walks the partitions the tally thread gives
   * it, while the build waits on the figures, and writes their customers' rows into `lines` too.
   */
  private help(lines: Writable, versionId: string): { port: MessagePort; state: SharedArrayBuffer } {
    const { port1, port2 } = new MessageChannel();
    const state = new SharedArrayBuffer(SHARE_STATE_BYTES);
    this.helper = new BookHelper(port2, state, versionId, lines, () => this.stopLines());
    return { port: port1, state };
  }

  /** Tells the thread to stop sending the customers' rows (it is waiting on them, or will look), and the helper to stop. */
  private stopLines(): void {
    this.helper?.stop("the build stopped taking the customers' rows");
    const lines = this.lines;
    if (!lines) return;
    Atomics.store(lines.flow, LINES_STOPPED, 1);
    Atomics.notify(lines.flow, LINES_WRITTEN);
  }

  /** Lets go of the build's tally, here or on the thread: at its end, or when the next build starts before it ended. */
  close(why = 'closed'): void {
    if (this.lost === undefined && this.started) this.thread.post({ type: 'close', build: this.build });
    this.local?.close();
    this.local = undefined;
    this.lose(why);
  }

  receive(message: FromTallyThread): void {
    if (message.type === 'batch') {
      this.free.push(message.batch);
      const waiting = this.waitingForBatch;
      this.waitingForBatch = undefined;
      waiting?.();
    } else if (message.type === 'lines') {
      const lines = this.lines;
      if (!lines) return;
      lines.out.write(Buffer.from(message.chunk, 0, message.length), (error) => {
        if (error) return this.stopLines();
        Atomics.add(lines.flow, LINES_WRITTEN, 1);
        Atomics.notify(lines.flow, LINES_WRITTEN);
      });
      if (message.last) lines.out.end(); // the COPY ends while the thread makes its documents
    } else if (message.type === 'ended') {
      const waiting = this.waitingForEnd;
      this.waitingForEnd = undefined;
      waiting?.(message.end);
    } else {
      this.stoppedBy = message.stoppedBy;
      const waiting = this.waitingForResult;
      this.waitingForResult = undefined;
      waiting?.(message.result);
    }
  }

  /** The tally thread will not answer for this build: whoever waits goes on, and SQL computes the figures. */
  lose(why: string): void {
    if (this.lost !== undefined) return;
    this.lost = why;
    this.stopLines();
    this.thread.done();
    const batch = this.waitingForBatch;
    const end = this.waitingForEnd;
    const result = this.waitingForResult;
    this.waitingForBatch = this.waitingForEnd = this.waitingForResult = undefined;
    batch?.();
    end?.(this.lostEnd());
    result?.(undefined);
  }

  whyLost(): string | undefined {
    if (this.local) return this.local.stoppedBy;
    const why = this.stoppedBy ?? this.lost;
    return why === undefined ? undefined : `the tally thread: ${why}`;
  }

  private lostEnd(): TallyEnd {
    return { complete: false, gaveUpOn: `the tally thread: ${this.lost}`, presentContractIds: 0, contractIdsDistinct: false };
  }

  /** Hands the batch filled so far to the tally thread (its buffers go with it); the first starts the build there. */
  private send(): void {
    if (!this.started) {
      this.started = true;
      this.thread.post({ type: 'start', build: this.build, ...(this.limits && { limits: this.limits }) });
    }
    const batch = this.writer.batch;
    this.thread.post({ type: 'batch', build: this.build, batch }, buffersOf(batch));
  }

  /** Counts the build's rows, all in the batch being filled, here. */
  private endHere(): TallyEnd {
    const batch = this.writer.batch;
    const tally = (this.local = new GuardedTally(limitsFor(batch.idCount, batch.rowCount, batch.byteCount, this.limits)));
    tally.addBatch(batch);
    return tally.end();
  }
}
