// The operator command line: `npm run --silent operator -- <command>`. Each command prints one
// JSON document on stdout; errors are one line on stderr; exit 0 on success, 2 on bad usage or an
// unknown id, 1 on any other failure.
import { parseArgs } from 'node:util';
import { createAccount, findAccount, listAccounts } from '../shared/tenancy/accounts.ts';
import { addMember, removeMember } from '../shared/tenancy/memberships.ts';
import { unlockSignIn } from '../shared/tenancy/people.ts';
import { issueKey, listKeys, revokeKey } from '../shared/tenancy/apiKeys.ts';
import { ConfigError, loadConfig } from '../shared/platform/config.ts';
import { createPool, type Pool } from '../shared/platform/db.ts';
import { openDatabase } from '../shared/platform/embeddedPostgres.ts';
import { createLogger } from '../shared/platform/log.ts';
import { migrate } from '../shared/platform/migrate.ts';
import { listFailedJobs, NotRetryable, retryJob } from '../shared/domain/failedJobs.ts';
import { createBoss, ensureQueues } from '../shared/platform/queue.ts';
import { readUsage } from '../shared/tenancy/usage.ts';
import type { PgBoss } from 'pg-boss';
import { eventById } from '../shared/domain/events.ts';
import { endpointOwner } from '../shared/domain/webhookEndpoints.ts';
import { endpointsOfEvent, recentDeliveries, redeliver } from '../shared/domain/webhookDeliveries.ts';

class UsageError extends Error {}

const USAGE = `usage: operator <command>
  accounts create --name NAME
  accounts list
  keys issue --account ACC --mode test|live
  keys list --account ACC
  keys revoke KEY_ID
  members add --account ACC --email EMAIL      (prints the invitation code, once)
  members remove --account ACC --email EMAIL   (revokes the OAuth grants made for it)
  people unlock --email EMAIL                  (after too many wrong passwords)
  usage --account ACC [--from YYYY-MM-DD] [--to YYYY-MM-DD]
  jobs list
  jobs retry JOB_ID
  webhooks deliveries [--endpoint WE_ID] [--event EVT_ID] [--limit N]   (newest first, with the last attempt)
  webhooks redeliver EVT_ID [--endpoint WE_ID]   (to that endpoint, or again to every endpoint it went to)`;

type Values = { name?: string; account?: string; mode?: string; email?: string; from?: string; to?: string; endpoint?: string; event?: string; limit?: string };

function required(values: Values, name: keyof Values): string {
  const value = values[name];
  if (value === undefined || value.trim() === '') throw new UsageError(`--${name} is required`);
  return value.trim();
}

async function existingAccount(pool: Pool, id: string): Promise<string> {
  if (!(await findAccount(pool, id))) throw new UsageError(`no account ${id}`);
  return id;
}

/** A pg-boss producer for the one command that enqueues. */
async function withQueue<T>(databaseUrl: string, work: (boss: PgBoss) => Promise<T>): Promise<T> {
  const boss = createBoss(databaseUrl, 'producer', createLogger({ logLevel: 'warn' }, 'operator', 2));
  await boss.start();
  try {
    await ensureQueues(boss);
    return await work(boss);
  } finally {
    await boss.stop({ graceful: false });
  }
}

const isDay = (s: string) => /^\d{4}-\d{2}-\d{2}$/.test(s) && !Number.isNaN(Date.parse(`${s}T00:00:00Z`));

