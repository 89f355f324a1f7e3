// The worker's build threads: one per build slot of a lane (WORKER_CONCURRENCY builds of any
// size, EXPRESS_BUILD_CONCURRENCY of small files), started with the worker
// and kept warm, so that a small upload does not pay for a thread's start (tens of ms) on every
// build. Each thread's heap is capped (BUILD_HEAP_MB): a build that runs out of memory ends its
// thread, which is replaced, while the worker process and the other builds go on.
import { extname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import { allStarted } from '../shared/platform/lifecycle.ts';
import type { Logger } from '../shared/platform/log.ts';
import type { BuildThreadData, FromBuildThread, ThrownByBuild, ToBuildThread } from './buildThread.ts';
import type { BuildSummary } from './jobs/versionBuild.ts';

// The entry sits beside this module, with its extension: worker/buildThread.ts where the sources
// run directly (tests), dist/worker/buildThread.js where they are compiled (production).
const ENTRY = new URL(`./buildThread${extname(fileURLToPath(import.meta.url))}`, import.meta.url);
/**
 * The young generation of a build thread where the process gives no --max-semi-space-size (tests):
 * three semi-spaces of 4 MiB. The Procfile's --max-semi-space-size=1 wins over it in production
 * (V8 applies a process's flag over a thread's resourceLimits): a build's garbage is short-lived,
 * and 1 MiB semi-spaces built 1M and 10M rows as fast as 4 MiB ones, each heap committing less
 * (docs/operating.md, "Node.js flags").
 */
const YOUNG_GENERATION_MB = 12;
/** How long a build told to stop (its job was handed back) may take to roll back before its thread is ended. */
const ABORT_GRACE_MS = 5_000;
/** How far a thread's heap limit may be from its old plus young generation before it is reported. */
const HEAP_LIMIT_TOLERANCE_MB = 16;
/** Between attempts to replace a thread that could not start. */
const RESPAWN_DELAY_MS = 1_000;

/** A build ran out of the memory a build thread may use: the same file would again. */
export class BuildOutOfMemory extends Error {
  readonly limitMb: number;
  constructor(limitMb: number, cause: unknown) {
    super(`the build ran out of memory (its thread may use ${limitMb} MiB)`, { cause });
    this.name = 'BuildOutOfMemory';
    this.limitMb = limitMb;
  }
}

/** The build's thread ended before the build did (other than by running out of memory). */
export class BuildThreadDied extends Error {
  constructor(exitCode: number, cause: unknown) {
    super(`the build thread ended (exit code ${exitCode}) before the build did`, { cause });
    this.name = 'BuildThreadDied';
  }
}

/** An error a build threw in its thread, as the job sees it (with a PostgreSQL error's code). */
export class BuildError extends Error {
  readonly code: string | undefined;
  readonly where: string | undefined;
  constructor(thrown: ThrownByBuild) {
    super(thrown.message);
    this.name = thrown.name;
    this.code = thrown.code;
    this.where = thrown.where;
    if (thrown.stack !== undefined) this.stack = thrown.stack;
  }
}

type Running = { settle(message: FromBuildThread): void; fail(error: Error): void };

/** Told how each build that returned ended, before the job that asked for it is (it must not throw). */
export type OnBuilt = (versionId: string, summary: BuildSummary) => void;
type Slot = { worker: Worker; running?: Running };

export class BuildThreads {
  private readonly data: BuildThreadData;
  private readonly size: number;
  private readonly log: Logger;
  /** Threads that started (ready or not), to end at close. */
  private readonly workers = new Set<Worker>();
  /** Threads ready for builds. */
  private readonly slots = new Set<Slot>();
  private readonly idle: Slot[] = [];
  private readonly waiting: { resolve(slot: Slot): void; reject(error: Error): void }[] = [];
  private closing = false;
  private limitChecked = false;
  private readonly onBuilt: OnBuilt | undefined;

  /** `size` threads (a lane's build slots), each counting its builds' rows on a tally thread of its own or not (data.tallyThread). */
  constructor(data: BuildThreadData, size: number, log: Logger, onBuilt?: OnBuilt) {
    this.data = data;
    this.size = size;
    this.log = log;
    this.onBuilt = onBuilt;
  }

  /** Why this lane's threads could not start for lack of heap (a lane that may go without: see start). */
  private cannotStart: BuildOutOfMemory | undefined;

  /**
   * Starts every thread; rejects if one cannot start (the worker then does not start either).
   * With `orElse`, a lane whose threads run out of heap before they are even ready (a heap set too
   * small for what a thread loads, such as the S3 client) does not stop the worker: it is said
   * once, and each build asked of it fails at once with BuildOutOfMemory, as one that outgrew its
   * thread would (the express lane's builds then go to the other lane).
   */
  async start(orElse?: 'without'): Promise<void> {
    try {
      await allStarted(Array.from({ length: this.size }, () => this.spawn()));
    } catch (error) {
      if (orElse !== 'without' || !(error instanceof BuildOutOfMemory) || this.slots.size !== 0) throw error;
      this.cannotStart = error;
      this.log.error({ err: error, heapMb: this.data.heapMb }, 'build threads of this lane cannot start in their heap: its builds go to the other lane');
    }
  }

  /**
   * Builds a version on an idle thread. When `signal` aborts (pg-boss took the job back), the
   * build is told to stop (its statement is cancelled and its transaction rolls back); a thread
   * that has not stopped within a few seconds is ended.
   */
  async run(versionId: string, signal: AbortSignal): Promise<BuildSummary> {
    if (this.cannotStart) throw this.cannotStart;
    const slot = await this.take();
    return new Promise<BuildSummary>((resolve, reject) => {
      let timer: NodeJS.Timeout | undefined;
      const onAbort = () => {
        slot.worker.postMessage({ type: 'abort' } satisfies ToBuildThread);
        timer = setTimeout(() => void slot.worker.terminate(), ABORT_GRACE_MS);
      };
      const done = () => {
        signal.removeEventListener('abort', onAbort);
        clearTimeout(timer);
      };
      slot.running = {
        settle: (message) => {
          done();
          if (message.type === 'built') {
            this.onBuilt?.(versionId, message.summary);
            resolve(message.summary);
          } else if (message.type === 'threw') reject(new BuildError(message.error));
        },
        fail: (error) => {
          done();
          reject(error);
        },
      };
      signal.addEventListener('abort', onAbort, { once: true });
      slot.worker.postMessage({ type: 'build', versionId } satisfies ToBuildThread);
      if (signal.aborted) onAbort();
    });
  }

  /** Stops the builds still running (they roll back), then ends every thread. */
  async close(): Promise<void> {
    this.closing = true;
    for (const waiter of this.waiting.splice(0)) waiter.reject(new Error('the build threads are closing'));
    const slots = [...this.slots];
    await Promise.all(
      slots.map(async (slot) => {
        if (slot.running) {
          const stopped = new Promise<void>((resolve) => {
            const { settle, fail } = slot.running!;
            slot.running = { settle: (m) => (settle(m), resolve()), fail: (e) => (fail(e), resolve()) };
          });
          slot.worker.postMessage({ type: 'abort' } satisfies ToBuildThread);
          await Promise.race([stopped, new Promise((r) => setTimeout(r, ABORT_GRACE_MS))]);
        }
      }),
    );
    await Promise.all([...this.workers].map((worker) => worker.terminate()));
  }

  private take(): Promise<Slot> {
    if (this.closing) return Promise.reject(new Error('the build threads are closing'));
    const slot = this.idle.pop();
    if (slot) return Promise.resolve(slot);
    return new Promise((resolve, reject) => this.waiting.push({ resolve, reject }));
  }

  private release(slot: Slot): void {
    if (!this.slots.has(slot)) return;
    const waiter = this.waiting.shift();
    if (waiter) waiter.resolve(slot);
    else this.idle.push(slot);
  }

  private spawn(): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      const limitMb = this.data.heapMb;
      const worker = new Worker(ENTRY, {
        workerData: this.data,
        resourceLimits: { maxOldGenerationSizeMb: limitMb, maxYoungGenerationSizeMb: YOUNG_GENERATION_MB },
      });
      this.workers.add(worker);
      const slot: Slot = { worker };
      let ready = false;
      let failure: (Error & { code?: string }) | undefined;
      worker.on('message', (message: FromBuildThread) => {
        if (message.type === 'ready') {
          if (this.closing) return void worker.terminate();
          this.checkHeapLimit(message.heapLimitMb);
          ready = true;
          this.slots.add(slot);
          this.release(slot);
          resolve();
          return;
        }
        const running = slot.running;
        slot.running = undefined;
        this.release(slot);
        running?.settle(message);
      });
      worker.on('error', (error) => (failure = error));
      worker.on('exit', (exitCode) => {
        this.workers.delete(worker);
        this.slots.delete(slot);
        const at = this.idle.indexOf(slot);
        if (at >= 0) this.idle.splice(at, 1);
        const died = failure?.code === 'ERR_WORKER_OUT_OF_MEMORY' ? new BuildOutOfMemory(limitMb, failure) : new BuildThreadDied(exitCode, failure);
        const running = slot.running;
        slot.running = undefined;
        running?.fail(died);
        if (!ready) return reject(died);
        if (this.closing) return;
        this.log.warn({ err: died }, 'build thread ended; starting another');
        this.replace();
      });
    });
  }

  /**
   * V8's --max-old-space-size (on the command line or in NODE_OPTIONS) applies to every thread of
   * the process and wins over a thread's own limit: say so once, since BUILD_HEAP_MB then means nothing.
   */
  private checkHeapLimit(heapLimitMb: number): void {
    if (this.limitChecked) return;
    this.limitChecked = true;
    const expectedMb = this.data.heapMb + YOUNG_GENERATION_MB;
    if (Math.abs(heapLimitMb - expectedMb) > HEAP_LIMIT_TOLERANCE_MB) {
      this.log.warn({ heapLimitMb, expectedMb }, 'build threads do not get the heap BUILD_HEAP_MB asks for: is --max-old-space-size set for the worker?');
    }
  }

  /** Starts a thread in place of one that ended, until one starts (or the threads close). */
  private replace(): void {
    this.spawn().catch((error: unknown) => {
      if (this.closing) return;
      this.log.error({ err: error }, 'build thread could not start; trying again');
      setTimeout(() => this.replace(), RESPAWN_DELAY_MS).unref();
    });
  }
}
