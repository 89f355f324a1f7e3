// The one place that reads the environment. Parsed once at start with zod and handed to whatever
// needs it; a bad value stops the process with the variable's name.
import { z } from 'zod';
import { isLoopbackHost } from './addresses.ts';

const logLevels = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;

const EnvSchema = z.object({
  DATABASE_URL: z.url({ protocol: /^postgres(ql)?$/ }).optional(),
  PORT: z.coerce.number().int().min(0).max(65535).default(3000),
  BASE_URL: z.url({ protocol: /^https?$/ }).optional(),
  ERRORS_BASE: z.url({ protocol: /^https?$/ }).optional(),
  LOG_LEVEL: z.enum(logLevels).default('info'),
  DATA_DIR: z.string().min(1).default('.data'),
  DATABASE_POOL_SIZE: z.coerce.number().int().min(1).max(200).default(10),
  SHUTDOWN_TIMEOUT_MS: z.coerce.number().int().min(0).default(10_000),
  USAGE_FLUSH_MS: z.coerce.number().int().min(10).default(5_000),
  IDEMPOTENCY_LEASE_MS: z.coerce.number().int().min(100).default(60_000),
  MAX_UPLOAD_BYTES: z.coerce.number().int().min(1).default(2 * 1024 ** 3),
  WORKER_CONCURRENCY: z.coerce.number().int().min(1).max(64).default(1),
  EXPRESS_BUILD_CONCURRENCY: z.coerce.number().int().min(1).max(16).default(1),
  EXPRESS_BUILD_HEAP_MB: z.coerce.number().int().min(24).max(16_384).default(48),
  BUILD_HEAP_MB: z.coerce.number().int().min(16).max(16_384).default(192),
  TALLY_HEAP_MB: z.coerce.number().int().min(16).max(16_384).default(192),
  CUSTOMERS_APART_ROWS: z.coerce.number().int().min(1).default(50_000),
  BOOK_SHARE_ROWS: z.coerce.number().int().min(1).default(500_000),
  BLOB_STORE: z.enum(['postgres', 's3']).default('postgres'),
  S3_BUCKET: z.string().min(3).max(63).optional(),
  S3_ENDPOINT: z.url({ protocol: /^https?$/ }).optional(),
  S3_REGION: z.string().min(1).default('us-east-1'),
  S3_ACCESS_KEY_ID: z.string().min(1).optional(),
  S3_SECRET_ACCESS_KEY: z.string().min(1).optional(),
  TRUST_PROXY: z.enum(['true', 'false', '1', '0']).default('false'),
  BLOB_HEARTBEAT_MS: z.coerce.number().int().min(10).default(5_000),
  BLOB_WRITER_TIMEOUT_MS: z.coerce.number().int().min(100).default(30_000),
  SWEEP_INTERVAL_MS: z.coerce.number().int().min(10).default(10_000),
  CLIENT_STALL_TIMEOUT_MS: z.coerce.number().int().min(100).max(3_600_000).default(60_000),
  STREAMED_BUILD_PATIENCE_MS: z.coerce.number().int().min(10).default(2_000),
  METRICS_TOKEN: z.string().min(16).optional(),
  METRICS_FLEET_INTERVAL_MS: z.coerce.number().int().min(0).max(3_600_000).default(15_000),
  WEBHOOK_SECRETS_KEY: z
    .string()
    .refine((v) => Buffer.from(v, 'base64').length === 32, 'must be the base64 of 32 bytes (openssl rand -base64 32)')
    .optional(),
  WEBHOOK_TIMEOUT_MS: z.coerce.number().int().min(100).max(60_000).default(10_000),
  WEBHOOK_RETRY_DELAYS: z
    .string()
    .regex(/^\d+(\.\d+)?(,\d+(\.\d+)?)*$/, 'seconds, comma-separated')
    .default('5,300,1800,7200,18000,36000,36000'),
  WEBHOOK_CONCURRENCY: z.coerce.number().int().min(1).max(500).default(50),
  WEBHOOK_ACCOUNT_CONCURRENCY: z.coerce.number().int().min(1).max(500).default(10),
  VERSION_RETENTION_DAYS: z.coerce.number().min(0).max(36_500).default(30),
  PURGE_BATCH_ROWS: z.coerce.number().int().min(100).max(1_000_000).default(20_000),
  QUEUE_SUPERVISE_INTERVAL_SECONDS: z.coerce.number().int().min(1).max(3600).default(10),
  // pg-boss refuses a heartbeat under 10 s.
  QUEUE_HEARTBEAT_SECONDS: z.coerce.number().int().min(10).max(3600).default(15),
});

