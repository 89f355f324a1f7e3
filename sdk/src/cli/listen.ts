// `dsvc listen --forward-to URL`: the account's events, as they happen, POSTed to a local URL and
// signed as the service signs its webhooks (Standard Webhooks) with a secret made for this run,
// as `stripe listen` does. Events come from GET /v1/events, polled; only events newer than the
// start are forwarded, each once, oldest first.
import { randomBytes } from 'node:crypto';
import type { DatasetService } from '../client.ts';
import { sleep } from '../transport.ts';
import type { Event } from '../types.ts';
import { signWebhook } from '../webhooks.ts';

export type ListenOptions = {
  forwardTo: string;
  events: string[] | undefined;
  intervalMs: number;
  say: (line: string) => void;
  /** Resolves when listening should stop (Ctrl-C). */
  stopped: Promise<void>;
};

export async function listen(service: DatasetService, options: ListenOptions): Promise<void> {
  const secret = `whsec_${randomBytes(32).toString('base64')}`;
  let newest = (await service.events.list({ limit: 1 })).data[0]?.id;
  options.say(`Ready! Forwarding events to ${options.forwardTo}. Their signing secret is ${secret} (Ctrl-C to stop)`);
  let stopping = false;
  void options.stopped.then(() => (stopping = true));
  while (!stopping) {
    const fresh: Event[] = [];
    try {
      for await (const event of service.events.listAll({ limit: 100 })) {
        if (event.id === newest) break;
        fresh.push(event);
      }
    } catch (error) {
      options.say(`${time()}  could not read events: ${(error as Error).message}`);
    }
    if (fresh.length > 0) newest = fresh[0]!.id;
    for (const event of fresh.reverse()) {
      if (options.events && !options.events.includes(event.type)) continue;
      options.say(`${time()}  --> ${event.type} [${event.id}]`);
      options.say(`${time()}  <-- ${await forward(options.forwardTo, secret, event)}`);
    }
    await Promise.race([sleep(options.intervalMs), options.stopped]);
  }
}

async function forward(url: string, secret: string, event: Event): Promise<string> {
  const body = JSON.stringify(event);
  try {
    const answer = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...signWebhook(secret, event.id, body) },
      body,
      redirect: 'manual',
      signal: AbortSignal.timeout(10_000),
    });
    await answer.body?.cancel();
    return `[${answer.status}] POST ${url}`;
  } catch (error) {
    return `[failed] POST ${url}: ${(error as Error).message}`;
  }
}

const time = () => new Date().toISOString().replace('T', ' ').slice(0, 19);
