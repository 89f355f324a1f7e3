// Waiting for a build's outcome: the worker NOTIFYs when a version finishes (in the same
// transaction that finishes it); each API process LISTENs on one connection and wakes the
// requests waiting for that version. A slow poll covers a notification lost to a reconnect.
import pg from 'pg';
import type { Logger } from './log.ts';
import { VERSION_FINISHED_CHANNEL } from './versions.ts';

const FALLBACK_POLL_MS = 1_000;

export class VersionOutcomes {
  private client: pg.Client | undefined;
  private readonly waiters = new Map<string, Set<() => void>>();
  private readonly url: string;
  private readonly log: Logger;
  private stopped = false;

  constructor(url: string, log: Logger) {
    this.url = url;
    this.log = log;
  }

  async start(): Promise<void> {
    const client = new pg.Client({ connectionString: this.url, application_name: 'dataset-service-web-listen' });
    client.on('notification', (message) => {
      for (const wake of this.waiters.get(message.payload ?? '') ?? []) wake();
    });
    client.on('error', (error) => {
      this.log.warn({ err: error }, 'version listener lost; reconnecting');
      this.client = undefined;
      if (!this.stopped) setTimeout(() => void this.start().catch(() => {}), 1_000).unref();
    });
    await client.connect();
    await client.query(`LISTEN ${VERSION_FINISHED_CHANNEL}`);
    this.client = client;
  }

  async stop(): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    for (const set of this.waiters.values()) for (const wake of set) wake();
    await this.client?.end().catch(() => {});
  }

  /**
   * Resolves when `isFinished` says so, re-checked on each notification for the version and
   * every second, or when `ms` have passed.
   */
  async waitFor(versionId: string, ms: number, isFinished: () => Promise<boolean>): Promise<void> {
    const deadline = Date.now() + ms;
    while (!this.stopped && Date.now() < deadline) {
      if (await isFinished()) return;
      const remaining = deadline - Date.now();
      if (remaining <= 0) return;
      await new Promise<void>((resolve) => {
        const set = this.waiters.get(versionId) ?? new Set();
        this.waiters.set(versionId, set);
        const wake = () => {
          clearTimeout(timer);
          set.delete(wake);
          if (set.size === 0) this.waiters.delete(versionId);
          resolve();
        };
        const timer = setTimeout(wake, Math.min(remaining, FALLBACK_POLL_MS));
        set.add(wake);
      });
    }
  }
}
