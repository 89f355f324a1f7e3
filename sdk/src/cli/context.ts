// What every dsvc command shares: the exit codes, the errors that carry one, the option parsers,
// and `action`, which gives a command its client (from the kept or given key) and its output.
import { type Command, InvalidArgumentError } from 'commander';
import { DatasetService } from '../client.ts';
import type { Dataset } from '../types.ts';
import { keyMode, resolveSettings } from './config.ts';
import { output, type Output } from './output.ts';

export const EXIT = { done: 0, failed: 1, usage: 2, notFound: 3, rejected: 4 } as const;
export const EVENT_TYPES = ['dataset.created', 'dataset.deleted', 'version.active', 'version.failed', 'version.superseded', 'export.ready', 'export.failed', 'exchange_rates.created'];

/** Bad usage (exit 2): its message says what to change. */
export class UsageError extends Error {}
/** A failure already told to the person; only its exit code is left. */
export class Told extends Error {
  readonly exitCode: number;
  constructor(exitCode: number) {
    super('told');
    this.exitCode = exitCode;
  }
}

// ---- options -------------------------------------------------------------------------------

export const wholeNumber = (min: number, max: number) => (value: string) => {
  const n = Number(value);
  if (!/^\d+$/.test(value) || n < min || n > max) throw new InvalidArgumentError(`must be a whole number from ${min} to ${max}.`);
  return n;
};
export const month = (value: string) => {
  if (!/^\d{4}-(0[1-9]|1[0-2])$/.test(value)) throw new InvalidArgumentError('must be a month, YYYY-MM.');
  return value;
};
export const eventTypes = (value: string) => {
  const types = value.split(',').map((t) => t.trim());
  const unknown = types.filter((t) => !EVENT_TYPES.includes(t));
  if (unknown.length > 0) throw new InvalidArgumentError(`unknown event type ${unknown.join(', ')}; one of ${EVENT_TYPES.join(', ')}.`);
  return types;
};

// ---- running a command -----------------------------------------------------------------------

export type Globals = { baseUrl?: string; json?: boolean };
/** What a command runs with: the client, the key's mode, its output, and its own options (as commander parsed them). */
export type Run = { service: DatasetService; mode: 'test' | 'live' | undefined; out: Output; opts: <T>() => T };

/** A command that talks to the service: the client from the configured key, and its output. */
export function action<A extends unknown[]>(work: (run: Run, ...args: A) => Promise<void>) {
  return async function (this: Command, ...received: unknown[]) {
    const globals = this.optsWithGlobals<Globals>();
    const settings = await resolveSettings(globals.baseUrl ? { baseUrl: globals.baseUrl } : {});
    if (!settings.apiKey) throw new UsageError(`no API key: run \`dsvc login\`, or set DATASET_SERVICE_API_KEY`);
    const service = new DatasetService({ apiKey: settings.apiKey, baseUrl: settings.baseUrl });
    const run = { service, mode: keyMode(settings.apiKey), out: output(Boolean(globals.json)), opts: <T>() => this.opts() as T };
    await work(run, ...(received.slice(0, -2) as A));
  };
}

/** A dataset named by its id (ds_…) or its externalRef. */
export function findDataset(service: DatasetService, ref: string): Promise<Dataset> {
  return ref.startsWith('ds_') ? service.datasets.get(ref) : service.datasets.getByRef(ref);
}
