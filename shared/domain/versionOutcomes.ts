// Waiting for a build's outcome: the worker NOTIFYs when a version finishes (in the same
// transaction that finishes it); each API process LISTENs on one connection and wakes the
// requests waiting for that version. A lost connection is reconnected with backoff for as long as
// it takes; meanwhile, and for a notification lost to a reconnect, a slow poll covers.
import pg from 'pg';
import type { Logger } from '../platform/log.ts';
import { VERSION_FINISHED_CHANNEL } from './versions.ts';

const FALLBACK_POLL_MS = 1_000;
const RECONNECT_FIRST_MS = 250;
const RECONNECT_MAX_MS = 10_000;

export class VersionOutcomes {
  private client: pg.Client | undefined;
  private readonly waiters = new Map<string, Set<() => void>>();
  private readonly url: string;
  private readonly log: Logger;
  private stopped = false;
  private retry: NodeJS.Timeout | undefined;
  private attempt = 0;
  private connecting = false;

  constructor(url: string, log: Logger) {
    this.url = url;
    this.log = log;
  }

  /** Connects and listens; the first attempt's failure is the caller's (the process does not start). */
  async start(): Promise<void> {
    await this.listen();
  }

  private async listen(): Promise<void> {
    const client = new pg.Client({ connectionString: this.url, application_name: 'dataset-service-web-listen', connectionTimeoutMillis: 5_000 });
    client.on('notification', (message) => {
      for (const wake of this.waiters.get(message.payload ?? '') ?? []) wake();
    });
    client.on('error', (error) => {
      if (this.client !== client) return; // a connection given up already
      this.log.warn({ err: error }, 'version listener lost; reconnecting');
      this.client = undefined;
      client.end().catch(() => {});
      this.reconnect(0);
    });
    try {
      await client.connect();
      await client.query(`LISTEN ${VERSION_FINISHED_CHANNEL}`);
    } catch (error) {
      client.end().catch(() => {});
      throw error;
    }
    if (this.stopped) {
      await client.end().catch(() => {});
      return;
    }
    this.client = client;
    // Builds that finished while nobody listened: their waiters look again now rather than at
    // their next fallback poll.
    for (const set of this.waiters.values()) for (const wake of set) wake();
  }

  /**
   * Tries again with growing delays (with jitter, so that many web processes do not knock at once)
   * for as long as it takes: meanwhile waiters fall back to polling every second. A request that
   * starts waiting while the listener is down tries at once (see waitFor).
   */
  private reconnect(attempt: number): void {
    if (this.stopped) return;
    this.attempt = attempt;
    const delay = Math.min(RECONNECT_MAX_MS, RECONNECT_FIRST_MS * 2 ** attempt) * (0.5 + Math.random() / 2);
    clearTimeout(this.retry);
    this.retry = setTimeout(() => this.reconnectNow(), delay);
    this.retry.unref();
  }

  private reconnectNow(): void {
    if (this.stopped || this.connecting || this.client) return;
    clearTimeout(this.retry);
    this.retry = undefined;
    this.connecting = true;
    const attempt = this.attempt;
    this.listen()
      .then(
        () => this.log.info({ attempts: attempt + 1 }, 'version listener reconnected'),
        (error: unknown) => {
          if (attempt === 0 || attempt % 10 === 0) this.log.warn({ err: error, attempt: attempt + 1 }, 'version listener still down; retrying');
          this.reconnect(attempt + 1);
        },
      )
      .finally(() => (this.connecting = false));
  }

  async stop(): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    clearTimeout(this.retry);
    for (const set of this.waiters.values()) for (const wake of set) wake();
    await this.client?.end().catch(() => {});
  }

  /**
   * Resolves when `isFinished` says so, re-checked on each notification for the version and
   * every second, or when `ms` have passed.
   */
  async waitFor(versionId: string, ms: number, isFinished: () => Promise<boolean>): Promise<void> {
    const deadline = Date.now() + ms;
    if (!this.client) this.reconnectNow();
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