/** The S3-compatible store's settings (BLOB_STORE=s3). Without keys, the AWS default chain applies. */
export type S3Settings = {
  kind: 's3';
  bucket: string;
  endpoint: string | undefined;
  region: string;
  accessKeyId: string | undefined;
  secretAccessKey: string | undefined;
};

export type Config = {
  databaseUrl: string | undefined;
  port: number;
  baseUrl: string;
  /**
   * A development instance: BASE_URL is a loopback address (as `npm start` runs). Test-mode
   * webhooks may go to any address; /metrics may stay open without a warning.
   */
  developmentInstance: boolean;
  errorsBase: string;
  logLevel: (typeof logLevels)[number];
  dataDir: string;
  databasePoolSize: number;
  shutdownTimeoutMs: number;
  usageFlushMs: number;
  idempotencyLeaseMs: number;
  maxUploadBytes: number;
  workerConcurrency: number;
  /**
   * Build slots per worker for small files only (at most 1 MiB, whole when sent: the express
   * lane), besides the WORKER_CONCURRENCY slots that take builds of any size, so that a small file
   * is built at once whatever large ones are queued or building.
   */
  expressBuildConcurrency: number;
  /**
   * The old-generation heap of each express build thread, in MiB: a file of at most 1 MiB needs
   * little, and a small cap keeps what the thread's heap holds on to small. A build that needs more
   * is sent to the other lane, whose threads have BUILD_HEAP_MB.
   */
  expressBuildHeapMb: number;
  /**
   * The old-generation heap of each build thread, in MiB: a build that needs more ends failed,
   * its worker process and the other builds go on. A build holds little that grows with its file
   * (the tally is on a thread of its own); the largest is the tally's figures, handed over at the end.
   */
  buildHeapMb: number;
  /**
   * The old-generation heap of each build thread's tally thread, in MiB: a tally that needs more
   * ends, and that build computes its figures in SQL. The default leaves room for the tally at its
   * caps (shared/ingest/tally.ts).
   */
  tallyHeapMb: number;
  /**
   * Rows of a file from which its version's customers get a table of their own, indexed once it is
   * full (sql/029), rather than rows of the shared table, each indexed as it is written.
   */
  customersApartRows: number;
  /**
   * Rows of a file from which its build's own thread helps its tally thread walk the book
   * (shared/ingest/bookShare.ts), when its customers have a table of their own: below, the walk
   * takes a few tenths of a second, and the helper's heap and partitions would cost more than it saves.
   */
  bookShareRows: number;
  blobStore: { kind: 'postgres' } | S3Settings;
  /** Behind a TLS-terminating proxy: honour X-Forwarded-Proto/-Host/-For. */
  trustProxy: boolean;
  /** How often a process refreshes the heartbeat of the files it is receiving. */
  blobHeartbeatMs: number;
  /** A file being received whose writer was not seen for this long was abandoned. */
  blobWriterTimeoutMs: number;
  /** How often each worker sweeps abandoned files (and the versions waiting for them). */
  sweepIntervalMs: number;
  /**
   * How long an answer that waits on its client (a download, the rejected rows, a 422 with every
   * row error) may go without the client taking anything before its connection is closed. Such an
   * answer holds no connection, lock or pooled slot meanwhile.
   */
  clientStallTimeoutMs: number;
  /** How long a build following a file still streaming in waits for new bytes before handing its slot back. */
  streamedBuildPatienceMs: number;
  /** When set, GET /metrics needs `Authorization: Bearer` this token; open otherwise (a warning at start outside development). */
  metricsToken: string | undefined;
  /** The fleet's figures on /metrics (aggregate scans) are read from the database at most once per this interval. */
  metricsFleetIntervalMs: number;
  /** Seals webhook signing secrets (AES-256-GCM); unset, an installation key kept in the database does. */
  webhookSecretsKey: Buffer | undefined;
  /** A webhook delivery that has not answered 2xx within this is failed (and retried). */
  webhookTimeoutMs: number;
  /** The delays before each retry of a failed delivery, in seconds (Standard Webhooks' schedule). */
  webhookRetryDelaysSeconds: number[];
  /** Deliveries each worker sends at once. */
  webhookConcurrency: number;
  /**
   * Deliveries of one account sent at once, across every worker: one account's slow or dead
   * endpoints hold at most this many slots (shared/domain/webhookDeliveries.ts).
   */
  webhookAccountConcurrency: number;
  /** Days a superseded version's rows are kept before they are purged. */
  versionRetentionDays: number;
  /** Rows deleted per statement by a purge. */
  purgeBatchRows: number;
  /**
   * How often each worker's queue supervisor looks for jobs whose worker died (their heartbeat
   * stopped) or that ran past their expiry, and fails them over to a retry: a dead worker's build
   * is retried this long at most after its heartbeat (QUEUE_HEARTBEAT_SECONDS) lapsed.
   */
  queueSuperviseIntervalSeconds: number;
  /**
   * How long a build, purge or backfill may go without its worker's heartbeat before its job
   * counts as abandoned (its worker died) and is failed over to a retry. It is a queue's setting,
   * taken by the process that first creates the queue: a database keeps the value it was made with.
   */
  queueHeartbeatSeconds: number;
};

