// Response schemas shared by several operations (for the OpenAPI document).
import { z } from 'zod';
import { badRequest } from '../shared/platform/problems.ts';

export const ProblemSchema = z
  .object({
    type: z.string().meta({ description: 'URI of the problem type; branch on it.' }),
    title: z.string(),
    status: z.number().int(),
    detail: z.string().meta({ description: 'Prose for people; may be reworded; never match on it.' }),
    instance: z.string().optional().meta({ description: 'The request path; absent on answers of the filters.' }),
    errors: z
      .array(
        z.object({
          row: z.number().int().optional().meta({ description: 'ingest-validation-failed: the row, as a spreadsheet numbers it (the header is row 1).' }),
          field: z.string().meta({ description: 'The field (a column of the file, or * for the whole row; a request field or header for bad-request).' }),
          code: z.string().meta({ description: 'Stable: branch on it.' }),
          message: z.string(),
        }),
      )
      .optional()
      .meta({ description: 'bad-request: every problem found in the request. ingest-validation-failed: every problem of the file (a version object carries the first 100).' }),
    errorCount: z.number().int().optional().meta({ description: 'ingest-validation-failed, in a version object: how many errors there are in all.' }),
    errorsUrl: z.string().optional().meta({ description: 'ingest-validation-failed, in a version object: every error, paged, or the rejected rows as CSV.' }),
    versionId: z.string().optional().meta({ description: 'ingest-validation-failed, payload-too-large, internal of a version: the failed version.' }),
    existingId: z.string().optional().meta({ description: 'conflict: the resource that already exists.' }),
  })
  .meta({ id: 'Problem', description: 'RFC 9457 problem details (application/problem+json).' });

export const listOf = <T extends z.ZodType>(item: T, id: string) =>
  z
    .object({
      object: z.literal('list'),
      data: z.array(item),
      nextCursor: z.string().nullable().meta({ description: 'Pass as ?cursor= for the next page; null on the last.' }),
    })
    .meta({ id });

/** The 400 of a list asked for a page after a cursor it never gave. */
export const invalidCursor = () => badRequest('The cursor is not valid.', [{ field: 'cursor', code: 'invalid', message: 'Use nextCursor of a previous page.' }]);

export const PaginationQuery = z.object({
  limit: z.coerce.number().int().min(1).max(100).default(20).meta({ description: 'Page size, 1 to 100.' }),
  cursor: z.string().min(1).max(100).optional().meta({ description: 'nextCursor of the previous page.' }),
});

/** The query of a signed URL (uploads, export downloads); checked by shared/platform/signedUrls.ts. */
export const SignedUrlQuery = z.object({
  expires: z.string().optional().meta({ description: 'Unix seconds after which the URL no longer works.' }),
  signature: z.string().optional().meta({ description: 'HMAC-SHA256 over the path and expiry.' }),
});
