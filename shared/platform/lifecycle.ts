// Process lifecycle shared by every entry point: fail fast on bad config, then on SIGTERM or
// SIGINT stop the parts in reverse order of start (each within a deadline); a second signal exits at once.
import { ConfigError, type Config, loadConfig } from './config.ts';
import { collectLetGoBuffers } from './garbage.ts';
import { createLogger, type Logger } from './log.ts';

export type Stoppable = { name: string; stop(): Promise<void> };

// Each part honours SHUTDOWN_TIMEOUT_MS itself (pg-boss, for one, waits at least a second for
// running jobs, then hands them back); this margin only catches a part that hangs. The worker's
// stop may take SHUTDOWN_TIMEOUT_MS twice (its deliveries, then pg-boss) and then up to 5 s for a
// build told to stop to roll back (worker/buildThreads.ts): with 5 s here, a worker stopped
// mid-build sometimes said its stop timed out and exited 1 (scaleout's SIGTERM test in CI).
const DEADLINE_MARGIN_MS = 15_000;

/**
 * Waits for every one of `starts` to settle, then throws the first one's failure, if any: parts
 * started together, none left starting behind another's failure (their stop would not wait for it).
 */
export async function allStarted(starts: readonly Promise<unknown>[]): Promise<void> {
  const settled = await Promise.allSettled(starts);
  const failed = settled.find((s): s is PromiseRejectedResult => s.status === 'rejected');
  if (failed) throw failed.reason;
}

export async function stopAll(parts: Stoppable[], log: Logger, timeoutMs: number): Promise<boolean> {
  let clean = true;
  for (const part of [...parts].reverse()) {
    let timer: NodeJS.Timeout | undefined;
    const deadline = new Promise<'timeout'>((resolve) => (timer = setTimeout(() => resolve('timeout'), timeoutMs + DEADLINE_MARGIN_MS)));
    try {
      const outcome = await Promise.race([part.stop().then(() => 'stopped' as const), deadline]);
      if (outcome === 'timeout') {
        clean = false;
        log.warn({ part: part.name, timeoutMs }, 'stop timed out');
      }
    } catch (error) {
      clean = false;
      log.error({ err: error, part: part.name }, 'stop failed');
    } finally {
      clearTimeout(timer);
    }
  }
  return clean;
}

export async function runProcess(
  name: string,
  start: (config: Config, log: Logger, parts: Stoppable[]) => Promise<void>,
): Promise<void> {
  let config: Config;
  try {
    config = loadConfig();
  } catch (error) {
    if (error instanceof ConfigError) {
      process.stderr.write(`${name}: ${error.message}\n`);
      process.exit(1);
    }
    throw error;
  }
  const log = createLogger(config, name);
  collectLetGoBuffers(); // a process streams bytes: requests, uploads, exports, deliveries
  // Parts register themselves as they start, so a failure half-way still stops what did start.
  const parts: Stoppable[] = [];
  let stopping = false;
  const shutdown = async (signal: string) => {
    if (stopping) {
      log.warn({ signal }, 'second signal: exiting now');
      process.exit(1);
    }
    stopping = true;
    log.info({ signal }, 'stopping');
    const clean = await stopAll(parts, log, config.shutdownTimeoutMs);
    log.info({ clean }, 'stopped');
    process.exit(clean ? 0 : 1);
  };
  process.on('SIGTERM', () => void shutdown('SIGTERM'));
  process.on('SIGINT', () => void shutdown('SIGINT'));
  try {
    await start(config, log, parts);
  } catch (error) {
    log.fatal({ err: error }, 'start failed');
    await stopAll(parts, log, config.shutdownTimeoutMs);
    process.exit(1);
  }
}
