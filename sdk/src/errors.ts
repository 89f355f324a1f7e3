// What can go wrong, as classes a program branches on with instanceof. Every answer of the service
// that is not a success is a problem document (RFC 9457); its type's last path segment (its slug,
// e.g. "not-found") picks the class, so code never compares type URIs or reads prose.
import type { RowError } from './types.ts';

/** A problem document as the service sends it. */
export type ProblemDocument = {
  type: string;
  title: string;
  status: number;
  detail: string;
  instance?: string;
  [member: string]: unknown;
};

/** The slug of every problem type the service documents (its page is the type URI). */
export const PROBLEM_TYPES = [
  'unauthorized',
  'forbidden',
  'not-found',
  'method-not-allowed',
  'conflict',
  'payload-too-large',
  'unsupported-media-type',
  'bad-request',
  'idempotency-key-required',
  'idempotency-key-reused',
  'ingest-validation-failed',
  'gone',
  'precondition-failed',
  'locked',
  'not-implemented',
  'internal',
  'unavailable',
] as const;
export type ProblemTypeSlug = (typeof PROBLEM_TYPES)[number];

/** Everything this SDK throws extends this. */
export class DatasetServiceError extends Error {
  override name = 'DatasetServiceError';
}

/** The service answered with a problem document. */
export class ApiError extends DatasetServiceError {
  override name = 'ApiError';
  /** The problem type's slug, e.g. "not-found": branch on it (or on the class). */
  readonly type: string;
  /** The problem type's URI: a page that explains it. */
  readonly typeUri: string;
  readonly status: number;
  readonly title: string;
  readonly detail: string;
  /** The whole problem document, extension members included. */
  readonly problem: ProblemDocument;
  /** The request's id in the service's logs (quote it when asking for help). */
  readonly requestId: string | undefined;

  constructor(problem: ProblemDocument, requestId?: string) {
    super(`${problem.title}: ${problem.detail}`);
    this.problem = problem;
    this.typeUri = problem.type;
    this.type = problemSlug(problem.type);
    this.status = problem.status;
    this.title = problem.title;
    this.detail = problem.detail;
    this.requestId = requestId;
  }
}

/** 400: the request is malformed; `errors` lists each problem. Fix it; a changed body needs a new key. */
export class BadRequestError extends ApiError {
  override name = 'BadRequestError';
  get errors(): { field: string; code: string; message: string }[] {
    return (this.problem['errors'] as BadRequestError['errors'] | undefined) ?? [];
  }
}

/** 400 or 422: the Idempotency-Key was missing, or used before with a different request. */
export class IdempotencyError extends ApiError {
  override name = 'IdempotencyError';
}

/** 401: no credential, or one the service does not accept. */
export class AuthenticationError extends ApiError {
  override name = 'AuthenticationError';
}

/** 403: the credential lacks the scope this operation needs. */
export class PermissionError extends ApiError {
  override name = 'PermissionError';
}

/** 404: no such resource for this credential's account and mode (or nothing servable yet). */
export class NotFoundError extends ApiError {
  override name = 'NotFoundError';
}

/** 409: the request collides with an existing resource; `existingId` names it. Do not retry. */
export class ConflictError extends ApiError {
  override name = 'ConflictError';
  get existingId(): string | undefined {
    return this.problem['existingId'] as string | undefined;
  }
}

/** 413: the file is larger than the service takes, or needs more memory to build than a build may use. */
export class PayloadTooLargeError extends ApiError {
  override name = 'PayloadTooLargeError';
  get versionId(): string | undefined {
    return this.problem['versionId'] as string | undefined;
  }
}

/**
 * 422 ingest-validation-failed: rows of the file are invalid and nothing was written. `errors`
 * holds the first ones (up to 100), `errorCount` how many there are in all; read every one with
 * `client.versions.listAllErrors(datasetId, versionId)`, or the rejected rows as CSV.
 */
export class IngestValidationError extends ApiError {
  override name = 'IngestValidationError';
  get errors(): RowError[] {
    return (this.problem['errors'] as RowError[] | undefined) ?? [];
  }
  get errorCount(): number {
    return (this.problem['errorCount'] as number | undefined) ?? this.errors.length;
  }
  get versionId(): string | undefined {
    return this.problem['versionId'] as string | undefined;
  }
  get errorsUrl(): string | undefined {
    return this.problem['errorsUrl'] as string | undefined;
  }
}

/** 500: the service failed. Retrying with the same Idempotency-Key is safe. */
export class InternalServerError extends ApiError {
  override name = 'InternalServerError';
}

/** 502 or 503 after every retry: the service could not be reached or could not reach its database. */
export class ServiceUnavailableError extends ApiError {
  override name = 'ServiceUnavailableError';
}

/** The connection failed or dropped before an answer came, after every retry. */
export class ConnectionError extends DatasetServiceError {
  override name = 'ConnectionError';
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
  }
}

/** No answer came within the client's timeout, after every retry. */
export class TimeoutError extends ConnectionError {
  override name = 'TimeoutError';
}

/** A wait (for a version or an export) ran past its limit; the resource is still being built. */
export class WaitTimeoutError extends DatasetServiceError {
  override name = 'WaitTimeoutError';
  readonly resource: unknown;
  constructor(message: string, resource: unknown) {
    super(message);
    this.resource = resource;
  }
}

/** An export's build failed; `failure` says why. */
export class ExportFailedError extends DatasetServiceError {
  override name = 'ExportFailedError';
  readonly exportId: string;
  constructor(exportId: string, failure: string | null) {
    super(`export ${exportId} failed: ${failure ?? 'no reason given'}`);
    this.exportId = exportId;
  }
}

/** A webhook delivery whose signature or timestamp does not verify with the endpoint's secret. */
export class WebhookSignatureError extends DatasetServiceError {
  override name = 'WebhookSignatureError';
}

/** The last path segment of a problem type URI. */
export function problemSlug(typeUri: string): string {
  return typeUri.slice(typeUri.lastIndexOf('/') + 1);
}

/** The error class for a problem document. */
export function errorFromProblem(problem: ProblemDocument, requestId?: string): ApiError {
  switch (problemSlug(problem.type)) {
    case 'bad-request':
      return new BadRequestError(problem, requestId);
    case 'idempotency-key-required':
    case 'idempotency-key-reused':
      return new IdempotencyError(problem, requestId);
    case 'unauthorized':
      return new AuthenticationError(problem, requestId);
    case 'forbidden':
      return new PermissionError(problem, requestId);
    case 'not-found':
      return new NotFoundError(problem, requestId);
    case 'conflict':
      return new ConflictError(problem, requestId);
    case 'payload-too-large':
      return new PayloadTooLargeError(problem, requestId);
    case 'ingest-validation-failed':
      return new IngestValidationError(problem, requestId);
    case 'internal':
      return new InternalServerError(problem, requestId);
    case 'unavailable':
      return new ServiceUnavailableError(problem, requestId);
    default:
      return problem.status === 502 || problem.status === 503 ? new ServiceUnavailableError(problem, requestId) : new ApiError(problem, requestId);
  }
}
