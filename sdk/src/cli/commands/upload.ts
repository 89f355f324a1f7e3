// `dsvc upload FILE --dataset DS`: a contract file as a new version, with its progress, and its
// outcome: the version with its warnings, or the row errors of a rejected file and how to mend it.
// A version replaces the dataset's data: what is uploaded must be the whole file, so a file of
// rejected rows (as `versions errors --csv` saves them) is refused before anything is sent.
import { type Command, Option } from 'commander';
import { open, stat } from 'node:fs/promises';
import { IngestValidationError } from '../../errors.ts';
import type { RowError, Version } from '../../types.ts';
import { action, EXIT, findDataset, Told, UsageError } from '../context.ts';
import { table } from '../output.ts';

export const errorRow = (e: RowError) => ({ row: e.row, field: e.field, code: e.code, message: e.message });

/** The outcome for people: the version, then anything that makes its figures smaller than expected. */
function versionText(v: Version, datasetId: string): string {
  if (v.status !== 'active' && v.status !== 'superseded') return `Version ${v.id} is ${v.status}; follow it with: dsvc versions get ${datasetId} ${v.id}\n`;
  const lines = [`Version ${v.id} is ${v.status}: ${v.rowCount} rows (${v.contributingRowCount} contributing).`];
  for (const w of v.warnings) lines.push(`Warning: ${w.message} (${w.code}${w.field ? `, ${w.field}` : ''})`);
  if (v.columns && v.columns.ignored.length > 0) lines.push(`Columns ignored: ${v.columns.ignored.join(', ')}`);
  if (lines.length > 1) lines.push(`The fields each column filled: dsvc catalog ${datasetId}`);
  return `${lines.join('\n')}\n`;
}

/** The rejected file's errors, where every error and the rejected rows are, and how to mend it. */
function rejectedText(error: IngestValidationError, datasetId: string, file: string, errorsCsv: string | undefined): string {
  const more = error.errorCount - error.errors.length;
  const versionId = error.versionId ?? 'VERSION';
  return (
    `The file was rejected: ${error.errorCount} row errors; nothing was written (version ${versionId}).\n\n` +
    table(error.errors.map(errorRow)) +
    (more > 0 ? `… and ${more} more.\n` : '') +
    `\nEvery error:       dsvc versions errors ${datasetId} ${versionId} --all\n` +
    (errorsCsv
      ? `The rejected rows: saved in ${errorsCsv} (with their row numbers and problems), to find them in your file.\n`
      : `The rejected rows: dsvc versions errors ${datasetId} ${versionId} --csv rejected.csv\n`) +
    `\nFix these rows in ${file} itself and upload the whole file again: a version replaces all of the dataset's data,\n` +
    `it does not add to it, so uploading only the fixed rows would leave the dataset with those rows alone.\n`
  );
}

/** Refuses what cannot be a contract file before anything is sent: a missing file, a folder, a file of rejected rows. */
async function checkFile(file: string): Promise<void> {
  const found = await stat(file).catch(() => undefined);
  if (!found) throw new UsageError(`${file}: no such file`);
  if (!found.isFile()) throw new UsageError(`${file} is not a file`);
  const handle = await open(file);
  try {
    const { buffer, bytesRead } = await handle.read(Buffer.alloc(4096), 0, 4096, 0);
    const header = buffer.subarray(0, bytesRead).toString('utf8').replace(/^\uFEFF/, '').split(/\r?\n/)[0]!;
    const [first, second] = header.split(/[,;\t]/).map((cell) => cell.trim().replace(/^"|"$/g, '').toLowerCase());
    if (first === 'rejectedrow' && second === 'problems') {
      throw new UsageError(
        `${file} holds rejected rows only (as \`dsvc versions errors --csv\` saves them). A version replaces all of the dataset's data: ` +
          'fix those rows in your whole file and upload that.',
      );
    }
  } finally {
    await handle.close();
  }
}

export function uploadCommand(root: Command): void {
  root
    .command('upload')
    .description('upload a contract file (CSV) as a new version, with its progress, and wait for the outcome; the version replaces the dataset\'s data')
    .argument('<file>', 'the CSV file: the whole of the data, not only what changed')
    .requiredOption('--dataset <dataset>', 'its id (ds_…) or externalRef')
    .option('--errors-csv <path>', 'when rows are rejected, save them here (with their row numbers and problems) to find them in your file')
    .option('--no-wait', 'return once the version is queued')
    .addOption(new Option('--resumable', 'send through the resumable endpoint (default: from 32 MiB)').conflicts('direct'))
    .addOption(new Option('--direct', 'send in one request, however large'))
    .option('--idempotency-key <key>', 'the operation\'s key, to repeat it safely from a script (default: a new one for each run)')
    .action(
      action(async ({ service, out, opts }, file: string) => {
        const o = opts<{ dataset: string; errorsCsv?: string; wait: boolean; resumable?: boolean; direct?: boolean; idempotencyKey?: string }>();
        await checkFile(file);
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
          out.result(version, (v: Version) => versionText(v, dataset.id));
        } catch (error) {
          bars?.stop();
          if (!(error instanceof IngestValidationError)) throw error;
          if (o.errorsCsv && error.versionId) await service.versions.downloadRejectedRows(dataset.id, error.versionId, o.errorsCsv);
          if (out.json) process.stderr.write(`${JSON.stringify(error.problem, null, 2)}\n`);
          else process.stdout.write(rejectedText(error, dataset.id, file, o.errorsCsv));
          throw new Told(EXIT.rejected);
        }
      }),
    );
}
