// Renders the problem catalogue (shared/platform/problems.ts) as application/problem+json, the last-resort
// error handler, and the human page behind each problem type URI.
import type { ErrorRequestHandler, Request, RequestHandler, Response } from 'express';
import { isDatabaseUnavailable } from '../shared/platform/db.ts';
import type { Logger } from '../shared/platform/log.ts';
import { escapeHtml } from './html.ts';
import { csvFormatHtml } from './csvFormat.ts';
import { badRequest, Problem, problemTypes, type ProblemType } from '../shared/platform/problems.ts';

export const PROBLEM_CONTENT_TYPE = 'application/problem+json';

export function problemDocument(problem: Problem, errorsBase: string, instance?: string): Record<string, unknown> {
  return {
    type: `${errorsBase}/${problem.type}`,
    title: problem.title,
    status: problem.status,
    detail: problem.detail,
    ...(instance === undefined ? {} : { instance }),
    ...problem.extensions,
  };
}

/**
 * Sends a problem. Filters (authentication, scope, idempotency) send theirs without `instance`;
 * endpoints pass the request path.
 */
export function sendProblem(res: Response, problem: Problem, errorsBase: string, instance?: string): void {
  res
    .status(problem.status)
    .set(problem.headers)
    .type(PROBLEM_CONTENT_TYPE)
    .send(JSON.stringify(problemDocument(problem, errorsBase, instance)));
}

export const requestPath = (req: Request) => req.originalUrl.split('?')[0]!;

/**
 * An error a library raised about the request itself (Express's undecodable path parameter, a
 * body parser's limits), marked with a 4xx `status`: the client's problem, never a 500.
 */
function clientErrorOf(error: unknown): Problem | undefined {
  const status = Number((error as { status?: unknown } | undefined)?.status);
  if (!(status >= 400 && status < 500)) return undefined;
  if (status === 413) return new Problem('payload-too-large', 'The request body is larger than this endpoint accepts.');
  if (status === 415) return new Problem('unsupported-media-type', 'The request body is in a type or encoding this endpoint does not take.');
  return badRequest('The request cannot be understood.', [{ field: '', code: 'malformed_request', message: 'The request cannot be understood.' }]);
}

/**
 * An error once the answer has started (a streamed list, a download): it cannot become a problem
 * document any more. The connection is ended, so the client sees the answer cut, and the error is
 * one JSON log line: a client that went away is routine (info), anything else an error.
 */
function answerCutShort(error: unknown, req: Request, res: Response, log: Logger): void {
  const code = (error as { code?: string } | undefined)?.code;
  const clientGone = req.destroyed || res.destroyed || code === 'ERR_STREAM_PREMATURE_CLOSE' || code === 'ECONNRESET';
  const entry = { reqId: res.getHeader('request-id'), path: requestPath(req), code };
  if (clientGone) log.info({ ...entry, reason: (error as Error)?.message }, 'answer cut short: the client went away');
  else log.error({ ...entry, err: error }, 'answer failed after it started');
  res.destroy();
}

export function errorHandler(errorsBase: string, log: Logger): ErrorRequestHandler {
  return (error, req, res, _next) => {
    if (res.headersSent) return answerCutShort(error, req, res, log);
    if (error instanceof Problem) return sendProblem(res, error, errorsBase, requestPath(req));
    const refused = clientErrorOf(error);
    if (refused) return sendProblem(res, refused, errorsBase, requestPath(req));
    if (isDatabaseUnavailable(error)) {
      log.warn({ err: error }, 'database unavailable');
      return sendProblem(
        res,
        new Problem('unavailable', 'The service cannot reach its database right now. Retry with the same Idempotency-Key.'),
        errorsBase,
        requestPath(req),
      );
    }
    log.error({ err: error }, 'unhandled error');
    sendProblem(
      res,
      new Problem('internal', 'The service failed while answering this request. Retrying with the same Idempotency-Key is safe.'),
      errorsBase,
      requestPath(req),
    );
  };
}

export const notFound = (): RequestHandler => (req) => {
  throw new Problem('not-found', `Nothing exists at ${requestPath(req)}.`);
};

export const methodNotAllowed =
  (allowed: string[]): RequestHandler =>
  (req) => {
    throw new Problem('method-not-allowed', `${requestPath(req)} does not take ${req.method}; it takes ${allowed.join(', ')}.`, {
      headers: { Allow: allowed.join(', ') },
    });
  };

/** GET {ERRORS_BASE}/{type}: a short page describing the problem type (its examples at this server's addresses). */
export function problemPage(baseUrl: string, errorsBase: string): RequestHandler {
  return (req, res, next) => {
    const type = req.params['type'] as string;
    if (!Object.hasOwn(problemTypes, type)) return next();
    const t = problemTypes[type as ProblemType];
    res
      .type('html')
      .set('Cache-Control', 'public, max-age=3600')
      .send(
        `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(t.title)}: ${escapeHtml(type)}</title>
<style>body{font:16px/1.5 system-ui,sans-serif;max-width:44rem;margin:2rem auto;padding:0 1rem;color:#1a1a1a}code{background:#f2f2f2;padding:.1em .3em;border-radius:3px}
table{border-collapse:collapse;width:100%;font-size:.9375rem}th,td{text-align:left;border-bottom:1px solid #ddd;padding:.35rem .4rem;vertical-align:top}pre{background:#f6f6f6;padding:.75rem;overflow:auto}</style>
</head><body><h1>${escapeHtml(type)}</h1>
<p><strong>Status ${t.status}, title “${escapeHtml(t.title)}”.</strong></p>
<p>${escapeHtml(t.description)}</p>
${type === 'ingest-validation-failed' ? csvFormatHtml(baseUrl, errorsBase) : ''}
<p>Problem documents are <code>application/problem+json</code> (RFC 9457). Branch on <code>type</code>; <code>detail</code> is prose for people and may change.</p>
<p><a href="./">All problem types</a></p></body></html>`,
      );
  };
}

export function problemIndex(): RequestHandler {
  return (_req, res) => {
    const items = Object.entries(problemTypes)
      .map(([type, t]) => `<li><a href="./${type}">${type}</a>: ${t.status} ${escapeHtml(t.title)}</li>`)
      .join('\n');
    res.type('html').send(
      `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Problem types</title>
<style>body{font:16px/1.5 system-ui,sans-serif;max-width:40rem;margin:2rem auto;padding:0 1rem}</style></head>
<body><h1>Problem types</h1><ul>${items}</ul></body></html>`,
    );
  };
}
