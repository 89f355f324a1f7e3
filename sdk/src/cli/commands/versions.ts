// `dsvc versions list|get|errors`: a dataset's versions, and a failed one's row errors.
import type { Command } from 'commander';
import type { RowError, Version } from '../../types.ts';
import { action, findDataset } from '../context.ts';
import { table } from '../output.ts';
import { errorRow } from './upload.ts';

const versionRow = (v: Version) => ({ id: v.id, status: v.status, rowCount: v.rowCount, contributingRowCount: v.contributingRowCount, createdAt: v.createdAt });

export function versionsCommands(root: Command): void {
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
}
