// `dsvc datasets list|create|get|delete`. Each create or delete is its own operation: the SDK
// makes its Idempotency-Key for this run and reuses it only for its own retries, so a create after
// a delete creates, and a second create of an externalRef is the API's 409 naming the dataset.
import { type Command, Option } from 'commander';
import type { Dataset } from '../../types.ts';
import { action, findDataset, UsageError, wholeNumber } from '../context.ts';
import { table } from '../output.ts';

const datasetRow = (d: Dataset) => ({ id: d.id, externalRef: d.externalRef, name: d.name, activeVersionId: d.activeVersionId, createdAt: d.createdAt });

export function datasetsCommands(root: Command): void {
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
    .option('--idempotency-key <key>', 'the operation\'s key, to repeat it safely from a script (default: a new one for each run)')
    .action(
      action(async ({ service, out, opts }) => {
        const o = opts<{ externalRef: string; name: string; idempotencyKey?: string }>();
        // A taken externalRef is a ConflictError naming the existing dataset (main.ts says so).
        out.result(await service.datasets.create({ externalRef: o.externalRef, name: o.name }, { ...(o.idempotencyKey && { idempotencyKey: o.idempotencyKey }) }));
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
        out.result(await service.datasets.delete(dataset.id));
      }),
    );
}
