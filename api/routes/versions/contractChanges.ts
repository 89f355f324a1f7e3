// GET /v1/datasets/{id}/versions/{versionId}/changes/contracts: each contract change since another
// version, with the row before and after and the columns that differ, a page at a time; with
// `Accept: text/csv`, all of them as a CSV file, sent at the client's pace
// (../shared/spec/contract.md, "Reading and comparing versions").
import { z } from 'zod';
import { CONTRACT_FIELDS, type FieldName } from '../../../shared/contract/fields.ts';
import { allContractChanges, CONTRACT_CHANGES, type ChangeCursor, type ContractChange, ensureChanges, pageOfContractChanges } from '../../../shared/domain/versionChanges.ts';
import { csvLine } from '../../../shared/platform/csvLine.ts';
import { sendPaced } from '../../../shared/platform/pacedWrites.ts';
import { defineOperation } from '../../defineOperation.ts';
import { contractChangeExample, contractChangesCsvExample, list } from '../../examples.ts';
import { invalidCursor, listOf } from '../../schemas.ts';
import { SinceQuery, VersionPathParams, versionPair } from './changes.ts';

const FIELD_NAMES = CONTRACT_FIELDS.map((f) => f.name) as [FieldName, ...FieldName[]];
const RowSchema = z.object(Object.fromEntries(FIELD_NAMES.map((name) => [name, z.string().nullable()]))).meta({ id: 'ContractRow', description: 'A row as exported (JSONL): every column, absent values as null.' });

export const ContractChangeSchema = z
  .object({
    object: z.literal('contract_change'),
    change: z.enum(CONTRACT_CHANGES),
    contractId: z.string().nullable().meta({ description: 'Null for a row without one (matched by its whole content).' }),
    before: RowSchema.nullable().meta({ description: 'The row in the other version; null when added.' }),
    after: RowSchema.nullable().meta({ description: 'The row in this version; null when removed.' }),
    fields: z.array(z.enum(FIELD_NAMES)).meta({ description: 'The columns whose values differ: all seven for an added or removed row.' }),
  })
  .meta({ id: 'ContractChange' });

// The cursor is the position of the page's last change in the pair's order.
const encodeCursor = (c: ChangeCursor) => String(c.seq);
function decodeCursor(cursor: string): ChangeCursor {
  if (!/^[1-9]\d{0,14}$/.test(cursor)) throw invalidCursor();
  return { seq: Number(cursor) };
}

const render = (c: ContractChange) => ({ object: 'contract_change' as const, ...c });

/** The CSV: a header, then a record per change: its kind, the columns that differ, and the row after (before, for a removal). */
async function* changesCsv(pages: AsyncIterable<ContractChange[]>): AsyncGenerator<string> {
  yield csvLine(['change', 'fields', ...FIELD_NAMES]);
  for await (const page of pages) {
    yield page.map((c) => csvLine([c.change, c.fields.join(';'), ...FIELD_NAMES.map((name) => (c.after ?? c.before)![name] ?? '')])).join('');
  }
}

export default defineOperation({
  operationId: 'listContractChanges',
  method: 'get',
  path: '/v1/datasets/:id/versions/:versionId/changes/contracts',
  surface: 'v1',
  tags: ['Versions'],
  summary: 'List the contracts that changed since another version, or get them as CSV',
  description:
    'Each contract added, removed or changed since another version (`since`, as for GET …/changes), with its row before and after as exported and the columns that differ, ' +
    'ordered by contractId (as UTF-8 bytes), rows without one last; `change` keeps one kind. ' +
    'With `Accept: text/csv`, all of them (of the kind asked) as a CSV file: the columns `change` and `fields` (joined with `;`), then the contract\'s columns of the row after (before, for a removal); ' +
    'sent at the pace the client reads it, holding nothing shared meanwhile.',
  params: VersionPathParams,
  query: z.object({
    since: SinceQuery,
    change: z.enum(CONTRACT_CHANGES).optional().meta({ description: 'Only changes of this kind.' }),
    limit: z.coerce.number().int().min(1).max(100).default(20).meta({ description: 'Page size, 1 to 100.' }),
    cursor: z.string().min(1).max(100).optional().meta({ description: 'nextCursor of the previous page.' }),
  }),
  responses: {
    200: {
      description: 'A page of contract changes (application/json), or all of them (text/csv).',
      schema: listOf(ContractChangeSchema, 'ContractChangeList'),
      example: list(contractChangeExample),
      alternatives: { 'text/csv': { schema: z.string(), example: contractChangesCsvExample } },
    },
  },
  problems: ['not-found', 'bad-request'],
  async handle({ req, res, deps, params, query }) {
    const after = query.cursor === undefined ? undefined : decodeCursor(query.cursor);
    const pair = await versionPair(deps, res, params.id, params.versionId, query.since);
    await ensureChanges(deps.pool, pair, pair.version.rowCount ?? 0);
    if (req.accepts(['application/json', 'text/csv']) === 'text/csv') {
      res.status(200).attachment(`${pair.versionId}-changes-since-${pair.sinceVersionId}.csv`).type('text/csv; charset=utf-8');
      if (req.method === 'HEAD') return void res.end();
      await sendPaced(res, changesCsv(allContractChanges(deps.pool, pair, query.change)), deps.config.clientStallTimeoutMs);
      return;
    }
    const page = await pageOfContractChanges(deps.pool, pair, { change: query.change, limit: query.limit, after });
    res.json({ object: 'list', data: page.data.map(render), nextCursor: page.next ? encodeCursor(page.next) : null });
  },
});