async function run(pool: Pool, databaseUrl: string, command: string, positionals: string[], values: Values): Promise<unknown> {
  switch (command) {
    case 'accounts create':
      return createAccount(pool, required(values, 'name'));
    case 'accounts list':
      return listAccounts(pool);
    case 'keys issue': {
      const mode = required(values, 'mode');
      if (mode !== 'test' && mode !== 'live') throw new UsageError('--mode must be test or live');
      const issued = await issueKey(pool, await existingAccount(pool, required(values, 'account')), mode);
      return { id: issued.id, object: issued.object, accountId: issued.accountId, label: issued.label, mode, createdAt: issued.createdAt, key: issued.key };
    }
    case 'keys list':
      return listKeys(pool, await existingAccount(pool, required(values, 'account')));
    case 'keys revoke': {
      const keyId = positionals[0];
      if (!keyId) throw new UsageError('keys revoke takes KEY_ID');
      const revoked = await revokeKey(pool, keyId);
      if (!revoked) throw new UsageError(`no key ${keyId}`);
      return revoked;
    }
    case 'members add': {
      const email = required(values, 'email').toLowerCase();
      if (!/^[^\s@]+@[^\s@]+\.[^\s@]+$/.test(email)) throw new UsageError('--email is not an email address');
      return addMember(pool, await existingAccount(pool, required(values, 'account')), email);
    }
    case 'people unlock': {
      const email = required(values, 'email');
      if (!(await unlockSignIn(pool, email))) throw new UsageError(`no person ${email}`);
      return { object: 'person', email: email.toLowerCase(), unlocked: true };
    }
    case 'members remove': {
      const email = required(values, 'email');
      const removed = await removeMember(pool, await existingAccount(pool, required(values, 'account')), email);
      if (!removed.removed) throw new UsageError(`${email} is not a member of that account`);
      return removed;
    }
    case 'usage': {
      for (const f of ['from', 'to'] as const) {
        if (values[f] !== undefined && !isDay(values[f]!)) throw new UsageError(`--${f} must be a date YYYY-MM-DD`);
      }
      return readUsage(pool, await existingAccount(pool, required(values, 'account')), { from: values.from, to: values.to });
    }
    case 'jobs list':
      return listFailedJobs(pool);
    case 'jobs retry': {
      const jobId = positionals[0];
      if (!jobId) throw new UsageError('jobs retry takes JOB_ID');
      return withQueue(databaseUrl, async (boss) => {
        try {
          const retried = await retryJob(pool, boss, jobId);
          if (!retried) throw new UsageError(`no failed or dead-lettered job ${jobId}`);
          return retried;
        } catch (error) {
          throw error instanceof NotRetryable ? new UsageError(error.message) : error;
        }
      });
    }
    case 'webhooks deliveries': {
      const limit = values.limit === undefined ? 20 : Number(values.limit);
      if (!Number.isInteger(limit) || limit < 1 || limit > 1000) throw new UsageError('--limit must be a whole number from 1 to 1000');
      return recentDeliveries(pool, { endpointId: values.endpoint, eventId: values.event, limit });
    }
    case 'webhooks redeliver': {
      const eventId = positionals[0];
      if (!eventId) throw new UsageError('webhooks redeliver takes EVT_ID');
      const event = await eventById(pool, eventId);
      if (!event) throw new UsageError(`no event ${eventId}`);
      const endpoints = values.endpoint === undefined ? await endpointsOfEvent(pool, eventId) : [values.endpoint];
      for (const id of endpoints) {
        const owner = await endpointOwner(pool, id);
        if (!owner || owner.deleted) throw new UsageError(`no webhook endpoint ${id}`);
        if (owner.accountId !== event.accountId || owner.mode !== event.mode) throw new UsageError(`${id} does not take ${eventId}: another account or mode`);
      }
      if (endpoints.length === 0) throw new UsageError(`${eventId} went to no endpoint: name one with --endpoint`);
      return withQueue(databaseUrl, async (boss) => ({
        eventId,
        deliveries: await Promise.all(endpoints.map(async (endpointId) => ({ endpointId, deliveryId: await redeliver(pool, boss, eventId, endpointId) }))),
      }));
    }
    default:
      throw new UsageError(`unknown command: ${command || '(none)'}\n${USAGE}`);
  }
}

async function main(): Promise<number> {
  let parsed;
  try {
    parsed = parseArgs({
      allowPositionals: true,
      tokens: true,
      options: {
        name: { type: 'string' },
        account: { type: 'string' },
        mode: { type: 'string' },
        email: { type: 'string' },
        from: { type: 'string' },
        to: { type: 'string' },
        endpoint: { type: 'string' },
        event: { type: 'string' },
        limit: { type: 'string' },
        help: { type: 'boolean', short: 'h' },
      },
    });
  } catch (error) {
    process.stderr.write(`operator: ${(error as Error).message}\n`);
    return 2;
  }
  // An option given twice is refused, never the last one silently taken (`--mode test --mode live`
  // must not issue a live key).
  const seen = new Set<string>();
  for (const token of parsed.tokens) {
    if (token.kind !== 'option') continue;
    if (seen.has(token.name)) {
      process.stderr.write(`operator: --${token.name} is given more than once; give it once\n`);
      return 2;
    }
    seen.add(token.name);
  }
  if (parsed.values.help) {
    process.stdout.write(`${JSON.stringify({ usage: USAGE })}\n`);
    return 0;
  }
  const [group = '', verb, ...rest] = parsed.positionals;
  const command = group === 'usage' ? 'usage' : `${group} ${verb ?? ''}`.trim();
  const positionals = group === 'usage' ? parsed.positionals.slice(1) : rest;

  let config;
  try {
    config = loadConfig();
  } catch (error) {
    process.stderr.write(`operator: ${(error as Error).message}\n`);
    return error instanceof ConfigError ? 2 : 1;
  }
  // Logs go to stderr so that stdout holds exactly one JSON document.
  const log = createLogger({ logLevel: 'warn' }, 'operator', 2);
  const database = await openDatabase(config, log);
  const pool = createPool(database.url, 2, 'dataset-service-operator');
  try {
    await migrate(pool);
    const result = await run(pool, database.url, command, positionals, parsed.values as Values);
    process.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
    return 0;
  } catch (error) {
    process.stderr.write(`operator: ${(error as Error).message.split('\n').join(' ')}\n`);
    return error instanceof UsageError ? 2 : 1;
  } finally {
    await pool.end();
    await database.stop();
  }
}

process.exitCode = await main();
