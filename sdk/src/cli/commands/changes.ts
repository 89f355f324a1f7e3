// `dsvc changes VERSION`: what changed since the version it replaced (or --since another): the
// contracts added, removed, changed and unchanged, and the restated months; --contracts lists
// the contracts that changed, with what changed in each.
import { type Command, Option } from 'commander';
import { NotFoundError } from '../../errors.ts';
import type { DatasetService } from '../../client.ts';
import type { ContractChange, ContractChangeKind, Dataset, VersionChanges } from '../../types.ts';
import { action, findDataset, wholeNumber } from '../context.ts';
import { table } from '../output.ts';

const KINDS: ContractChangeKind[] = ['added', 'removed', 'changed'];

/** The dataset of a version: the one named, else the first of the caller's datasets that has it. */
async function datasetOf(service: DatasetService, versionId: string, ref: string | undefined): Promise<Dataset> {
  if (ref) return findDataset(service, ref);
  for await (const dataset of service.datasets.listAll({ limit: 100 })) {
    try {
      await service.versions.get(dataset.id, versionId);
      return dataset;
    } catch (error) {
      if (!(error instanceof NotFoundError)) throw error;
    }
  }
  throw new NotFoundError({ type: 'not-found', title: 'Not found', status: 404, detail: `No dataset of this key has a version ${versionId}.` });
}

function changesText(c: VersionChanges): string {
  const { added, removed, changed, unchanged } = c.contracts;
  const months = c.months.map((m) => ({
    currency: m.currency,
    month: m.month,
    mrrBefore: m.before.mrr,
    mrrAfter: m.after.mrr,
    mrrChange: m.mrrChange,
    customersBefore: m.before.activeCustomers,
    customersAfter: m.after.activeCustomers,
  }));
  return (
    `version    ${c.versionId}\nsince      ${c.sinceVersionId}\ncontracts  ${added} added, ${removed} removed, ${changed} changed, ${unchanged} unchanged\n` +
    `\nrestated months (month ends whose MRR or active customers differ):\n${table(months)}`
  );
}

/** What a change is, in a few words: the values that differ, or the row added or removed. */
function whatChanged(c: ContractChange): string {
  if (c.change === 'changed') return c.fields.map((f) => `${f} ${c.before![f] ?? '-'} → ${c.after![f] ?? '-'}`).join('; ');
  const r = (c.after ?? c.before)!;
  return `${r['product'] ?? '-'} ${r['startDate'] ?? '?'}..${r['endDate'] ?? '?'} ${r['amount'] ?? '-'} ${r['currency'] ?? ''}`.trim();
}

const changeRow = (c: ContractChange) => ({ change: c.change, contractId: c.contractId, customer: (c.after ?? c.before)!['customer'], what: whatChanged(c) });

export function changesCommand(root: Command): void {
  root
    .command('changes')
    .description('what changed in a version since the one it replaced: contracts added, removed, changed, and the restated months (--contracts: each contract that changed)')
    .argument('<version>', 'the version (ver_…)')
    .option('--dataset <dataset>', "the version's dataset, its id (ds_…) or externalRef (default: found among yours)")
    .option('--since <version>', 'compare with this version instead (one of the dataset that was active)')
    .option('--contracts', 'list the contracts that changed, with what changed in each')
    .addOption(new Option('--change <kind>', 'with --contracts: only this kind').choices(KINDS))
    .addOption(new Option('--limit <n>', 'with --contracts: at most this many (default 100)').argParser(wholeNumber(1, 100)).default(100))
    .option('--all', 'with --contracts: every one, however many')
    .action(
      action(async ({ service, out, opts }, versionId: string) => {
        const o = opts<{ dataset?: string; since?: string; contracts?: boolean; change?: ContractChangeKind; limit: number; all?: boolean }>();
        const dataset = await datasetOf(service, versionId, o.dataset);
        const since = o.since ? { since: o.since } : {};
        if (!o.contracts) return out.result(await service.versions.changes(dataset.id, versionId, since), changesText);
        const params = { ...since, ...(o.change && { change: o.change }) };
        let list: ContractChange[] = [];
        let more = false;
        if (o.all) {
          for await (const c of service.versions.contractChangesAll(dataset.id, versionId, params)) list.push(c);
        } else {
          const page = await service.versions.contractChanges(dataset.id, versionId, { ...params, limit: o.limit });
          list = page.data;
          more = page.nextCursor !== null;
        }
        out.result(list, (changes: ContractChange[]) => table(changes.map(changeRow)));
        if (more) out.note(`More changes than these ${list.length}: --all lists every one.`);
      }),
    );
}
