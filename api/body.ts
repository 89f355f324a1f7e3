// Reading request bodies: JSON only, bounded, parsed and validated with the operation's zod schema.
import type { Request } from 'express';
import type { z } from 'zod';
import { badRequest, type FieldError, Problem } from '../shared/platform/problems.ts';
import { nulIn } from './malformed.ts';

export const JSON_LIMIT_BYTES = 1024 * 1024;

const valueAt = (input: unknown, path: readonly PropertyKey[]): unknown =>
  path.reduce<unknown>((v, k) => (v !== null && typeof v === 'object' ? (v as Record<PropertyKey, unknown>)[k] : undefined), input);

/** zod issues as the {field, code, message} entries of a bad-request problem. */
export function fieldErrors(error: z.ZodError, input: unknown): FieldError[] {
  return error.issues.flatMap((issue): FieldError[] => {
    const field = issue.path.join('.');
    switch (issue.code) {
      case 'unrecognized_keys':
        return issue.keys.map((key) => ({
          field: field ? `${field}.${key}` : key,
          code: 'unknown_field',
          message: `${key} is not a field of this request.`,
        }));
      case 'invalid_type':
        return [
          issue.path.length > 0 && valueAt(input, issue.path) === undefined
            ? { field, code: 'required', message: `${field} is required.` }
            : { field, code: 'invalid_type', message: `${field} must be ${issue.expected}.` },
        ];
      case 'too_big':
        return [{ field, code: issue.origin === 'string' ? 'too_long' : 'too_big', message: `${field}: ${issue.message}` }];
      case 'too_small':
        return [{ field, code: issue.origin === 'string' ? 'too_short' : 'too_small', message: `${field}: ${issue.message}` }];
      default:
        return [{ field, code: 'invalid', message: `${field}: ${issue.message}` }];
    }
  });
}

export function parseOrThrow<S extends z.ZodType>(schema: S, input: unknown, what: string): z.output<S> {
  const result = schema.safeParse(input);
  if (!result.success) throw badRequest(`The ${what} is not valid.`, fieldErrors(result.error, input));
  return result.data;
}

/**
 * Reads and drops the body of a call that takes none (DELETE), so that its idempotency record
 * can fingerprint it and keep the answer; more than a JSON body's limit is 413.
 */
export async function discardBody(req: Request, limit = JSON_LIMIT_BYTES): Promise<void> {
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > limit) throw new Problem('payload-too-large', `This call takes no body; at most ${limit} bytes of one are read.`);
  }
}

export async function readJsonBody(req: Request, limit = JSON_LIMIT_BYTES): Promise<unknown> {
  if (!req.is('application/json')) {
    throw new Problem('unsupported-media-type', 'This endpoint takes a JSON body: send Content-Type: application/json.');
  }
  const declared = Number(req.get('content-length'));
  if (declared > limit) throw new Problem('payload-too-large', `A JSON body may be at most ${limit} bytes.`);
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > limit) throw new Problem('payload-too-large', `A JSON body may be at most ${limit} bytes.`);
    chunks.push(chunk);
  }
  const text = Buffer.concat(chunks).toString('utf8');
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw badRequest('The request body is not valid JSON.', [
      { field: '', code: 'malformed_json', message: (error as Error).message },
    ]);
  }
  const nulAt = nulIn(value);
  if (nulAt !== undefined) {
    throw badRequest('The request body is not valid.', [
      { field: nulAt, code: 'invalid_character', message: 'Strings may not contain a NUL character (\\u0000).' },
    ]);
  }
  return value;
}
