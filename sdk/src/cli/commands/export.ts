// `dsvc export DS -o PATH`: an export of the active version (or --version), built and saved.
import { type Command, Option } from 'commander';
import { action, findDataset } from '../context.ts';

export function exportCommand(root: Command): void {
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
}
