// A build thread (node:worker_threads), started by worker/buildThreads.ts: it runs one version
// build at a time on its own V8 heap, whose size is capped (BUILD_HEAP_MB), so that a build that
// runs out of memory ends this thread, not the worker process and the other builds in it. It has
// its own small pool and blob store. It logs nothing: what a build did goes back to the job in the
// main thread, which logs and meters it.
import { getHeapStatistics } from 'node:v8';
import { parentPort, workerData } from 'node:worker_threads';
import { createBlobStore } from '../shared/blobs/createBlobStore.ts';
import type { Config } from '../shared/platform/config.ts';
import { createPool } from '../shared/platform/db.ts';
import type { TallyLimits } from '../shared/ingest/tally.ts';
import { type BuildSummary, buildVersionNow } from './jobs/versionBuild.ts';
import { TallyThread } from './tallyThreads.ts';
import { lowerThreadPriority } from '../shared/platform/threadPriority.ts';
import { collectLetGoBuffers } from '../shared/platform/garbage.ts';

/**
 * What the main thread hands the thread when it starts it. `heapMb`: its old generation's cap
 * (BUILD_HEAP_MB, or EXPRESS_BUILD_HEAP_MB). `nice`: its scheduling priority on Linux (the
 * threads of large builds give way to the express lane's, on which a request waits: a large
 * build is slowed only while a small one runs beside it). `tallyThread`: whether builds count
 * their rows on a tally thread of their own (large files), or in this thread (the express lane's
 * small files, which do not need a second thread's memory).
 */
export type BuildThreadData = { config: Config; databaseUrl: string; tallyThread: boolean; heapMb: number; nice: number };

/** Main thread → build thread. */
export type ToBuildThread = { type: 'build'; versionId: string } | { type: 'abort' };

/** What the main thread needs of an error thrown by a build (the rest stays in the thread). */
export type ThrownByBuild = { name: string; message: string; stack?: string; code?: string; where?: string };

/** Build thread → main thread. */
export type FromBuildThread =
  | { type: 'ready'; heapLimitMb: number }
  | { type: 'built'; summary: BuildSummary }
  | { type: 'threw'; error: ThrownByBuild };

const port = parentPort!;
const { config, databaseUrl, tallyThread: countApart, nice } = workerData as BuildThreadData;
if (nice > 0) lowerThreadPriority(nice);
// A build streams its file's chunks, its rows' COPY and, from its tally thread, its customers' rows.
collectLetGoBuffers();
// The build's own connection, the statement cancel, progress and the row errors' COPY, and the
// blob store's reads: a few connections, whatever DATABASE_POOL_SIZE the process has.
const pool = createPool(databaseUrl, 4, 'dataset-service-worker-build');
const blobs = await createBlobStore(config, pool);
// A large file's rows are counted into its metrics and catalog there, while this thread reads on.
const tallyThread = countApart ? new TallyThread(config.tallyHeapMb) : undefined;
const tallyFeed = tallyThread && ((limits: TallyLimits | undefined, fileBytes: number | null) => tallyThread.feedFor(limits, fileBytes));

let running: AbortController | undefined;

function thrown(error: unknown): ThrownByBuild {
  if (!(error instanceof Error)) return { name: 'Error', message: String(error) };
  const { code, where } = error as { code?: unknown; where?: unknown };
  return {
    name: error.name,
    message: error.message,
    ...(error.stack !== undefined && { stack: error.stack }),
    ...(typeof code === 'string' && { code }),
    ...(typeof where === 'string' && { where }),
  };
}

port.on('message', (message: ToBuildThread) => {
  if (message.type === 'abort') {
    running?.abort(new Error('the build was stopped: its job was handed back'));
    return;
  }
  const controller = new AbortController();
  running = controller;
  buildVersionNow(pool, blobs, config, message.versionId, controller.signal, { customersApartRows: config.customersApartRows, bookShareRows: config.bookShareRows, ...(tallyFeed && { tallyFeed }) }).then(
    (summary) => port.postMessage({ type: 'built', summary } satisfies FromBuildThread),
    (error: unknown) => port.postMessage({ type: 'threw', error: thrown(error) } satisfies FromBuildThread),
  ).finally(() => {
    if (running === controller) running = undefined;
  });
});

port.postMessage({ type: 'ready', heapLimitMb: Math.round(getHeapStatistics().heap_size_limit / 2 ** 20) } satisfies FromBuildThread);
