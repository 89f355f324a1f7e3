// The operator command line: `npm run --silent operator -- <command>` (commander). Human output
// by default (tables and fields), `--json` for scripts: one JSON document on stdout, whose shape
// stays stable. Errors are one line on stderr. `help [command]` and `<command> --help` explain each.
//
// Exit codes: 0 done; 1 failed (the database unreachable, say); 2 bad usage (an unknown command
// or option, a missing, repeated or conflicting option, a bad value); 3 not found (no such
// account, key, dataset, event, job…).
import { Command, CommanderError, InvalidArgumentError, Option } from 'commander';
import type { PgBoss } from 'pg-boss';
import { createAccount, findAccount, listAccounts } from '../shared/tenancy/accounts.ts';
import { addMember, removeMember } from '../shared/tenancy/memberships.ts';
import { unlockSignIn } from '../shared/tenancy/people.ts';
import { findKey, issueKey, listKeys, revokeKey, ROTATION_GRACE_SECONDS, rotateKey } from '../shared/tenancy/apiKeys.ts';
import { ConfigError, loadConfig } from '../shared/platform/config.ts';
import { createPool, type Pool } from '../shared/platform/db.ts';
import { openDatabase } from '../shared/platform/embeddedPostgres.ts';
import { createLogger } from '../shared/platform/log.ts';
import { migrate } from '../shared/platform/migrate.ts';
import { JOB_STATES, jobCounts, listFailedJobs, listJobs, NotRetryable, retryJob } from '../shared/domain/failedJobs.ts';
import { createBoss, ensureQueues } from '../shared/platform/boss.ts';
import { queues } from '../shared/platform/queue.ts';
import { readUsage } from '../shared/tenancy/usage.ts';
import { datasetById, datasetsOfAccount } from '../shared/domain/datasets.ts';
import { listVersions } from '../shared/domain/versions.ts';
import { eventById } from '../shared/domain/events.ts';
import { endpointOwner } from '../shared/domain/webhookEndpoints.ts';
import { endpointsOfEvent, recentDeliveries, redeliver } from '../shared/domain/webhookDeliveries.ts';

const EXIT = { done: 0, failed: 1, usage: 2, notFound: 3 } as const;

class UsageError extends Error {}
class NotFound extends Error {}

// ---- options -------------------------------------------------------------------------------

/** An option's value, refused when the option is given twice (never the last one silently taken). */
const once =
  (name: string, check?: (value: string) => string) =>
  (value: string, previous: unknown): string => {
    if (previous !== undefined) throw new InvalidArgumentError(`--${name} is given more than once; give it once.`);
    return check ? check(value) : value;
  };

const nonEmpty = (value: string) => {
  if (value.trim() === '') throw new InvalidArgumentError('it is empty.');
  return value.trim();
};
const oneOf = (values: readonly string[]) => (value: string) => {
  if (!values.includes(value)) throw new InvalidArgumentError(`must be one of ${values.join(', ')}.`);
  return value;
};
const wholeNumber = (min: number, max: number) => (value: string) => {
  const n = Number(value);
  if (!Number.isInteger(n) || n < min || n > max) throw new InvalidArgumentError(`must be a whole number from ${min} to ${max}.`);
  return value;
};
const day = (value: string) => {
  if (!/^\d{4}-\d{2}-\d{2}$/.test(value) || Number.isNaN(Date.parse(`${value}T00:00:00Z`))) throw new InvalidArgumentError('must be a date YYYY-MM-DD.');
  return value;
};
/** A duration: 0, or a number with s, m, h or d (`90m`, `24h`, `7d`); in seconds. */
const duration = (value: string) => {
  const match = /^(\d+)([smhd]?)$/.exec(value);
  if (!match || (match[2] === '' && match[1] !== '0')) throw new InvalidArgumentError('must be 0 or a duration such as 90m, 24h or 7d.');
  return String(Number(match[1]) * { '': 1, s: 1, m: 60, h: 3600, d: 86400 }[match[2] as '' | 's' | 'm' | 'h' | 'd']);
};

const opt = (flags: string, description: string, name: string, check?: (value: string) => string) => new Option(flags, description).argParser(once(name, check));

// ---- output --------------------------------------------------------------------------------

