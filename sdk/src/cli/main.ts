// dsvc: the Dataset Service from a terminal (commander). Human output by default (fields and
// tables on stdout, progress bars and notes on stderr), `--json` for scripts: one JSON document on
// stdout, and a failure as one JSON document on stderr.
//
// Exit codes: 0 done; 1 failed (the service refused or could not be reached); 2 bad usage (an
// unknown command or option, a bad value, no API key configured); 3 not found; 4 the file was
// rejected (row errors; nothing was written).
import { Command, CommanderError, InvalidArgumentError, Option } from 'commander';
import { once } from 'node:events';
import { DatasetService } from '../client.ts';
import { ApiError, ConflictError, DatasetServiceError, IngestValidationError, NotFoundError } from '../errors.ts';
import type { Catalog, Dataset, Metrics, RowError, Version } from '../types.ts';
import { configPath, DEFAULT_BASE_URL, keyLabel, readSettings, resolveSettings, writeSettings } from './config.ts';
import { listen } from './listen.ts';
import { fields, output, type Output, table } from './output.ts';

const EXIT = { done: 0, failed: 1, usage: 2, notFound: 3, rejected: 4 } as const;
const EVENT_TYPES = ['dataset.created', 'dataset.deleted', 'version.active', 'version.failed', 'version.superseded', 'export.ready', 'export.failed'];

class UsageError extends Error {}
/** A failure already told to the person; only its exit code is left. */
class Told extends Error {
  readonly exitCode: number;
  constructor(exitCode: number) {
    super('told');
    this.exitCode = exitCode;
  }
}

// ---- options -------------------------------------------------------------------------------

const wholeNumber = (min: number, max: number) => (value: string) => {
  const n = Number(value);
  if (!/^\d+$/.test(value) || n < min || n > max) throw new InvalidArgumentError(`must be a whole number from ${min} to ${max}.`);
  return n;
};
const month = (value: string) => {
  if (!/^\d{4}-(0[1-9]|1[0-2])$/.test(value)) throw new InvalidArgumentError('must be a month, YYYY-MM.');
  return value;
};
const eventTypes = (value: string) => {
  const types = value.split(',').map((t) => t.trim());
  const unknown = types.filter((t) => !EVENT_TYPES.includes(t));
  if (unknown.length > 0) throw new InvalidArgumentError(`unknown event type ${unknown.join(', ')}; one of ${EVENT_TYPES.join(', ')}.`);
  return types;
};

// ---- running a command -----------------------------------------------------------------------

type Globals = { baseUrl?: string; json?: boolean };
/** What a command runs with: the client, its output, and its own options (as commander parsed them). */
type Run = { service: DatasetService; out: Output; opts: <T>() => T };

/** A command that talks to the service: the client from the configured key, and its output. */
function action<A extends unknown[]>(work: (run: Run, ...args: A) => Promise<void>) {
  return async function (this: Command, ...received: unknown[]) {
    const globals = this.optsWithGlobals<Globals>();
    const settings = await resolveSettings(globals.baseUrl ? { baseUrl: globals.baseUrl } : {});
    if (!settings.apiKey) throw new UsageError(`no API key: run \`dsvc config set\`, or set DATASET_SERVICE_API_KEY`);
    const service = new DatasetService({ apiKey: settings.apiKey, baseUrl: settings.baseUrl });
    await work({ service, out: output(Boolean(globals.json)), opts: <T>() => this.opts() as T }, ...(received.slice(0, -2) as A));
  };
}

/** A dataset named by its id (ds_…) or its externalRef. */
function findDataset(service: DatasetService, ref: string): Promise<Dataset> {
  return ref.startsWith('ds_') ? service.datasets.get(ref) : service.datasets.getByRef(ref);
}

// ---- what people read ------------------------------------------------------------------------

const datasetRow = (d: Dataset) => ({ id: d.id, externalRef: d.externalRef, name: d.name, activeVersionId: d.activeVersionId, createdAt: d.createdAt });
const versionRow = (v: Version) => ({ id: v.id, status: v.status, rowCount: v.rowCount, contributingRowCount: v.contributingRowCount, createdAt: v.createdAt });
const errorRow = (e: RowError) => ({ row: e.row, field: e.field, code: e.code, message: e.message });

