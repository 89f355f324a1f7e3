// Collections of a thread's heap made on purpose: a full one now (HeapRoom, to see what is live),
// and the young generation's as the buffers a thread lets go pile up outside its heap.
import { getHeapStatistics, setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

let collect: ((options?: { type: 'major' | 'minor' }) => void) | undefined;

/**
 * A collection of this thread's heap (a full one by default), now. The heap's used size counts garbage until V8
 * collects it, which it may put off until near the limit, so a used size alone would stop work
 * that fits (and a thread that allocates little on its heap lets other threads' buffers handed to
 * it wait long for theirs). V8 gives `gc` only to contexts made while --expose-gc is set: one is
 * made, its `gc` kept, and the flag set back (Jest's leak detector does the same).
 */
export function collectGarbage(type: 'major' | 'minor' = 'major'): void {
  if (!collect) {
    setFlagsFromString('--expose-gc');
    collect = runInNewContext('gc') as (options?: { type: 'major' | 'minor' }) => void;
    setFlagsFromString('--no-expose-gc');
  }
  collect({ type });
}

/** How often a thread looks at the buffers it holds outside its heap (collectLetGoBuffers). */
const BUFFERS_LOOK_MS = 100;
/** Growth of those buffers, since the last collection, past which the young generation is collected. */
const BUFFERS_GROWTH_BYTES = 16 * 2 ** 20;
/** The least time between two full collections it makes (each stops the thread for milliseconds). */
const FULL_COLLECTION_GAP_MS = 5_000;

/**
 * Lets go of the buffers this thread is done with as they pile up: a buffer (a stream's chunk,
 * another thread's message) lives outside the heap, but goes only when its object on the heap is
 * collected. V8 collects for them once they have grown by 64 MiB, and a thread that streams bytes
 * allocates little else on its heap meanwhile: each such thread held tens of MiB of written
 * chunks (a build's thread handed 47 MiB of customers' rows at once), and a worker runs several.
 * Every BUFFERS_LOOK_MS, when they grew by 16 MiB, the young generation is collected (a
 * millisecond or so: a streamed chunk dies young); when they are still twice that above what the
 * last full collection left (chunks in flight at a collection outlive it, and then die old), the
 * whole heap (at most every 5 s). Call once per thread; the timer keeps no thread alive. Answers a function that stops it.
 */
export function collectLetGoBuffers(options: { lookMs?: number; growthBytes?: number } = {}): () => void {
  const growth = options.growthBytes ?? BUFFERS_GROWTH_BYTES;
  const held = () => getHeapStatistics().external_memory;
  let base = held();
  let afterFull = base;
  let fullAt = -Infinity;
  const timer = setInterval(() => {
    const now = held();
    if (now < base) base = now; // collected meanwhile
    if (now < afterFull) afterFull = now;
    if (now - base < growth) return;
    collectGarbage('minor');
    base = held();
    if (base - afterFull < 2 * growth || performance.now() - fullAt < FULL_COLLECTION_GAP_MS) return;
    collectGarbage('major');
    fullAt = performance.now();
    base = afterFull = held();
  }, options.lookMs ?? BUFFERS_LOOK_MS);
  timer.unref();
  return () => clearInterval(timer);
}

