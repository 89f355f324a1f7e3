import { pino, type Logger } from 'pino';
import type { Config } from './config.ts';

export type { Logger };

// Credentials never reach a log: the request serializer in api/ logs the path and the credential
// label only, and these paths are redacted wherever else a header object might be logged.
const redact = [
  'req.headers.authorization',
  'req.headers.cookie',
  'headers.authorization',
  'authorization',
  'password',
  'key',
];

/**
 * Lines on stdout are written together once this many bytes have gathered, or at the latest
 * LOG_FLUSH_MS after they were logged: a write to stdout per line (one per request) cost the web
 * process about 8% of its CPU under load (`npm run bench -- api`, measured with --cpu-prof).
 */
const LOG_BATCH_BYTES = 4096;
const LOG_FLUSH_MS = 100;

/**
 * A JSON logger on stdout, on stderr (fd 2) for commands whose stdout is their answer, or on a
 * stream of the caller's (tests read what was logged).
 */
export function createLogger(config: Pick<Config, 'logLevel'>, name: string, to: 1 | 2 | NodeJS.WritableStream = 1): Logger {
  // stdout is written asynchronously, in batches (pino writes what is left synchronously when the
  // process exits); stderr, for the operator's one-line answers, synchronously, line by line.
  const destination =
    to === 1
      ? pino.destination({ fd: 1, sync: false, minLength: LOG_BATCH_BYTES, periodicFlush: LOG_FLUSH_MS })
      : to === 2
        ? pino.destination({ fd: 2, sync: true, minLength: 0 })
        : to;
  return pino({ name, level: config.logLevel, redact: { paths: redact, censor: '[redacted]' } }, destination);
}