function metricsText(m: Metrics): string {
  const { excluded } = m.rows;
  return (
    `version  ${m.versionId}\nrows     ${m.rows.total} (${m.rows.contributing} contributing; excluded: startDate ${excluded.startDate}, endDate ${excluded.endDate}, amount ${excluded.amount}, currency ${excluded.currency})\n` +
    `\ncurrencies:\n${table(m.currencies)}\nmonthly:\n${table(m.monthly)}`
  );
}

function catalogText(c: Catalog): string {
  return `version  ${c.versionId}\nrows     ${c.rowCount}\n\nfields:\n${table(c.fields)}\nproducts:\n${table(c.products)}`;
}

// ---- the commands ----------------------------------------------------------------------------

function program(): Command {
  const root = new Command('dsvc')
    .description('The Dataset Service from your terminal: datasets, uploads with progress, row errors, metrics, catalog, exports, events.')
    .usage('<command> [options]')
    .option('--base-url <url>', `the service (default: DATASET_SERVICE_URL, the config file, or ${DEFAULT_BASE_URL})`)
    .option('--json', 'print one JSON document (for scripts)')
    .helpCommand('help [command]', 'show the help of a command')
    .showSuggestionAfterError(true)
    .addHelpText(
      'after',
      '\nThe API key comes from DATASET_SERVICE_API_KEY, else from `dsvc config set` (a file only you can read).\n' +
        'Exit codes: 0 done, 1 failed, 2 bad usage, 3 not found, 4 the file was rejected (row errors).',
    );

  const config = root.command('config').description('the API key and the service this terminal uses');
  config
    .command('set')
    .description('keep an API key (read from standard input, so it stays out of your shell history) and a base URL')
    .option('--base-url <url>', 'the service to keep')
    .action(async function (this: Command) {
      const options = this.opts<{ baseUrl?: string }>();
      const path = configPath();
      const settings = await readSettings(path);
      if (process.stdin.isTTY) process.stderr.write('API key (svc_test_…, svc_live_… or svc_oauth_…): ');
      const key = (await readLine()).trim();
      if (key && !/^svc_(test|live|oauth)_/.test(key)) throw new UsageError('that is not an API key: it starts with svc_test_, svc_live_ or svc_oauth_');
      await writeSettings({ ...settings, ...(key && { apiKey: key }), ...(options.baseUrl && { baseUrl: options.baseUrl }) }, path);
      process.stderr.write(`Kept in ${path} (readable by you only).\n`);
    });
  config
    .command('show')
    .description('where the key comes from (never the key itself) and the service')
    .action(async function (this: Command) {
      const globals = this.optsWithGlobals<Globals>();
      const settings = await resolveSettings(globals.baseUrl ? { baseUrl: globals.baseUrl } : {});
      output(Boolean(globals.json)).result({ baseUrl: settings.baseUrl, key: settings.apiKey ? keyLabel(settings.apiKey) : null, keyFrom: settings.keyFrom, configFile: configPath() });
    });

  const datasets = root.command('datasets').description('create, list, read and delete datasets');
  datasets
    .command('list')
    .description('the datasets, newest first')
    .addOption(new Option('--limit <n>', 'at most this many (default 20)').argParser(wholeNumber(1, 10_000)).default(20))
    .action(
      action(async ({ service, out, opts }) => {
        const { limit } = opts<{ limit: number }>();
        const found: Dataset[] = [];
        for await (const d of service.datasets.listAll({ limit: Math.min(limit, 100) })) {
          found.push(d);
          if (found.length >= limit) break;
        }
        out.result(found, (list: Dataset[]) => table(list.map(datasetRow)));
      }),
    );
  datasets
    .command('create')
    .description('create a dataset')
    .requiredOption('--external-ref <ref>', 'your reference for it (unique in the account and mode)')
    .requiredOption('--name <name>', 'its name')
    .option('--idempotency-key <key>', 'the operation\'s key (default: derived from --external-ref)')
    .action(
      action(async ({ service, out, opts }) => {
        const o = opts<{ externalRef: string; name: string; idempotencyKey?: string }>();
        const created = await service.datasets
          .create({ externalRef: o.externalRef, name: o.name }, { idempotencyKey: o.idempotencyKey ?? `dsvc-create-${o.externalRef}` })
          .catch(async (error: unknown) => {
            if (error instanceof ConflictError && error.existingId) out.note(`A dataset with externalRef ${o.externalRef} exists: ${error.existingId}`);
            throw error;
          });
        out.result(created);
      }),
    );
  datasets
    .command('get')
    .description('one dataset')
    .argument('<dataset>', 'its id (ds_…) or externalRef')
    .action(action(async ({ service, out }, ref: string) => out.result(await findDataset(service, ref))));
  datasets
    .command('delete')
    .description('delete a dataset with its versions and exports')
    .argument('<dataset>', 'its id (ds_…) or externalRef')
    .option('--yes', 'yes, delete it (needed: nothing can bring it back)')
    .action(
      action(async ({ service, out, opts }, ref: string) => {
        if (!opts<{ yes?: boolean }>().yes) throw new UsageError('deleting cannot be undone: add --yes');
        const dataset = await findDataset(service, ref);
        out.result(await service.datasets.delete(dataset.id, { idempotencyKey: `dsvc-delete-${dataset.id}` }));
      }),
    );

  root
    .command('upload')
    .description('upload a contract file (CSV) as a new version, with its progress, and wait for the outcome')
    .argument('<file>', 'the CSV file')
    .requiredOption('--dataset <dataset>', 'its id (ds_…) or externalRef')
    .option('--errors-csv <path>', 'when rows are rejected, save them here (with their row numbers and problems) to fix and upload again')
    .option('--no-wait', 'return once the version is queued')
    .addOption(new Option('--resumable', 'send through the resumable endpoint (default: from 32 MiB)').conflicts('direct'))
    .addOption(new Option('--direct', 'send in one request, however large'))
    .option('--idempotency-key <key>', 'the operation\'s key (default: a new one)')
    .action(
      action(async ({ service, out, opts }, file: string) => {
        const o = opts<{ dataset: string; errorsCsv?: string; wait: boolean; resumable?: boolean; direct?: boolean; idempotencyKey?: string }>();
        const dataset = await findDataset(service, o.dataset);
        const bars = out.bars();
        try {
          const version = await service.versions.upload(
            dataset.id,
            { path: file },
            {
              wait: o.wait,
              resumable: o.resumable ? true : o.direct ? false : 'auto',
              ...(o.idempotencyKey && { idempotencyKey: o.idempotencyKey }),
              ...(bars && {
                onProgress: (p) => (p.phase === 'uploading' ? bars.sent(p.bytesSent, p.bytesTotal) : bars.built(p.rowsProcessed, p.bytesProcessed, p.bytesTotal)),
              }),
            },
          );
          bars?.stop();
          out.result(version, (v: Version) =>
            v.status === 'active' || v.status === 'superseded'
              ? `Version ${v.id} is ${v.status}: ${v.rowCount} rows (${v.contributingRowCount} contributing).\n`
              : `Version ${v.id} is ${v.status}; follow it with: dsvc versions get ${dataset.id} ${v.id}\n`,
          );
        } catch (error) {
          bars?.stop();
          if (!(error instanceof IngestValidationError)) throw error;
          if (o.errorsCsv && error.versionId) await service.versions.downloadRejectedRows(dataset.id, error.versionId, o.errorsCsv);
          if (out.json) process.stderr.write(`${JSON.stringify(error.problem, null, 2)}\n`);
          else {
            const more = error.errorCount - error.errors.length;
            process.stdout.write(`The file was rejected: ${error.errorCount} row errors; nothing was written (version ${error.versionId}).\n\n`);
            process.stdout.write(table(error.errors.map(errorRow)));
            if (more > 0) process.stdout.write(`… and ${more} more: dsvc versions errors ${dataset.id} ${error.versionId} --all\n`);
            process.stdout.write(o.errorsCsv ? `\nThe rejected rows are in ${o.errorsCsv}: fix them and upload again.\n` : '\nSave the rejected rows to fix them with --errors-csv PATH.\n');
          }
          throw new Told(EXIT.rejected);
        }
      }),
    );

  const versions = root.command('versions').description("a dataset's versions and a failed one's row errors");
  versions
    .command('list')
    .description('the versions, newest first')
    .argument('<dataset>', 'its id (ds_…) or externalRef')
    .action(
      action(async ({ service, out }, ref: string) => {
        const dataset = await findDataset(service, ref);
        out.result((await service.versions.list(dataset.id, { limit: 100 })).data, (list: Version[]) => table(list.map(versionRow)));
      }),
    );
  versions
    .command('get')
    .description('one version, with its progress or its problem')
    .argument('<dataset>', 'its id (ds_…) or externalRef')
    .argument('<version>', 'the version (ver_…)')
    .action(action(async ({ service, out }, ref: string, versionId: string) => out.result(await service.versions.get((await findDataset(service, ref)).id, versionId))));
  versions
    .command('errors')
    .description("a failed version's row errors (the first 100, or --all), or its rejected rows as CSV")
    .argument('<dataset>', 'its id (ds_…) or externalRef')
    .argument('<version>', 'the version (ver_…)')
    .option('--all', 'every error, however many')
    .option('--csv <path>', 'save the rejected rows (CSV) here instead')
    .action(
      action(async ({ service, out, opts }, ref: string, versionId: string) => {
        const o = opts<{ all?: boolean; csv?: string }>();
        const dataset = await findDataset(service, ref);
        if (o.csv) {
          await service.versions.downloadRejectedRows(dataset.id, versionId, o.csv);
          out.note(`Saved the rejected rows to ${o.csv}.`);
          return;
        }
        const errors: RowError[] = [];
        for await (const e of service.versions.listAllErrors(dataset.id, versionId)) {
          errors.push(e);
          if (!o.all && errors.length >= 100) break;
        }
        out.result(errors, (list: RowError[]) => table(list.map(errorRow)));
      }),
    );

  root
    .command('metrics')
    .description("the active version's metrics: rows, currencies, months")
    .argument('<dataset>', 'its id (ds_…) or externalRef')
    .addOption(new Option('--from <month>', 'first month, YYYY-MM').argParser(month))
    .addOption(new Option('--to <month>', 'last month, YYYY-MM').argParser(month))
    .action(
      action(async ({ service, out, opts }, ref: string) => {
        const o = opts<{ from?: string; to?: string }>();
        const dataset = await findDataset(service, ref);
        out.result(await service.datasets.metrics(dataset.id, { ...(o.from && { from: o.from }), ...(o.to && { to: o.to }) }), metricsText);
      }),
    );
  root
    .command('catalog')
    .description("the active version's catalog: fields and products")
    .argument('<dataset>', 'its id (ds_…) or externalRef')
    .action(action(async ({ service, out }, ref: string) => out.result(await service.datasets.catalog((await findDataset(service, ref)).id), catalogText)));

  root
    .command('export')
    .description('export the active version (or --version) and save it')
    .argument('<dataset>', 'its id (ds_…) or externalRef')
    .addOption(new Option('--format <format>', 'csv or jsonl').choices(['csv', 'jsonl']).default('csv'))
    .requiredOption('-o, --output <path>', 'where to save it')
    .option('--version <version>', 'a version other than the active one (ver_…)')
    .action(
      action(async ({ service, out, opts }, ref: string) => {
        const o = opts<{ format: 'csv' | 'jsonl'; output: string; version?: string }>();
        const dataset = await findDataset(service, ref);
        const requested = await service.exports.create(dataset.id, { format: o.format, ...(o.version && { versionId: o.version }) });
        out.note(`Building export ${requested.id}…`);
        const ready = await service.exports.wait(dataset.id, requested.id);
        await service.exports.downloadTo(dataset.id, ready.id, o.output);
        out.result(ready, (e: typeof ready) => `Saved ${e.rowCount} rows (${e.bytes} bytes, ${e.format}) to ${o.output}.\n`);
      }),
    );

  const events = root.command('events').description("the account's events, newest first (kept 30 days)");
  events
    .command('list')
    .description('the latest events')
    .addOption(new Option('--type <type>', 'only this type').choices(EVENT_TYPES))
    .addOption(new Option('--limit <n>', 'at most this many (default 20)').argParser(wholeNumber(1, 100)).default(20))
    .action(
      action(async ({ service, out, opts }) => {
        const o = opts<{ type?: (typeof EVENT_TYPES)[number]; limit: number }>();
        const page = await service.events.list({ limit: o.limit, ...(o.type && { type: o.type as never }) });
        out.result(page.data, (list: typeof page.data) => table(list.map((e) => ({ id: e.id, type: e.type, object: (e.data.object as { id?: string }).id, createdAt: e.createdAt }))));
      }),
    );

  root
    .command('listen')
    .description('forward the account\'s events, as they happen, to a local URL, signed with a secret shown at the start (until Ctrl-C)')
    .requiredOption('--forward-to <url>', 'where to POST each event, e.g. http://localhost:4242/webhooks')
    .addOption(new Option('--events <types>', 'only these types, comma-separated').argParser(eventTypes))
    .addOption(new Option('--interval <ms>', 'how often to look for new events (default 1000)').argParser(wholeNumber(100, 60_000)).default(1000))
    .action(
      action(async ({ service, opts }) => {
        const o = opts<{ forwardTo: string; events?: string[]; interval: number }>();
        if (!URL.canParse(o.forwardTo)) throw new UsageError(`--forward-to: ${o.forwardTo} is not a URL`);
        const stopped = Promise.race([once(process, 'SIGINT'), once(process, 'SIGTERM')]).then(() => undefined);
        await listen(service, { forwardTo: o.forwardTo, events: o.events, intervalMs: o.interval, stopped, say: (line) => process.stdout.write(`${line}\n`) });
      }),
    );

  // Every command: commander's own refusals become exit 2, never an exit from inside the parser.
  const quiet = (command: Command) => {
    command.exitOverride();
    command.commands.forEach(quiet);
  };
  quiet(root);
  return root;
}