const cell = (value: unknown): string => {
  if (value === null || value === undefined) return '-';
  if (typeof value === 'object') return JSON.stringify(value);
  return String(value);
};

/** Rows as an aligned table, its columns those of the first row. */
function table(rows: Record<string, unknown>[]): string {
  if (rows.length === 0) return '(none)\n';
  const columns = Object.keys(rows[0]!);
  const texts = rows.map((r) => columns.map((c) => cell(r[c])));
  const widths = columns.map((c, i) => Math.max(c.length, ...texts.map((t) => t[i]!.length)));
  const line = (values: string[]) => values.map((v, i) => (i === values.length - 1 ? v : v.padEnd(widths[i]!))).join('  ');
  return `${[line(columns), ...texts.map(line)].join('\n')}\n`;
}

/** A result for people: a list as a table; an object as its fields, its lists as tables below. */
function human(result: unknown): string {
  if (Array.isArray(result)) return table(result as Record<string, unknown>[]);
  if (result === null || typeof result !== 'object') return `${cell(result)}\n`;
  const entries = Object.entries(result as Record<string, unknown>);
  const width = Math.max(...entries.map(([k]) => k.length));
  const fields = entries.filter(([, v]) => !Array.isArray(v)).map(([k, v]) => `${k.padEnd(width)}  ${cell(v)}`);
  const lists = entries.filter(([, v]) => Array.isArray(v)).map(([k, v]) => `\n${k}:\n${table(v as Record<string, unknown>[])}`);
  return `${fields.join('\n')}${fields.length > 0 ? '\n' : ''}${lists.join('')}`;
}

// ---- running a command -----------------------------------------------------------------------

type Context = { pool: Pool; databaseUrl: string; queueHeartbeatSeconds: number };

/** Opens the database (the embedded one without DATABASE_URL), runs the command, prints its result. */
async function execute(json: boolean, work: (ctx: Context) => Promise<{ result: unknown; note?: string }>): Promise<void> {
  const config = loadConfig();
  // Logs go to stderr, so that stdout holds exactly the result.
  const log = createLogger({ logLevel: 'warn' }, 'operator', 2);
  const database = await openDatabase(config, log);
  const pool = createPool(database.url, 2, 'dataset-service-operator');
  try {
    await migrate(pool);
    const { result, note } = await work({ pool, databaseUrl: database.url, queueHeartbeatSeconds: config.queueHeartbeatSeconds });
    process.stdout.write(json ? `${JSON.stringify(result, null, 2)}\n` : human(result));
    if (note && !json) process.stderr.write(`${note}\n`);
  } finally {
    await pool.end();
    await database.stop();
  }
}

/** A leaf command: its options, `--json`, and an action that runs against the database. */
function leaf(parent: Command, name: string, description: string, build: (c: Command) => Command, work: (ctx: Context, args: string[], options: Record<string, string | boolean | undefined>) => Promise<unknown>, note?: string) {
  const command = build(parent.command(name).description(description)).option('--json', 'print one JSON document (for scripts)');
  command.action(async (...received: unknown[]) => {
    const options = received.at(-2) as Record<string, string | boolean | undefined>;
    const args = received.slice(0, -2) as string[];
    await execute(Boolean(options['json']), async (ctx) => ({ result: await work(ctx, args, options), ...(note && { note }) }));
  });
  return command;
}

async function existingAccount(pool: Pool, id: string): Promise<string> {
  if (!(await findAccount(pool, id))) throw new NotFound(`no account ${id}`);
  return id;
}

/** A pg-boss producer, for the commands that enqueue. */
async function withQueue<T>({ databaseUrl, queueHeartbeatSeconds }: Context, work: (boss: PgBoss) => Promise<T>): Promise<T> {
  const boss = createBoss(databaseUrl, 'producer', createLogger({ logLevel: 'warn' }, 'operator', 2));
  await boss.start();
  try {
    await ensureQueues(boss, { heartbeatSeconds: queueHeartbeatSeconds });
    return await work(boss);
  } finally {
    await boss.stop({ graceful: false });
  }
}

// ---- the commands ----------------------------------------------------------------------------

