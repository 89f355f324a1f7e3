// The relay of the events outbox: each worker LISTENs for events recorded (a NOTIFY at their
// commit) and fans them out to webhook endpoints (dispatchEvents), one batch after another until
// none waits; every second it also looks, for a notification lost while its connection was down.
// Several workers relay at once safely: each takes its events with SKIP LOCKED. After each batch
// it wakes this worker's delivery consumer (deliveryPump.ts).
import pg from 'pg';
import type { PgBoss } from 'pg-boss';
import { EVENTS_RECORDED_CHANNEL } from '../shared/domain/events.ts';
import { dispatchEvents } from '../shared/domain/webhookDeliveries.ts';
import type { Pool } from '../shared/platform/db.ts';
import type { Logger } from '../shared/platform/log.ts';

const BATCH = 500;
const FALLBACK_MS = 1_000;

export class EventRelay {
  private readonly pool: Pool;
  private readonly boss: PgBoss;
  private readonly url: string;
  private readonly log: Logger;
  private listener: pg.Client | undefined;
  private connecting = false;
  private running: Promise<void> | undefined;
  private again = false;
  private timer: NodeJS.Timeout | undefined;
  private stopped = false;
  private readonly dispatched: () => void;

  constructor(pool: Pool, boss: PgBoss, databaseUrl: string, log: Logger, dispatched: () => void = () => {}) {
    this.dispatched = dispatched;
    this.pool = pool;
    this.boss = boss;
    this.url = databaseUrl;
    this.log = log;
  }

  async start(): Promise<void> {
    await this.listen().catch((error: unknown) => this.log.warn({ err: error }, 'event relay could not listen; it polls meanwhile'));
    this.timer = setInterval(() => {
      if (!this.listener) void this.listen().catch(() => {});
      this.wake();
    }, FALLBACK_MS);
    this.timer.unref();
    this.wake();
  }

  private async listen(): Promise<void> {
    if (this.connecting || this.listener || this.stopped) return;
    this.connecting = true;
    const client = new pg.Client({ connectionString: this.url, application_name: 'dataset-service-worker-events', connectionTimeoutMillis: 5_000 });
    client.on('notification', () => this.wake());
    client.on('error', (error) => {
      if (this.listener !== client) return;
      this.log.warn({ err: error }, 'event relay listener lost; polling until it is back');
      this.listener = undefined;
      client.end().catch(() => {});
    });
    try {
      await client.connect();
      await client.query(`LISTEN ${EVENTS_RECORDED_CHANNEL}`);
      if (this.stopped) await client.end();
      else this.listener = client;
    } catch (error) {
      client.end().catch(() => {});
      throw error;
    } finally {
      this.connecting = false;
    }
  }

  /** Runs the relay now, or once more after the run under way (events may have come meanwhile). */
  wake(): void {
    if (this.stopped) return;
    if (this.running) {
      this.again = true;
      return;
    }
    this.running = this.drain().finally(() => {
      this.running = undefined;
      if (this.again) {
        this.again = false;
        this.wake();
      }
    });
  }

  private async drain(): Promise<void> {
    try {
      for (;;) {
        const taken = this.stopped ? 0 : await dispatchEvents(this.pool, this.boss, BATCH);
        if (taken > 0) this.dispatched();
        if (taken < BATCH) break;
      }
    } catch (error) {
      this.log.warn({ err: error }, 'event relay failed; it tries again within a second');
    }
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearInterval(this.timer);
    await this.running;
    await this.listener?.end().catch(() => {});
  }
}
