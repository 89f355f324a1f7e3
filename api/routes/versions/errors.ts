// GET /v1/datasets/{id}/versions/{versionId}/errors: every row error of a version, in row order,
// a page at a time; with `Accept: text/csv`, the rejected rows themselves as a CSV file to fix and
// upload again (../shared/spec/contract.md "Versions").
import { z } from 'zod';
import { REJECTED_FILE_DAYS, rejectedRowsFile } from '../../../shared/domain/rejectedRows.ts';
import { sendPaced } from '../../../shared/platform/pacedWrites.ts';
import { pageOfRowErrors } from '../../../shared/domain/versionErrors.ts';
import { findVersion, type VersionRecord, versionNotFound } from '../../../shared/domain/versions.ts';
import { Problem } from '../../../shared/platform/problems.ts';
import { defineOperation, type Deps } from '../../defineOperation.ts';
import { tenantOf } from '../../principal.ts';
import { invalidCursor, listOf, PaginationQuery } from '../../schemas.ts';
import { RowErrorSchema } from './render.ts';

const CSV_EXAMPLE =
  'rejectedRow,problems,contractId,customer,product,startDate,endDate,amount,currency\r\n' +
  '3,"startDate not_a_date: startDate ""2026-02-30"" is not a date YYYY-MM-DD.",C-1002,"Acme, Inc.",Support,2026-02-30,2027-02-28,1200.00,EUR\r\n' +
  '7,customer required: customer is required.,C-1006,,Licence,2026-01-01,2026-12-31,99.50,USD\r\n';

/** The file of a version's rejected rows, while it is kept; else why there is none. */
async function rejectedFile(deps: Deps, version: VersionRecord): Promise<string> {
  const file = await rejectedRowsFile(deps.pool, deps.blobs, version);
  if (file === 'none') throw new Problem('not-found', `Version ${version.id} has no rejected rows: only a version that failed validation has them.`);
  if (file === 'gone') {
    throw new Problem(
      'not-found',
      `The file of version ${version.id} is no longer kept (files of failed versions are kept ${REJECTED_FILE_DAYS} days), so its rejected rows cannot be given; its errors are still listed as JSON.`,
    );
  }
  return file;
}

export default defineOperation({
  operationId: 'listVersionErrors',
  method: 'get',
  path: '/v1/datasets/:id/versions/:versionId/errors',
  surface: 'v1',
  tags: ['Versions'],
  summary: "List a version's row errors, or get its rejected rows as CSV",
  description:
    'Every row error of the version in row order (then in the order found), a page at a time; an empty list for a version without errors. ' +
    'With `Accept: text/csv`, the rejected rows as a CSV file to fix in a spreadsheet and upload again: the columns `rejectedRow` (its row number) and `problems`, ' +
    "then the file's own header and each rejected row's cells as uploaded, with the file's delimiter (an upload ignores the two added columns). " +
    `The file of a failed version is kept ${REJECTED_FILE_DAYS} days for this; after that the CSV answers 404 while the JSON list stays. ` +
    'The rejected rows file is made once, when the build fails, and sent at the pace the client reads it, holding nothing shared meanwhile; ' +
    'a client that takes nothing of it for CLIENT_STALL_TIMEOUT_MS (60 s by default) has its connection closed.',
  params: z.object({ id: z.string().min(1).max(100), versionId: z.string().min(1).max(100) }),
  query: PaginationQuery,
  responses: {
    200: {
      description: 'A page of row errors (application/json), or the rejected rows (text/csv).',
      schema: listOf(RowErrorSchema, 'RowErrorList'),
      example: {
        object: 'list',
        data: [
          { row: 3, field: 'startDate', code: 'not_a_date', message: 'startDate "2026-02-30" is not a date YYYY-MM-DD.' },
          { row: 7, field: 'customer', code: 'required', message: 'customer is required.' },
        ],
        nextCursor: null,
      },
      alternatives: { 'text/csv': { schema: z.string(), example: CSV_EXAMPLE } },
    },
  },
  problems: ['not-found', 'bad-request'],
  async handle({ req, res, deps, params, query }) {
    const version = await findVersion(deps.pool, tenantOf(res), params.id, params.versionId);
    if (!version) throw versionNotFound(params.versionId);
    if (req.accepts(['application/json', 'text/csv']) === 'text/csv') {
      const file = await rejectedFile(deps, version);
      res.status(200).attachment(`${version.id}-rejected-rows.csv`).type('text/csv; charset=utf-8');
      if (req.method === 'HEAD') return void res.end();
      await sendPaced(res, deps.blobs.readInPages(file), deps.config.clientStallTimeoutMs);
      return;
    }
    const page = await pageOfRowErrors(deps.pool, version.id, query);
    if (page === 'bad-cursor') throw invalidCursor();
    res.json({ object: 'list', data: page.errors, nextCursor: page.nextCursor });
  },
});