function readLine(): Promise<string> {
  return new Promise((resolve, reject) => {
    let text = '';
    process.stdin.setEncoding('utf8');
    process.stdin.on('data', (chunk: string) => {
      text += chunk;
      if (text.includes('\n')) {
        process.stdin.pause();
        resolve(text.slice(0, text.indexOf('\n')));
      }
    });
    process.stdin.on('end', () => resolve(text));
    process.stdin.on('error', reject);
  });
}

export async function main(argv: string[]): Promise<number> {
  const root = program();
  const json = argv.includes('--json');
  try {
    if (argv.length === 0) {
      root.outputHelp();
      return EXIT.usage;
    }
    await root.parseAsync(argv, { from: 'user' });
    return EXIT.done;
  } catch (error) {
    if (error instanceof CommanderError) {
      return ['commander.helpDisplayed', 'commander.help', 'commander.version'].includes(error.code) ? EXIT.done : EXIT.usage;
    }
    if (error instanceof Told) return error.exitCode;
    const code =
      error instanceof UsageError ? EXIT.usage : error instanceof NotFoundError ? EXIT.notFound : error instanceof IngestValidationError ? EXIT.rejected : EXIT.failed;
    if (json && error instanceof ApiError) process.stderr.write(`${JSON.stringify({ error: error.problem, requestId: error.requestId ?? null }, null, 2)}\n`);
    else if (json) process.stderr.write(`${JSON.stringify({ error: { message: (error as Error).message } })}\n`);
    else {
      const request = error instanceof ApiError && error.requestId ? ` (request ${error.requestId})` : '';
      const message = error instanceof DatasetServiceError || error instanceof UsageError ? error.message : `unexpected: ${(error as Error).message}`;
      process.stderr.write(`dsvc: ${message.split('\n').join(' ')}${request}\n`);
    }
    return code;
  }
}

// A reader that stopped early (`dsvc events list | head -1`) is not a failure: stop quietly.
for (const stream of [process.stdout, process.stderr]) {
  stream.on('error', (error: NodeJS.ErrnoException) => {
    if (error.code === 'EPIPE') process.exit(0);
    throw error;
  });
}
process.exitCode = await main(process.argv.slice(2));