export class ConfigError extends Error {}

const trimSlash = (url: string) => url.replace(/\/+$/, '');

export function loadConfig(env: Record<string, string | undefined> = process.env): Config {
  // Empty variables count as unset, as in most process managers.
  const present = Object.fromEntries(Object.entries(env).filter(([, v]) => v !== undefined && v !== ''));
  const parsed = EnvSchema.safeParse(present);
  if (!parsed.success) {
    const lines = parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`);
    throw new ConfigError(`invalid environment: ${lines.join('; ')}`);
  }
  const e = parsed.data;
  if (e.BLOB_STORE === 's3' && !e.S3_BUCKET) throw new ConfigError('invalid environment: S3_BUCKET: required when BLOB_STORE=s3');
  const baseUrl = trimSlash(e.BASE_URL ?? `http://localhost:${e.PORT}`);
  return {
    databaseUrl: e.DATABASE_URL,
    port: e.PORT,
    baseUrl,
    developmentInstance: isLoopbackHost(new URL(baseUrl).hostname),
    errorsBase: trimSlash(e.ERRORS_BASE ?? `${baseUrl}/problems`),
    logLevel: e.LOG_LEVEL,
    dataDir: e.DATA_DIR,
    databasePoolSize: e.DATABASE_POOL_SIZE,
    shutdownTimeoutMs: e.SHUTDOWN_TIMEOUT_MS,
    usageFlushMs: e.USAGE_FLUSH_MS,
    idempotencyLeaseMs: e.IDEMPOTENCY_LEASE_MS,
    maxUploadBytes: e.MAX_UPLOAD_BYTES,
    workerConcurrency: e.WORKER_CONCURRENCY,
    expressBuildConcurrency: e.EXPRESS_BUILD_CONCURRENCY,
    expressBuildHeapMb: e.EXPRESS_BUILD_HEAP_MB,
    buildHeapMb: e.BUILD_HEAP_MB,
    tallyHeapMb: e.TALLY_HEAP_MB,
    customersApartRows: e.CUSTOMERS_APART_ROWS,
    bookShareRows: e.BOOK_SHARE_ROWS,
    blobStore:
      e.BLOB_STORE === 's3'
        ? {
            kind: 's3',
            bucket: e.S3_BUCKET!,
            endpoint: e.S3_ENDPOINT,
            region: e.S3_REGION,
            accessKeyId: e.S3_ACCESS_KEY_ID,
            secretAccessKey: e.S3_SECRET_ACCESS_KEY,
          }
        : { kind: 'postgres' },
    trustProxy: e.TRUST_PROXY === 'true' || e.TRUST_PROXY === '1',
    blobHeartbeatMs: e.BLOB_HEARTBEAT_MS,
    blobWriterTimeoutMs: e.BLOB_WRITER_TIMEOUT_MS,
    sweepIntervalMs: e.SWEEP_INTERVAL_MS,
    clientStallTimeoutMs: e.CLIENT_STALL_TIMEOUT_MS,
    streamedBuildPatienceMs: e.STREAMED_BUILD_PATIENCE_MS,
    metricsToken: e.METRICS_TOKEN,
    metricsFleetIntervalMs: e.METRICS_FLEET_INTERVAL_MS,
    webhookSecretsKey: e.WEBHOOK_SECRETS_KEY === undefined ? undefined : Buffer.from(e.WEBHOOK_SECRETS_KEY, 'base64'),
    webhookTimeoutMs: e.WEBHOOK_TIMEOUT_MS,
    webhookRetryDelaysSeconds: e.WEBHOOK_RETRY_DELAYS.split(',').map(Number),
    webhookConcurrency: e.WEBHOOK_CONCURRENCY,
    webhookAccountConcurrency: e.WEBHOOK_ACCOUNT_CONCURRENCY,
    versionRetentionDays: e.VERSION_RETENTION_DAYS,
    purgeBatchRows: e.PURGE_BATCH_ROWS,
    queueSuperviseIntervalSeconds: e.QUEUE_SUPERVISE_INTERVAL_SECONDS,
    queueHeartbeatSeconds: e.QUEUE_HEARTBEAT_SECONDS,
  };
}
