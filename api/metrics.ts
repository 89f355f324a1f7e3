// Prometheus metrics of the web process (../shared/spec/contract.md "Operations"): the process's
// own figures and its HTTP requests by route and status, with latency histograms; and, read from
// the database, what the whole fleet did (builds, exports, queues, deliveries), so that one
// scrape target covers it. The fleet's figures are aggregate scans of whole tables: they are read
// at most once per `fleetIntervalMs` however often (and however many at once) the metrics are
// scraped, and scrapes in between serve the figures last read (contract, "Sharing the service
// fairly": /metrics may be open). Served by the operation in routes/health/metrics.ts.
import type { RequestHandler, Response } from 'express';
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import { DURATION_BUCKETS, type Finished, finishedBuilds, finishedExports, queueFigures } from '../shared/domain/serviceFigures.ts';
import type { Pool } from '../shared/platform/db.ts';
import { deliveryCounts } from '../shared/domain/webhookDeliveries.ts';

/** The route label of an answer: the operation's path template, never the URL (ids would explode the series). */
export function setRouteLabel(res: Response, path: string): void {
  res.locals['route'] = path;
}

export type Metrics = { registry: Registry; measure: RequestHandler; /** The scrape: this process's metrics, then the fleet's. */ text(): Promise<string> };

export function createMetrics(pool: Pool, fleetIntervalMs: number): Metrics {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });

  const requests = new Histogram({
    name: 'http_request_duration_seconds',
    help: 'HTTP requests by method, route (the operation path, or "other") and status, with their durations.',
    labelNames: ['method', 'route', 'status'],
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 10, 60],
    registers: [registry],
  });

  // Fleet figures from the database, read at each scrape. Counters and gauges through prom-client;
  // the duration histograms are written out by histogramText (prom-client cannot set a histogram
  // from counts it did not observe).
  let durations = '';
  const fleetRead = new Gauge({ name: 'metrics_fleet_read_seconds', help: 'How long the last reading of the fleet figures from the database took.', registers: [registry] });
  const fleetReadAt = new Gauge({
    name: 'metrics_fleet_read_timestamp_seconds',
    help: 'When the fleet figures served were read from the database (Unix seconds); they are read at most once per interval.',
    registers: [registry],
  });
  const finishedFamily = (what: 'builds' | 'exports', read: typeof finishedBuilds, help: string) => {
    const count = new Counter({ name: `dataset_${what}_total`, help: `${help} by outcome.`, labelNames: ['outcome'], registers: [registry] });
    const rows = new Counter({ name: `dataset_${what}_rows_total`, help: `Rows of ${help.toLowerCase()} by outcome.`, labelNames: ['outcome'], registers: [registry] });
    return async () => {
      const figures = await read(pool);
      count.reset();
      rows.reset();
      for (const f of figures) {
        count.inc({ outcome: f.outcome }, f.count);
        rows.inc({ outcome: f.outcome }, f.rows);
      }
      return histogramText(`dataset_${what}_duration_seconds`, `Durations of ${help.toLowerCase()} by outcome.`, figures);
    };
  };
  const builds = finishedFamily('builds', finishedBuilds, 'Finished version builds');
  const exports = finishedFamily('exports', finishedExports, 'Finished exports');

  const waiting = new Gauge({ name: 'queue_jobs_waiting', help: 'Jobs waiting in each queue (created or to retry).', labelNames: ['queue'], registers: [registry] });
  const active = new Gauge({ name: 'queue_jobs_active', help: 'Jobs running in each queue.', labelNames: ['queue'], registers: [registry] });
  const oldest = new Gauge({ name: 'queue_oldest_waiting_seconds', help: 'How long the oldest waiting job of each queue has waited.', labelNames: ['queue'], registers: [registry] });
  const queues = async () => {
    waiting.reset();
    active.reset();
    oldest.reset();
    for (const q of await queueFigures(pool)) {
      waiting.set({ queue: q.queue }, q.waiting);
      active.set({ queue: q.queue }, q.active);
      oldest.set({ queue: q.queue }, q.oldestWaitingSeconds);
    }
  };
  const deliveries = new Gauge({
    name: 'webhook_deliveries',
    help: 'Webhook deliveries of the events kept (30 days) by outcome: pending, delivered, failed (every attempt), skipped (endpoint gone).',
    labelNames: ['outcome'],
    registers: [registry],
  });
  const webhooks = async () => {
    deliveries.reset();
    for (const d of await deliveryCounts(pool)) deliveries.set({ outcome: d.status }, d.count);
  };
  // This process's connection pool: its saturation shows as requests waiting for a connection.
  const poolGauge = (name: string, help: string, read: () => number) =>
    new Gauge({ name, help, registers: [registry], collect() { this.set(read()); } });
  poolGauge('db_pool_connections', 'Connections this process holds open to PostgreSQL.', () => pool.totalCount);
  poolGauge('db_pool_idle_connections', 'Of those, the idle ones.', () => pool.idleCount);
  poolGauge('db_pool_waiting_requests', 'Queries waiting for a connection (the pool is saturated while this is above 0).', () => pool.waitingCount);
  const measure: RequestHandler = (req, res, next) => {
    const end = requests.startTimer();
    res.once('close', () => end({ method: req.method, route: (res.locals['route'] as string | undefined) ?? 'other', status: String(res.statusCode) }));
    next();
  };
  // The fleet's figures: read when the last reading is older than the interval, by one scrape
  // (the others meanwhile wait for that reading rather than start their own).
  let readAt = -Infinity;
  let reading: Promise<void> | undefined;
  const readFleet = async () => {
    const started = performance.now();
    const [buildText, exportText] = await Promise.all([builds(), exports(), queues(), webhooks()]);
    durations = buildText + exportText;
    fleetRead.set((performance.now() - started) / 1000);
    fleetReadAt.set(Date.now() / 1000);
    readAt = started;
  };
  const freshFleet = () => {
    if (performance.now() - readAt < fleetIntervalMs) return Promise.resolve();
    reading ??= readFleet().finally(() => (reading = undefined));
    return reading;
  };
  /** The fleet's figures first (prom-client writes its metrics out concurrently), then everything. */
  const text = async () => {
    await freshFleet();
    return (await registry.metrics()) + durations;
  };
  return { registry, measure, text };
}

/** A histogram family in the Prometheus text format, from cumulative bucket counts per outcome. */
function histogramText(name: string, help: string, figures: Finished[]): string {
  const lines = [`# HELP ${name} ${help}`, `# TYPE ${name} histogram`];
  for (const f of figures) {
    const outcome = `outcome="${f.outcome}"`;
    DURATION_BUCKETS.forEach((le, i) => lines.push(`${name}_bucket{le="${le}",${outcome}} ${f.buckets[i]}`));
    lines.push(`${name}_bucket{le="+Inf",${outcome}} ${f.count}`, `${name}_sum{${outcome}} ${f.seconds}`, `${name}_count{${outcome}} ${f.count}`);
  }
  return `${lines.join('\n')}\n`;
}
