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
 * A JSON logger on stdout, on stderr (fd 2) for commands whose stdout is their answer, or on a
 * stream of the caller's (tests read what was logged).
 */
export function createLogger(config: Pick<Config, 'logLevel'>, name: string, to: 1 | 2 | NodeJS.WritableStream = 1): Logger {
  // stdout is written asynchronously (lines written while a write is in flight go out together;
  // pino flushes on exit); stderr, for the operator's one-line answers, synchronously.
  const destination = typeof to === 'number' ? pino.destination({ fd: to, sync: to === 2, minLength: 0 }) : to;
  return pino({ name, level: config.logLevel, redact: { paths: redact, censor: '[redacted]' } }, destination);
}
