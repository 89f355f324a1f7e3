// `dsvc trigger EVENT`, in test mode only (as `stripe trigger`): creates what makes the event happen
// (a throwaway dataset named dsvc-trigger-…, a tiny file uploaded, an export) and names the event,
// so that a webhook endpoint or `dsvc listen` receives a real one.
import { Argument, type Command } from 'commander';
import { randomBytes } from 'node:crypto';
import type { DatasetService } from '../../client.ts';
import { IngestValidationError } from '../../errors.ts';
import type { Event } from '../../types.ts';
import { action, UsageError } from '../context.ts';

const HEADER = 'contractId,customer,product,startDate,endDate,amount,currency\n';
const GOOD_FILE = `${HEADER}T1,Trigger Ltd,Pro,2026-01-01,2026-12-31,1200.00,EUR\n`;
const BAD_FILE = `${HEADER}T1,Trigger Ltd,Pro,2026-01-01,2026-12-31,n/a,EUR\n`;

/** Each event's recipe: what it created (said to the person) and the id of the object the event reports. */
type Made = { done: string[]; objectId: string };
const RECIPES: Record<string, (service: DatasetService) => Promise<Made>> = {
  'dataset.created': async (service) => {
    const dataset = await throwaway(service);
    return { done: [`created dataset ${dataset.id} (${dataset.externalRef})`], objectId: dataset.id };
  },
  'dataset.deleted': async (service) => {
    const dataset = await throwaway(service);
    await service.datasets.delete(dataset.id);
    return { done: [`created dataset ${dataset.id} (${dataset.externalRef})`, `deleted it`], objectId: dataset.id };
  },
  'version.active': async (service) => {
    const dataset = await throwaway(service);
    const version = await service.versions.upload(dataset.id, { text: GOOD_FILE });
    return { done: [`created dataset ${dataset.id} (${dataset.externalRef})`, `uploaded a file of 1 row: version ${version.id} is ${version.status}`], objectId: version.id };
  },
  'version.failed': async (service) => {
    const dataset = await throwaway(service);
    const failure = await service.versions.upload(dataset.id, { text: BAD_FILE }).then(
      () => undefined,
      (error: unknown) => {
        if (error instanceof IngestValidationError && error.versionId) return error;
        throw error;
      },
    );
    if (!failure) throw new Error('the bad file was taken');
    return { done: [`created dataset ${dataset.id} (${dataset.externalRef})`, `uploaded a file with a bad amount: version ${failure.versionId} failed`], objectId: failure.versionId! };
  },
  'version.superseded': async (service) => {
    const dataset = await throwaway(service);
    const first = await service.versions.upload(dataset.id, { text: GOOD_FILE });
    const second = await service.versions.upload(dataset.id, { text: GOOD_FILE });
    return { done: [`created dataset ${dataset.id} (${dataset.externalRef})`, `uploaded version ${first.id}, then ${second.id}, which replaced it`], objectId: first.id };
  },
  'export.ready': async (service) => {
    const dataset = await throwaway(service);
    const version = await service.versions.upload(dataset.id, { text: GOOD_FILE });
    const requested = await service.exports.create(dataset.id, { format: 'csv' });
    const ready = await service.exports.wait(dataset.id, requested.id);
    return { done: [`created dataset ${dataset.id} (${dataset.externalRef})`, `uploaded version ${version.id}`, `exported it: export ${ready.id} is ${ready.status}`], objectId: ready.id };
  },
};

function throwaway(service: DatasetService) {
  return service.datasets.create({ externalRef: `dsvc-trigger-${randomBytes(4).toString('hex')}`, name: 'Made by dsvc trigger' });
}

/** The event that reports the object: written with the change itself, so already listed (a short wait covers a slow list). */
async function eventFor(service: DatasetService, type: string, objectId: string): Promise<Event | undefined> {
  for (let attempt = 0; attempt < 10; attempt++) {
    const page = await service.events.list({ type: type as Event['type'], limit: 20 });
    const found = page.data.find((e) => (e.data.object as { id?: string }).id === objectId);
    if (found) return found;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  return undefined;
}

export function triggerCommand(root: Command): void {
  root
    .command('trigger')
    .description('make an event happen in test mode, with throwaway objects (datasets named dsvc-trigger-…), to try a webhook endpoint or `dsvc listen`')
    .addArgument(new Argument('<event>', 'the event type').choices(Object.keys(RECIPES)))
    .action(
      action(async ({ service, mode, out }, type: string) => {
        if (mode !== 'test') throw new UsageError('trigger creates throwaway objects, so it runs in test mode only: use a test key (svc_test_…)');
        const made = await RECIPES[type]!(service);
        const event = await eventFor(service, type, made.objectId);
        out.result({ event: event ?? null, done: made.done }, () =>
          `Triggered ${type} (test mode):\n${made.done.map((line) => `  ${line}\n`).join('')}` +
          (event ? `Event ${event.id}: dsvc events get ${event.id}\n` : `Its event is not listed yet: dsvc events list --type ${type}\n`),
        );
      }),
    );
}
