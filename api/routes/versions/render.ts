// The version object and its 422 problem document, as the API shows them.
import type { Response } from 'express';
import { z } from 'zod';
import { ROW_ERROR_CODES } from '../../../shared/contract/fields.ts';
import type { Config } from '../../../shared/platform/config.ts';
import type { Pool } from '../../../shared/platform/db.ts';
import { Problem, problemTypes, type ProblemType } from '../../../shared/platform/problems.ts';
import { ERRORS_IN_VERSION, writeVersionErrorsJson } from '../../../shared/domain/versionErrors.ts';
import { type VersionRecord, versionById } from '../../../shared/domain/versions.ts';
import { PROBLEM_CONTENT_TYPE } from '../../problemResponses.ts';
import { StreamedJson } from '../../streamedJson.ts';
import { ProblemSchema } from '../../schemas.ts';
import { validationProblemExample } from '../../examples.ts';

export const RowErrorSchema = z.object({
  row: z.number().int().meta({ description: 'Row number as a spreadsheet shows it; the header is row 1.' }),
  field: z.string().meta({ description: 'The column, or * for the whole row.' }),
  code: z.string().meta({ description: `Stable code: ${ROW_ERROR_CODES.map((c) => ('note' in c ? `${c.code} (${c.note})` : c.code)).join(', ')}.` }),
  message: z.string(),
});

export const VersionSchema = z
  .object({
    id: z.string(),
    object: z.literal('version'),
    datasetId: z.string(),
    status: z.enum(['queued', 'building', 'active', 'superseded', 'failed']),
    rowCount: z.number().int().nullable(),
    contributingRowCount: z.number().int().nullable(),
    progress: z.object({ rowsProcessed: z.number().int(), bytesProcessed: z.number().int(), bytesTotal: z.number().int().nullable() }),
    problem: ProblemSchema.nullable().meta({
      description:
        'The problem document when failed, else null: 422 ingest-validation-failed (row errors), 413 payload-too-large (the file needs more memory to build than a build may use) or 500 internal (every attempt failed). ' +
        `A 422 here carries at most the first ${ERRORS_IN_VERSION} row errors in \`errors\`, with \`errorCount\` (all of them) and \`errorsUrl\` (every error, paged, or the rejected rows as CSV).`,
      example: validationProblemExample,
    }),
    createdAt: z.string().meta({ format: 'date-time' }),
    completedAt: z.string().nullable().meta({ format: 'date-time' }),
    rowsPurgedAt: z.string().nullable().meta({
      format: 'date-time',
      description: 'When the rows of this superseded version were purged (VERSION_RETENTION_DAYS after it was superseded): it can no longer be exported, nor its customers and changes read; its metrics, catalog and cohorts still can.',
    }),
    replacedVersionId: z.string().nullable().meta({
      description:
        'The version that was active when this one became active, which it replaced: what GET …/versions/{versionId}/changes compares it with by default. Null for the first version of the dataset, and for a version that never became active.',
      example: 'ver_1q2w3e4r5t6y7u8i9o0p',
    }),
    columns: z
      .object({
        recognized: z.array(z.string()).meta({ description: "The contract's column names the header has." }),
        ignored: z.array(z.string()).meta({ description: "The header's other cells, as written." }),
        missing: z.array(z.string()).meta({ description: "The contract's columns the header lacks." }),
      })
      .nullable()
      .meta({ description: 'What the file\'s header held; null until a build read it.', example: { recognized: ['customer'], ignored: ['start', 'end', 'price', 'cur'], missing: ['contractId', 'product', 'startDate', 'endDate', 'amount', 'currency'] } }),
    warnings: z
      .array(
        z.object({
          code: z.enum(['column_missing', 'no_contributing_rows']),
          field: z.string().optional().meta({ description: 'The column, for column_missing.' }),
          message: z.string(),
        }),
      )
      .meta({
        description:
          'Not errors (the version builds): column_missing for each of startDate, endDate, amount and currency absent from the header, and no_contributing_rows when rows were stored and none contributes to the metrics.',
      }),
  })
  .meta({ id: 'Version' });

/**
 * The 422 answer of a failed version's creation (and its replay): every row error, streamed in
 * when the document is sent (see StreamedJson). Any other failure: its problem without errors.
 */
export function versionProblem(
  pool: Pool,
  version: VersionRecord,
  config: Pick<Config, 'errorsBase' | 'clientStallTimeoutMs'>,
  streamed: StreamedJson,
): Record<string, unknown> | null {
  const stored = version.problem;
  if (version.status !== 'failed' || !stored) return null;
  const t = problemTypes[stored.type];
  return {
    type: `${config.errorsBase}/${stored.type}`,
    title: t.title,
    status: t.status,
    detail: stored.detail,
    instance: version.requestPath,
    ...(stored.type === 'ingest-validation-failed' && { errors: streamed.array((sink) => writeVersionErrorsJson(pool, version.id, sink, config.clientStallTimeoutMs)) }),
    versionId: version.id,
  };
}

/**
 * A failed version's problem without row errors as something to throw: 413 when the file needs
 * more memory to build than a build may use, 500 when every attempt failed; `versionId` names it.
 */
export function problemOf(document: Record<string, unknown>): Problem {
  const { type, title: _title, status: _status, detail, instance: _instance, ...extensions } = document;
  const name = String(type).split('/').at(-1) as ProblemType;
  return new Problem(name, String(detail), { extensions });
}

export const hasValidationProblem = (version: VersionRecord) => version.status === 'failed' && version.problem?.type === 'ingest-validation-failed';

/**
 * Sends a failed version's 422 with every row error, streamed: the answer to the version's
 * creation (`beforeStreaming` runs once status and headers are set) and, rendered again from the
 * same stored rows, its idempotent replay.
 */
export async function sendValidationProblem(
  res: Response,
  pool: Pool,
  config: Pick<Config, 'baseUrl' | 'errorsBase' | 'clientStallTimeoutMs'>,
  version: VersionRecord,
  beforeStreaming?: () => Promise<void>,
): Promise<void> {
  if (!hasValidationProblem(version)) throw new Error(`version ${version.id} has no validation problem`);
  const streamed = new StreamedJson();
  const problem = versionProblem(pool, version, config, streamed);
  // The failed version, for a client that would rather read its first errors and errorCount than every error.
  res.status(422).type(PROBLEM_CONTENT_TYPE).location(`${config.baseUrl}/v1/datasets/${version.datasetId}/versions/${version.id}`);
  await beforeStreaming?.();
  await streamed.send(res, problem);
}

/** The replay of a version's 422 kept by reference (see keepStreamedAnswer). */
export async function replayValidationProblem(res: Response, pool: Pool, config: Pick<Config, 'baseUrl' | 'errorsBase' | 'clientStallTimeoutMs'>, versionId: string): Promise<void> {
  const version = await versionById(pool, versionId);
  if (!version) throw new Error(`version ${versionId} is gone`);
  await sendValidationProblem(res, pool, config, version);
}
