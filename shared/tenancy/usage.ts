// Metering without a database write on each request: every process adds to counters in memory
// and flushes them in one statement every few seconds (and when it stops). The same batch keeps
// api_keys.last_used_at current.
import { recordKeysUsed } from './apiKeys.ts';
import type { Queryable } from '../platform/db.ts';
import type { Logger } from '../platform/log.ts';

export const metrics = ['requests', 'rows_ingested', 'export_rows'] as const;
export type Metric = (typeof metrics)[number];

const DAY_MS = 86_400_000;
/** The UTC day of `at` (YYYY-MM-DD), written once per day rather than on every request metered. */
const utcDay = (() => {
  let day = NaN;
  let text = '';
  return (at: Date) => {
    const d = Math.floor(at.getTime() / DAY_MS);
    if (d !== day) {
      day = d;
      text = at.toISOString().slice(0, 10);
    }
    return text;
  };
})();

export class UsageMeter {
  private counts = new Map<string, number>(); // "account|day|metric" -> quantity
  private keysUsed = new Map<string, Date>();
  private timer: NodeJS.Timeout | undefined;
  private flushing: Promise<void> = Promise.resolve();

  private readonly db: Queryable;
  private readonly log: Logger;
  private readonly flushMs: number;

  constructor(db: Queryable, log: Logger, flushMs: number) {
    this.db = db;
    this.log = log;
    this.flushMs = flushMs;
  }

  start(): void {
    this.timer = setInterval(() => void this.flush(), this.flushMs);
    this.timer.unref();
  }

  /** Counts live-mode usage; test mode is never billed and never metered. */
  add(accountId: string, mode: 'test' | 'live', metric: Metric, quantity = 1, at = new Date()): void {
    if (mode !== 'live' || quantity <= 0) return;
    const k = `${accountId}|${utcDay(at)}|${metric}`;
    this.counts.set(k, (this.counts.get(k) ?? 0) + quantity);
  }

  keyUsed(keyId: string, at = new Date()): void {
    this.keysUsed.set(keyId, at);
  }

  /** Writes what has been counted so far; on failure the counts are kept for the next flush. */
  flush(): Promise<void> {
    this.flushing = this.flushing.then(() => this.write());
    return this.flushing;
  }

  async stop(): Promise<void> {
    clearInterval(this.timer);
    await this.flush();
  }

  private async write(): Promise<void> {
    const counts = this.counts;
    const keys = this.keysUsed;
    if (counts.size === 0 && keys.size === 0) return;
    this.counts = new Map();
    this.keysUsed = new Map();
    try {
      if (counts.size > 0) {
        const parts = [...counts.keys()].map((k) => k.split('|'));
        await this.db.query(
          `INSERT INTO usage_counters AS u (account_id, day, metric, quantity)
           SELECT * FROM unnest($1::text[], $2::date[], $3::text[], $4::bigint[])
           ON CONFLICT (account_id, day, metric) DO UPDATE SET quantity = u.quantity + EXCLUDED.quantity`,
          [parts.map((p) => p[0]), parts.map((p) => p[1]), parts.map((p) => p[2]), [...counts.values()]],
        );
      }
      if (keys.size > 0) {
        await recordKeysUsed(this.db, keys);
      }
    } catch (error) {
      for (const [k, q] of counts) this.counts.set(k, (this.counts.get(k) ?? 0) + q);
      for (const [k, at] of keys) if (!this.keysUsed.has(k)) this.keysUsed.set(k, at);
      this.log.warn({ err: error }, 'usage flush failed; will retry');
    }
  }
}

export type UsageReport = {
  object: 'usage';
  accountId: string;
  from: string | null;
  to: string | null;
  requests: number;
  rowsIngested: number;
  exportRows: number;
  days: { day: string; requests: number; rowsIngested: number; exportRows: number }[];
};

/** Live-mode usage of an account between two days, both inclusive. */
export async function readUsage(
  db: Queryable,
  accountId: string,
  range: { from?: string | undefined; to?: string | undefined },
): Promise<UsageReport> {
  const { rows } = await db.query<{ day: string; metric: Metric; quantity: number }>(
    `SELECT to_char(day, 'YYYY-MM-DD') AS day, metric, quantity FROM usage_counters
     WHERE account_id = $1 AND ($2::date IS NULL OR day >= $2) AND ($3::date IS NULL OR day <= $3)
     ORDER BY day`,
    [accountId, range.from ?? null, range.to ?? null],
  );
  const days = new Map<string, UsageReport['days'][number]>();
  const field = { requests: 'requests', rows_ingested: 'rowsIngested', export_rows: 'exportRows' } as const;
  for (const r of rows) {
    const d = days.get(r.day) ?? { day: r.day, requests: 0, rowsIngested: 0, exportRows: 0 };
    d[field[r.metric]] += r.quantity;
    days.set(r.day, d);
  }
  const list = [...days.values()];
  const sum = (f: 'requests' | 'rowsIngested' | 'exportRows') => list.reduce((n, d) => n + d[f], 0);
  return {
    object: 'usage',
    accountId,
    from: range.from ?? null,
    to: range.to ?? null,
    requests: sum('requests'),
    rowsIngested: sum('rowsIngested'),
    exportRows: sum('exportRows'),
    days: list,
  };
}
