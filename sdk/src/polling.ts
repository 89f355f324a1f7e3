// Waiting for something the service builds (a version, an export): read it, quickly at first and
// then every 2 s, until it is done or the time is up.
import { WaitTimeoutError } from './errors.ts';
import { sleep } from './transport.ts';

const DEFAULT_TIMEOUT_MS = 3_600_000;

/** Reads until `done` says so; a WaitTimeoutError with the last read when `timeoutMs` (default one hour) passes first. */
export async function pollUntil<T extends { status: string }>(
  read: () => Promise<T>,
  done: (value: T) => boolean,
  what: string,
  timeoutMs = DEFAULT_TIMEOUT_MS,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (let poll = 0; ; poll++) {
    const value = await read();
    if (done(value)) return value;
    if (Date.now() >= deadline) throw new WaitTimeoutError(`${what} is still ${value.status}`, value);
    await sleep(Math.min(2000, 100 * 1.5 ** poll, Math.max(0, deadline - Date.now())));
  }
}
