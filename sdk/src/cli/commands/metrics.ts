// `dsvc metrics` and `dsvc catalog`: what is computed from the active version.
import { type Command, Option } from 'commander';
import type { Catalog, Metrics } from '../../types.ts';
import { action, findDataset, month } from '../context.ts';
import { table } from '../output.ts';

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

export function metricsCommands(root: Command): void {
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
}
