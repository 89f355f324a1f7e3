// `dsvc datasets list|create|get|delete`.
import { type Command, Option } from 'commander';
import { ConflictError } from '../../errors.ts';
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
}
