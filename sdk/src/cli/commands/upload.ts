// `dsvc upload FILE --dataset DS`: a contract file as a new version, with its progress, and its
// outcome: the version, or the row errors of a rejected file.
import { type Command, Option } from 'commander';
import { IngestValidationError } from '../../errors.ts';
import type { RowError, Version } from '../../types.ts';
import { action, EXIT, findDataset, Told } from '../context.ts';
import { table } from '../output.ts';

export const errorRow = (e: RowError) => ({ row: e.row, field: e.field, code: e.code, message: e.message });

export function uploadCommand(root: Command): void {
  root
    .command('upload')
    .description('upload a contract file (CSV) as a new version, with its progress, and wait for the outcome')
    .argument('<file>', 'the CSV file')
    .requiredOption('--dataset <dataset>', 'its id (ds_…) or externalRef')
    .option('--errors-csv <path>', 'when rows are rejected, save them here (with their row numbers and problems) to fix and upload again')
    .option('--no-wait', 'return once the version is queued')
    .addOption(new Option('--resumable', 'send through the resumable endpoint (default: from 32 MiB)').conflicts('direct'))
    .addOption(new Option('--direct', 'send in one request, however large'))
    .option('--idempotency-key <key>', 'the operation\'s key (default: a new one)')
    .action(
      action(async ({ service, out, opts }, file: string) => {
        const o = opts<{ dataset: string; errorsCsv?: string; wait: boolean; resumable?: boolean; direct?: boolean; idempotencyKey?: string }>();
        const dataset = await findDataset(service, o.dataset);
        const bars = out.bars();
        try {
          const version = await service.versions.upload(
            dataset.id,
            { path: file },
            {
              wait: o.wait,
              resumable: o.resumable ? true : o.direct ? false : 'auto',
              ...(o.idempotencyKey && { idempotencyKey: o.idempotencyKey }),
              ...(bars && {
                onProgress: (p) => (p.phase === 'uploading' ? bars.sent(p.bytesSent, p.bytesTotal) : bars.built(p.rowsProcessed, p.bytesProcessed, p.bytesTotal)),
              }),
            },
          );
          bars?.stop();
          out.result(version, (v: Version) =>
            v.status === 'active' || v.status === 'superseded'
              ? `Version ${v.id} is ${v.status}: ${v.rowCount} rows (${v.contributingRowCount} contributing).\n`
              : `Version ${v.id} is ${v.status}; follow it with: dsvc versions get ${dataset.id} ${v.id}\n`,
          );
        } catch (error) {
          bars?.stop();
          if (!(error instanceof IngestValidationError)) throw error;
          if (o.errorsCsv && error.versionId) await service.versions.downloadRejectedRows(dataset.id, error.versionId, o.errorsCsv);
          if (out.json) process.stderr.write(`${JSON.stringify(error.problem, null, 2)}\n`);
          else {
            const more = error.errorCount - error.errors.length;
            process.stdout.write(`The file was rejected: ${error.errorCount} row errors; nothing was written (version ${error.versionId}).\n\n`);
            process.stdout.write(table(error.errors.map(errorRow)));
            if (more > 0) process.stdout.write(`… and ${more} more: dsvc versions errors ${dataset.id} ${error.versionId} --all\n`);
            process.stdout.write(o.errorsCsv ? `\nThe rejected rows are in ${o.errorsCsv}: fix them and upload again.\n` : '\nSave the rejected rows to fix them with --errors-csv PATH.\n');
          }
          throw new Told(EXIT.rejected);
        }
      }),
    );
}
