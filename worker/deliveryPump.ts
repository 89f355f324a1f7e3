// The consumer of webhook deliveries: keeps up to `concurrency` of them in flight and takes the
// next as soon as one ends, instead of batches that wait for their slowest send (a batch with one
// endpoint that never answers held every other delivery for the whole timeout). Each fetch takes
// at most `perAccount` jobs of one account's group across the fleet (pg-boss groupConcurrency;
// webhookDeliveries.ts puts each job in its account's group and orders them round robin between
// endpoints), so one account's slow or dead endpoints leave the other slots to everyone else.
// Woken when the relay dispatches, when a delivery ends, and by a poll (retries come due, other
// workers' events).
import type { Job, PgBoss } from 'pg-boss';
import type { DeliveryJob } from '../shared/domain/webhookDeliveries.ts';
import type { Logger } from '../shared/platform/log.ts';
import { queues } from '../shared/platform/queue.ts';

const POLL_MS = 500;

export type DeliveryPumpOptions = { concurrency: number; perAccount: number };

export class DeliveryPump {
  private readonly boss: PgBoss;
  private readonly options: DeliveryPumpOptions;
  private readonly deliver: (job: Job<DeliveryJob>) => Promise<void>;
  private readonly log: Logger;
  private readonly running = new Set<Promise<void>>();
  private fetching = false;
  private again = false;
  private stopped = false;
  private timer: NodeJS.Timeout | undefined;

  /** `deliver` throws only for the service's own failures (its database away): pg-boss then retries the job. */
  constructor(boss: PgBoss, options: DeliveryPumpOptions, deliver: (job: Job<DeliveryJob>) => Promise<void>, log: Logger) {
    this.boss = boss;
    this.options = options;
    this.deliver = deliver;
    this.log = log;
  }

  start(): void {
    this.timer = setInterval(() => this.wake(), POLL_MS);
    this.timer.unref();
    this.wake();
  }

  /** Fills the free slots now, or once more after the fetch under way. */
  wake(): void {
    if (this.stopped) return;
    if (this.fetching) {
      this.again = true;
      return;
    }
    this.fetching = true;
    void this.fill().finally(() => {
      this.fetching = false;
      if (this.again) {
        this.again = false;
        this.wake();
      }
    });
  }

  private async fill(): Promise<void> {
    try {
      while (!this.stopped) {
        this.again = false;
        const free = this.options.concurrency - this.running.size;
        if (free <= 0) return;
        const jobs = await this.boss.fetch<DeliveryJob>(queues.deliverWebhook, { batchSize: free, groupConcurrency: this.options.perAccount });
        for (const job of jobs) this.run(job);
        // A batch may come back short of what was asked because it held more of one account than
        // that account may still start; the next fetch skips that account. Stop when nothing comes.
        if (jobs.length === 0 && !this.again) return;
      }
    } catch (error) {
      this.log.warn({ err: error }, 'fetching webhook deliveries failed; trying again shortly');
    }
  }

  private run(job: Job<DeliveryJob>): void {
    const attempt = { id: job.id, retryCount: job.retryCount };
    const settled: Promise<void> = this.deliver(job)
      .then(
        () => this.boss.complete(queues.deliverWebhook, attempt),
        (error: unknown) => this.boss.fail(queues.deliverWebhook, attempt, { message: error instanceof Error ? error.message : String(error) }),
      )
      .then(
        () => {},
        (error: unknown) => this.log.warn({ err: error, jobId: job.id }, 'settling a webhook delivery job failed; pg-boss retries it when it expires'),
      )
      .finally(() => {
        this.running.delete(settled);
        this.wake();
      });
    this.running.add(settled);
  }

  /** Takes nothing more; waits up to `timeoutMs` for the deliveries in flight (the others are retried when their jobs expire). */
  async stop(timeoutMs: number): Promise<void> {
    this.stopped = true;
    clearInterval(this.timer);
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<void>((resolve) => (timer = setTimeout(resolve, timeoutMs)));
    await Promise.race([Promise.allSettled([...this.running]), late]);
    clearTimeout(timer);
  }
}
