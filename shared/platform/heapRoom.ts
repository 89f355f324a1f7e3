// Room left in this thread's V8 heap, for work that can stop and hand over to another way (the
// tally, whose figures SQL computes instead). A thread that reaches its heap limit
// (resourceLimits) is ended by Node only for some shapes of allocation: for others V8 aborts the
// whole process (nodejs/node#47224), which for a worker's tally thread would stop every account's
// builds. So the work looks before it gets there, and gives up while it still can.
import { getHeapSpaceStatistics, getHeapStatistics } from 'node:v8';
import { resourceLimits } from 'node:worker_threads';
import { collectGarbage } from './garbage.ts';

/** The share of the old generation's limit past which live objects mean the work should stop. */
const LIVE_SHARE = 0.8;
/** After a collection, how much more of the limit must be used before the next one is forced (at most up to LAST_LOOK_SHARE). */
const COLLECT_AGAIN_SHARE = 0.1;
/** Past this share of the limit, every check collects: V8 would soon have to, and may fail to. */
const LAST_LOOK_SHARE = 0.9;

/**
 * The old generation's limit, which is what a thread runs out of: a thread's own (its
 * resourceLimits), else the whole heap's (the main thread, whose young generation it includes).
 */
function oldGenerationLimit(): number {
  const mb = resourceLimits.maxOldGenerationSizeMb;
  return mb !== undefined && mb > 0 ? mb * 2 ** 20 : getHeapStatistics().heap_size_limit;
}

/** What the old generation holds: the heap's used bytes less the young generation's. */
function oldGenerationUsed(): number {
  let used = 0;
  for (const space of getHeapSpaceStatistics()) if (!space.space_name.startsWith('new_')) used += space.space_used_size;
  return used;
}

/** Work stopped because its thread's heap was near its limit (HeapRoom.nearLimit). */
export class HeapNearLimit extends Error {
  constructor(what: string, room: HeapRoom) {
    super(`${what}: live objects near the thread's heap limit of ${room.limitMb} MiB`);
    this.name = 'HeapNearLimit';
  }
}

/** Watches one piece of work's room in the heap; `check()` is cheap (a few µs) while there is room. */
export class HeapRoom {
  private readonly limit: number;
  private readonly liveShare: number;
  /** Used bytes past which the next check collects the heap to see what is live. */
  private collectAt: number;
  /** How many full collections the checks forced. */
  collections = 0;

  constructor(liveShare = LIVE_SHARE) {
    this.limit = oldGenerationLimit();
    this.liveShare = liveShare;
    this.collectAt = liveShare * this.limit;
  }

  /** The old generation's limit, in MiB (for what a check that failed says). */
  get limitMb(): number {
    return Math.round(this.limit / 2 ** 20);
  }

  /**
   * Whether `bytes` more of live objects would stay below the share of the limit (collecting the
   * heap first when they would not by its used size): for what comes whole, such as a message.
   */
  hasRoomFor(bytes: number): boolean {
    const most = this.liveShare * this.limit;
    if (getHeapStatistics().used_heap_size + bytes < most) return true;
    collectGarbage();
    this.collections++;
    return oldGenerationUsed() + bytes < most;
  }

  /** Throws HeapNearLimit, naming `what` stopped, when nearLimit(ahead) says so. */
  check(what: string, ahead = 0): void {
    if (this.nearLimit(ahead)) throw new HeapNearLimit(what, this);
  }

  /**
   * Whether live objects take more than the share of the old generation's limit (0.8 by default):
   * false while its used size is below that; past it, the heap is collected first, and only what
   * survives counts. `ahead`: bytes the work will surely take in the heap later, counted as taken.
   */
  nearLimit(ahead = 0): boolean {
    // The whole heap's used size (a cheap look) bounds the old generation's from above.
    if (getHeapStatistics().used_heap_size + ahead < this.collectAt || oldGenerationUsed() + ahead < this.collectAt) return false;
    collectGarbage();
    this.collections++;
    const live = oldGenerationUsed() + ahead;
    if (live >= this.liveShare * this.limit) return true;
    this.collectAt = Math.min(Math.max(this.liveShare * this.limit, live + COLLECT_AGAIN_SHARE * this.limit), LAST_LOOK_SHARE * this.limit);
    return false;
  }
}