function operatorProgram(): Command {
  const program = new Command('operator')
    .description('Operate the Dataset Service: accounts, keys, members, usage, datasets, jobs, webhooks.')
    .usage('<command> [options]')
    .helpCommand('help [command]', 'show the help of a command')
    .showSuggestionAfterError(true)
    .addHelpText('after', '\nExit codes: 0 done, 1 failed, 2 bad usage, 3 not found. Add --json to any command for one JSON document.');

  const accounts = program.command('accounts').description('customer accounts');
  leaf(accounts, 'create', 'create an account', (c) => c.addOption(opt('--name <name>', 'its name', 'name', nonEmpty).makeOptionMandatory()), ({ pool }, _a, o) =>
    createAccount(pool, o['name'] as string),
  );
  leaf(accounts, 'list', 'list every account', (c) => c, ({ pool }) => listAccounts(pool));

  const keys = program.command('keys').description('API keys: issued, listed, rotated, revoked');
  leaf(
    keys,
    'issue',
    'issue a key (its secret is printed this once)',
    (c) => c.addOption(opt('--account <id>', 'the account (acc_…)', 'account', nonEmpty).makeOptionMandatory()).addOption(opt('--mode <mode>', 'test or live', 'mode', oneOf(['test', 'live'])).makeOptionMandatory()),
    async ({ pool }, _a, o) => {
      const mode = o['mode'] as 'test' | 'live';
      const issued = await issueKey(pool, await existingAccount(pool, o['account'] as string), mode);
      return { id: issued.id, object: issued.object, accountId: issued.accountId, label: issued.label, mode, createdAt: issued.createdAt, key: issued.key };
    },
    'The key is shown only this once: store it now.',
  );
  leaf(keys, 'list', "list an account's keys (never a secret)", (c) => c.addOption(opt('--account <id>', 'the account (acc_…)', 'account', nonEmpty).makeOptionMandatory()), async ({ pool }, _a, o) =>
    listKeys(pool, await existingAccount(pool, o['account'] as string)),
  );
  leaf(keys, 'revoke', 'revoke a key now (the next request with it is 401)', (c) => c.argument('<key-id>', 'the key (key_…)'), async ({ pool }, [keyId]) => {
    const revoked = await revokeKey(pool, keyId!);
    if (!revoked) throw new NotFound(`no key ${keyId}`);
    return revoked;
  });
  leaf(
    keys,
    'rotate',
    'issue a new key of the same account and mode; the old one keeps working for the grace period, then is revoked',
    (c) =>
      c
        .argument('<key-id>', 'the key to replace (key_…)')
        .addOption(opt('--grace <duration>', 'how long the old key keeps working: 0, or e.g. 90m, 24h, 7d (default 24h)', 'grace', duration)),
    async ({ pool }, [keyId], o) => {
      const grace = o['grace'] === undefined ? ROTATION_GRACE_SECONDS : Number(o['grace']);
      const rotated = await rotateKey(pool, keyId!, grace);
      if (!rotated) throw (await findKey(pool, keyId!)) ? new UsageError(`key ${keyId} is revoked already`) : new NotFound(`no key ${keyId}`);
      const { issued, retired } = rotated;
      return { issued: { id: issued.id, label: issued.label, mode: issued.mode, accountId: issued.accountId, createdAt: issued.createdAt, key: issued.key }, retired };
    },
    'The new key is shown only this once. Move every program to it before the old one is revoked (retired.revokedAt).',
  );

  const members = program.command('members').description('people who may connect programs to an account (OAuth)');
  leaf(
    members,
    'add',
    'link a person to an account; prints the invitation code, once (7 days)',
    (c) =>
      c
        .addOption(opt('--account <id>', 'the account (acc_…)', 'account', nonEmpty).makeOptionMandatory())
        .addOption(
          opt('--email <email>', 'their email address', 'email', (v) => {
            const email = v.trim().toLowerCase();
            if (!/^[^\s@]+@[^\s@]+\.[^\s@]+$/.test(email)) throw new InvalidArgumentError('is not an email address.');
            return email;
          }).makeOptionMandatory(),
        ),
    async ({ pool }, _a, o) => addMember(pool, await existingAccount(pool, o['account'] as string), o['email'] as string),
  );
  leaf(
    members,
    'remove',
    'unlink a person; the OAuth grants they made for the account are revoked',
    (c) => c.addOption(opt('--account <id>', 'the account (acc_…)', 'account', nonEmpty).makeOptionMandatory()).addOption(opt('--email <email>', 'their email address', 'email', nonEmpty).makeOptionMandatory()),
    async ({ pool }, _a, o) => {
      const removed = await removeMember(pool, await existingAccount(pool, o['account'] as string), o['email'] as string);
      if (!removed.removed) throw new NotFound(`${o['email'] as string} is not a member of that account`);
      return removed;
    },
  );
  const people = program.command('people').description('people who sign in to connect programs');
  leaf(people, 'unlock', 'let someone locked out by wrong passwords sign in again at once', (c) => c.addOption(opt('--email <email>', 'their email address', 'email', nonEmpty).makeOptionMandatory()), async ({ pool }, _a, o) => {
    const email = o['email'] as string;
    if (!(await unlockSignIn(pool, email))) throw new NotFound(`no person ${email}`);
    return { object: 'person', email: email.toLowerCase(), unlocked: true };
  });

  leaf(
    program,
    'usage',
    'live-mode metered usage of an account, in total and per day',
    (c) =>
      c
        .addOption(opt('--account <id>', 'the account (acc_…)', 'account', nonEmpty).makeOptionMandatory())
        .addOption(opt('--from <date>', 'first day, YYYY-MM-DD', 'from', day))
        .addOption(opt('--to <date>', 'last day, YYYY-MM-DD', 'to', day)),
    async ({ pool }, _a, o) => {
      if (o['from'] && o['to'] && (o['from'] as string) > (o['to'] as string)) throw new UsageError('--from is after --to');
      return readUsage(pool, await existingAccount(pool, o['account'] as string), { from: o['from'] as string | undefined, to: o['to'] as string | undefined });
    },
  );

  const datasets = program.command('datasets').description("an account's datasets");
  leaf(
    datasets,
    'list',
    "list an account's datasets, newest first",
    (c) =>
      c
        .addOption(opt('--account <id>', 'the account (acc_…)', 'account', nonEmpty).makeOptionMandatory())
        .addOption(opt('--mode <mode>', 'test or live only', 'mode', oneOf(['test', 'live'])))
        .addOption(opt('--limit <n>', 'at most this many (default 50)', 'limit', wholeNumber(1, 1000))),
    async ({ pool }, _a, o) =>
      datasetsOfAccount(pool, await existingAccount(pool, o['account'] as string), { mode: o['mode'] as 'test' | 'live' | undefined, limit: Number(o['limit'] ?? 50) }),
  );
  const versions = program.command('versions').description("a dataset's versions");
  leaf(
    versions,
    'list',
    "list a dataset's versions, newest first",
    (c) => c.addOption(opt('--dataset <id>', 'the dataset (ds_…)', 'dataset', nonEmpty).makeOptionMandatory()).addOption(opt('--limit <n>', 'at most this many (default 50)', 'limit', wholeNumber(1, 1000))),
    async ({ pool }, _a, o) => {
      const dataset = await datasetById(pool, o['dataset'] as string);
      if (!dataset) throw new NotFound(`no dataset ${o['dataset'] as string}`);
      const page = await listVersions(pool, dataset.id, { limit: Number(o['limit'] ?? 50) });
      return page.versions.map((v) => ({
        id: v.id,
        status: v.status,
        rowCount: v.rowCount,
        problem: v.problem?.type ?? null,
        createdAt: v.createdAt.toISOString(),
        completedAt: v.completedAt?.toISOString() ?? null,
        rowsPurgedAt: v.rowsPurgedAt?.toISOString() ?? null,
      }));
    },
  );

  const jobs = program.command('jobs').description('background jobs (builds, exports, deliveries, purges)');
  leaf(
    jobs,
    'list',
    'queue depths by state, and the latest jobs (every state, or --state; --failed: the failed and dead-lettered builds, as listed before)',
    (c) =>
      c
        .addOption(opt('--state <state>', `one of ${JOB_STATES.join(', ')}`, 'state', oneOf(JOB_STATES)).conflicts('failed'))
        .addOption(opt('--queue <name>', `one of ${Object.values(queues).join(', ')}`, 'queue', oneOf(Object.values(queues))).conflicts('failed'))
        .addOption(opt('--limit <n>', 'at most this many jobs (default 50)', 'limit', wholeNumber(1, 1000)).conflicts('failed'))
        .addOption(new Option('--failed', 'only build and export jobs that failed or were dead-lettered (retryable with jobs retry)')),
    async ({ pool }, _a, o) => {
      if (o['failed']) return listFailedJobs(pool);
      return { queues: await jobCounts(pool), jobs: await listJobs(pool, { state: o['state'] as string | undefined, queue: o['queue'] as string | undefined, limit: Number(o['limit'] ?? 50) }) };
    },
  );
  leaf(jobs, 'retry', "reopen a failed build's version or export and queue it again", (c) => c.argument('<job-id>', 'the job (from jobs list --failed)'), (ctx, [jobId]) =>
    withQueue(ctx, async (boss) => {
      try {
        const retried = await retryJob(ctx.pool, boss, jobId!);
        if (!retried) throw new NotFound(`no failed or dead-lettered job ${jobId}`);
        return retried;
      } catch (error) {
        throw error instanceof NotRetryable ? new UsageError(error.message) : error;
      }
    }),
  );

  const webhooks = program.command('webhooks').description('webhook deliveries');
  leaf(
    webhooks,
    'deliveries',
    'recent deliveries, newest first, with their last attempt',
    (c) =>
      c
        .addOption(opt('--endpoint <id>', 'of this endpoint (we_…)', 'endpoint', nonEmpty))
        .addOption(opt('--event <id>', 'of this event (evt_…)', 'event', nonEmpty))
        .addOption(opt('--limit <n>', 'at most this many (default 20)', 'limit', wholeNumber(1, 1000))),
    ({ pool }, _a, o) => recentDeliveries(pool, { endpointId: o['endpoint'] as string | undefined, eventId: o['event'] as string | undefined, limit: Number(o['limit'] ?? 20) }),
  );
  leaf(
    webhooks,
    'redeliver',
    'send an event again (same webhook-id) to an endpoint, or to every endpoint it went to',
    (c) => c.argument('<event-id>', 'the event (evt_…)').addOption(opt('--endpoint <id>', 'only to this endpoint (we_…)', 'endpoint', nonEmpty)),
    async (ctx, [eventId], o) => {
      const { pool } = ctx;
      const event = await eventById(pool, eventId!);
      if (!event) throw new NotFound(`no event ${eventId}`);
      const endpoints = o['endpoint'] === undefined ? await endpointsOfEvent(pool, eventId!) : [o['endpoint'] as string];
      for (const id of endpoints) {
        const owner = await endpointOwner(pool, id);
        if (!owner || owner.deleted) throw new NotFound(`no webhook endpoint ${id}`);
        if (owner.accountId !== event.accountId || owner.mode !== event.mode) throw new UsageError(`${id} does not take ${eventId}: another account or mode`);
      }
      if (endpoints.length === 0) throw new UsageError(`${eventId} went to no endpoint: name one with --endpoint`);
      return withQueue(ctx, async (boss) => ({
        eventId,
        deliveries: await Promise.all(endpoints.map(async (endpointId) => ({ endpointId, deliveryId: await redeliver(pool, boss, eventId!, endpointId) }))),
      }));
    },
  );

  // Every command: commander's own refusals become exit 2, never an exit from inside the parser.
  const quiet = (command: Command) => {
    command.exitOverride();
    command.commands.forEach(quiet);
  };
  quiet(program);
  return program;
}

async function main(argv: string[]): Promise<number> {
  const program = operatorProgram();
  try {
    if (argv.length === 0) {
      program.outputHelp();
      return EXIT.usage;
    }
    await program.parseAsync(argv, { from: 'user' });
    return EXIT.done;
  } catch (error) {
    if (error instanceof CommanderError) {
      // Help asked for is success; anything else commander refused was printed by it already.
      return ['commander.helpDisplayed', 'commander.help', 'commander.version'].includes(error.code) ? EXIT.done : EXIT.usage;
    }
    process.stderr.write(`operator: ${(error as Error).message.split('\n').join(' ')}\n`);
    if (error instanceof NotFound) return EXIT.notFound;
    if (error instanceof UsageError || error instanceof ConfigError) return EXIT.usage;
    return EXIT.failed;
  }
}

process.exitCode = await main(process.argv.slice(2));
