// A thread's scheduling priority, on Linux, where each thread is a task with a nice value of its
// own: a thread whose work can wait gives way to the threads a request waits on. Elsewhere
// nothing changes.
import { readlinkSync } from 'node:fs';
import { setPriority } from 'node:os';

/**
 * Lowers the calling thread's priority to the nice value `nice` (0 is the default, 19 the lowest;
 * lowering needs no privilege). False where it could not (not Linux, or refused).
 */
export function lowerThreadPriority(nice: number): boolean {
  if (process.platform !== 'linux') return false;
  try {
    // /proc/thread-self is "<pid>/task/<tid>": setpriority on a tid changes that thread alone.
    const tid = Number(readlinkSync('/proc/thread-self').split('/').pop());
    setPriority(tid, nice);
    return true;
  } catch {
    return false;
  }
}
