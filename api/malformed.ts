// What a request that cannot be understood is, decided once: a path or query that is not valid
// percent-encoded UTF-8, or a NUL anywhere in a path, a query or a JSON string. Such a request is
// a 400 `bad-request` (never a 500: PostgreSQL refuses NUL in text and jsonb, and a retry of the
// same bytes could never succeed). Headers cannot carry a NUL: Node's parser refuses them.
import type { RequestHandler } from 'express';
import { badRequest, type FieldError } from '../shared/platform/problems.ts';

const NUL = '\u0000';

/** Decodes one percent-encoded component; undefined when it is not valid UTF-8. */
function decoded(component: string, plusIsSpace: boolean): string | undefined {
  try {
    return decodeURIComponent(plusIsSpace ? component.replaceAll('+', ' ') : component);
  } catch {
    return undefined;
  }
}

/** What is wrong with a request target (path and query), as field errors; empty when nothing. */
export function urlErrors(target: string): FieldError[] {
  const at = target.indexOf('?');
  const path = at === -1 ? target : target.slice(0, at);
  const errors: FieldError[] = [];
  const decodedPath = decoded(path, false);
  if (decodedPath === undefined) {
    errors.push({ field: 'path', code: 'malformed_url', message: 'The path is not valid percent-encoded UTF-8.' });
  } else if (decodedPath.includes(NUL)) {
    errors.push({ field: 'path', code: 'invalid_character', message: 'The path contains a NUL character (%00).' });
  }
  if (at === -1) return errors;
  for (const pair of target.slice(at + 1).split('&')) {
    const eq = pair.indexOf('=');
    const name = decoded(eq === -1 ? pair : pair.slice(0, eq), true);
    const value = eq === -1 ? '' : decoded(pair.slice(eq + 1), true);
    const field = name !== undefined && !name.includes(NUL) ? name : 'query';
    if (name === undefined || value === undefined) {
      errors.push({ field, code: 'malformed_url', message: 'The query string is not valid percent-encoded UTF-8.' });
    } else if (name.includes(NUL) || value.includes(NUL)) {
      errors.push({ field, code: 'invalid_character', message: 'The query string contains a NUL character (%00).' });
    }
  }
  return errors;
}

/** Refuses a request whose path or query cannot be understood, before anything reads them. */
export const refuseMalformedUrl = (): RequestHandler => (req, _res, next) => {
  const errors = urlErrors(req.originalUrl);
  next(errors.length === 0 ? undefined : badRequest('The request URL cannot be understood.', errors));
};

/**
 * Where a parsed JSON value holds a NUL in a string or a member name (`a.b.0`), or undefined.
 * Iterative: a body nested a million deep must not overflow the stack.
 */
export function nulIn(value: unknown): string | undefined {
  const stack: { value: unknown; path: string }[] = [{ value, path: '' }];
  const join = (path: string, key: string) => (path ? `${path}.${key}` : key);
  while (stack.length > 0) {
    const { value: v, path } = stack.pop()!;
    if (typeof v === 'string') {
      if (v.includes(NUL)) return path;
    } else if (Array.isArray(v)) {
      v.forEach((item, i) => stack.push({ value: item, path: join(path, String(i)) }));
    } else if (v !== null && typeof v === 'object') {
      for (const [key, item] of Object.entries(v)) {
        if (key.includes(NUL)) return path;
        stack.push({ value: item, path: join(path, key) });
      }
    }
  }
  return undefined;
}
