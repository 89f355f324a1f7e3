// `dsvc events [list]`, `dsvc events get EVT` and `dsvc listen`: the account's events (in the
// key's mode), read or forwarded as they happen.
import { type Command, Option } from 'commander';
import { once } from 'node:events';
import type { Event } from '../../types.ts';
import { action, EVENT_TYPES, eventTypes, UsageError, wholeNumber } from '../context.ts';
import { listen } from '../listen.ts';
import { fields, table } from '../output.ts';

const eventRow = (e: Event) => ({ id: e.id, type: e.type, object: (e.data.object as { id?: string }).id, createdAt: e.createdAt });

/** An event for people: its fields, then the object it reports as a GET showed it then. */
const eventText = (e: Event) =>
  `${fields({ id: e.id, type: e.type, mode: e.mode, createdAt: e.createdAt })}
data.object:
${fields(e.data.object as Record<string, unknown>)}`;

export function eventsCommands(root: Command): void {
  const events = root.command('events').description("the account's events, newest first (kept 30 days)");
  events
    .command('list', { isDefault: true })
    .description('the latest events (the default of `dsvc events`)')
    .addOption(new Option('--type <type>', 'only this type').choices(EVENT_TYPES))
    .addOption(new Option('--limit <n>', 'at most this many (default 20)').argParser(wholeNumber(1, 100)).default(20))
    .action(
      action(async ({ service, out, opts }) => {
        const o = opts<{ type?: (typeof EVENT_TYPES)[number]; limit: number }>();
        const page = await service.events.list({ limit: o.limit, ...(o.type && { type: o.type as never }) });
        out.result(page.data, (list: Event[]) => table(list.map(eventRow)));
      }),
    );
  events
    .command('get')
    .description('one event, with the object it reports')
    .argument('<event>', 'the event (evt_…)')
    .action(action(async ({ service, out }, id: string) => out.result(await service.events.get(id), eventText)));

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
}
