// The one place that reads the environment. Parsed once at start with zod and handed to whatever
// needs it; a bad value stops the process with the variable's name.
import { z } from 'zod';

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
});

export type Config = {
  databaseUrl: string | undefined;
  port: number;
  baseUrl: string;
  errorsBase: string;
  logLevel: (typeof logLevels)[number];
  dataDir: string;
  databasePoolSize: number;
  shutdownTimeoutMs: number;
  usageFlushMs: number;
  idempotencyLeaseMs: number;
  maxUploadBytes: number;
  workerConcurrency: number;
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
  const baseUrl = trimSlash(e.BASE_URL ?? `http://localhost:${e.PORT}`);
  return {
    databaseUrl: e.DATABASE_URL,
    port: e.PORT,
    baseUrl,
    errorsBase: trimSlash(e.ERRORS_BASE ?? `${baseUrl}/problems`),
    logLevel: e.LOG_LEVEL,
    dataDir: e.DATA_DIR,
    databasePoolSize: e.DATABASE_POOL_SIZE,
    shutdownTimeoutMs: e.SHUTDOWN_TIMEOUT_MS,
    usageFlushMs: e.USAGE_FLUSH_MS,
    idempotencyLeaseMs: e.IDEMPOTENCY_LEASE_MS,
    maxUploadBytes: e.MAX_UPLOAD_BYTES,
    workerConcurrency: e.WORKER_CONCURRENCY,
  };
}
