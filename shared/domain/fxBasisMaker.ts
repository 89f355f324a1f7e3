// A version's basis for conversion to a reporting currency (fxBasis.ts), read or made, and the
// figures converted with it, on a thread apart (fxBasisThread.ts): making one takes seconds of CPU
// at 1M rows and tens at 10M, and reading one at 10M and converting with it hundreds of
// milliseconds, which on the asking process's event loop would stall every other account's
// requests (a web process) or the jobs' heartbeats (a worker). Only the converted figures come
// back. A process has one such thread per database, started at its first basis and ended once
// idle, so that the memory a large basis needed goes with it. Bases are made one at a time, and
// one asked to be made again while it is made is made once.
import { extname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import type { RateTable, Reporting, ReportingCohorts } from '../figures/reporting.ts';
import type { Pool } from '../platform/db.ts';
import type { BasisAnswer, BasisWork, FromFxBasisThread, ToFxBasisThread } from './fxBasisThread.ts';

const ENTRY = new URL(`./fxBasisThread${extname(fileURLToPath(import.meta.url))}`, import.meta.url);
/** How long a thread with nothing to make is kept before it ends. */
const IDLE_MS = 30_000;

/** An error thrown while the thread read or made a basis, as the asking process sees it (with a PostgreSQL error's code). */
export class FxBasisError extends Error {
  readonly code: string | undefined;
  constructor(thrown: { name: string; message: string; code?: string }) {
    super(thrown.message);
    this.name = thrown.name;
    this.code = thrown.code;
  }
}

class BasisThread {
  private readonly databaseUrl: string;
  private worker: Worker | undefined;
  private idle: NodeJS.Timeout | undefined;
  private next = 0;
  private readonly waiting = new Map<number, { resolve: (answer: BasisAnswer) => void; reject: (error: Error) => void }>();
  private readonly making = new Map<string, Promise<BasisAnswer>>();

  constructor(databaseUrl: string) {
    this.databaseUrl = databaseUrl;
  }

  make(versionId: string): Promise<BasisAnswer> {
    let made = this.making.get(versionId);
    if (made === undefined) {
      made = this.ask(versionId, { kind: 'make' }).finally(() => this.making.delete(versionId));
      this.making.set(versionId, made);
    }
    return made;
  }

  ask(versionId: string, work: BasisWork): Promise<BasisAnswer> {
    clearTimeout(this.idle);
    const id = ++this.next;
    const worker = this.worker ?? this.spawn();
    return new Promise<BasisAnswer>((resolve, reject) => {
      this.waiting.set(id, { resolve, reject });
      worker.postMessage({ id, versionId, work } satisfies ToFxBasisThread);
    });
  }

  private spawn(): Worker {
    // A small young generation: a 10M-row first read peaked 23 MiB lower (173 against 196) for ~10% of its time.
    const worker = new Worker(ENTRY, { workerData: { databaseUrl: this.databaseUrl }, resourceLimits: { maxYoungGenerationSizeMb: 4 } });
    // An idle thread, or one whose answer nobody awaits any more, keeps no process up.
    worker.unref();
    worker.on('message', (message: FromFxBasisThread) => {
      const waiter = this.waiting.get(message.id);
      this.waiting.delete(message.id);
      if ('answer' in message) waiter?.resolve(message.answer);
      else waiter?.reject(new FxBasisError(message.error));
      if (this.waiting.size === 0) this.idle = setTimeout(() => void this.end(worker), IDLE_MS).unref();
    });
    worker.on('error', () => {}); // told by 'exit'
    worker.once('exit', (code) => {
      if (this.worker === worker) this.worker = undefined;
      for (const waiter of this.waiting.values()) waiter.reject(new Error(`the thread making bases for conversion ended (exit code ${code})`));
      this.waiting.clear();
    });
    this.worker = worker;
    return worker;
  }

  private async end(worker: Worker): Promise<void> {
    if (this.worker !== worker || this.waiting.size > 0) return;
    this.worker = undefined;
    await worker.terminate();
  }
}

const threads = new Map<string, BasisThread>();

/** The process's thread for the pool's database. */
function threadFor(pool: Pool): BasisThread {
  const url = pool.options.connectionString!;
  let thread = threads.get(url);
  if (thread === undefined) threads.set(url, (thread = new BasisThread(url)));
  return thread;
}

/** Makes (and keeps) the version's basis for conversion if it has none yet (monthlyFigures.ts readFxBasis). */
export async function fxBasisApart(pool: Pool, versionId: string): Promise<void> {
  await threadFor(pool).make(versionId);
}

/** The version's figures converted to `currency` at the rates of `table` (reporting.ts convert), its basis read or made first. */
export async function convertApart(pool: Pool, versionId: string, table: RateTable, currency: string): Promise<Reporting> {
  const answer = await threadFor(pool).ask(versionId, { kind: 'metrics', table, currency });
  if (answer.kind !== 'metrics') throw new Error(`the basis thread answered ${answer.kind} to metrics`);
  return answer.reporting;
}

/** The version's cohorts converted to `currency` at the rates of `table` (reporting.ts convertCohorts). */
export async function convertCohortsApart(pool: Pool, versionId: string, table: RateTable, currency: string): Promise<ReportingCohorts> {
  const answer = await threadFor(pool).ask(versionId, { kind: 'cohorts', table, currency });
  if (answer.kind !== 'cohorts') throw new Error(`the basis thread answered ${answer.kind} to cohorts`);
  return answer.cohorts;
}
