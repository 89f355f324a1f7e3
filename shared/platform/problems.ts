// The catalogue of problem types (RFC 9457). Every failure the service answers is one of these;
// api/problemResponses.ts renders them and serves each type's page under ERRORS_BASE.

export const problemTypes = {
  unauthorized: {
    status: 401,
    title: 'Unauthorized',
    description:
      'The request carried no credential, or one this service does not accept. Send an API key ' +
      '(svc_test_… or svc_live_…) or an OAuth access token (svc_oauth_…) as "Authorization: Bearer <credential>". ' +
      'A refresh token (svc_oauth_rt_…) is exchanged at /oauth/token, never sent to /v1. ' +
      'A revoked key answers exactly as a key that never existed.',
  },
  forbidden: {
    status: 403,
    title: 'Forbidden',
    description:
      'The credential is valid but lacks what the operation needs: service.write for every mutating call, ' +
      'service.read for reads. Also answered for an upload URL whose signature is wrong or expired, and (as the tus ' +
      'protocol prescribes) for a tus PATCH without Upload-Offset or with another Content-Type than application/offset+octet-stream.',
  },
  'not-found': {
    status: 404,
    title: 'Not found',
    description:
      'The resource does not exist for this credential\'s account and mode, or (metrics and catalog) the dataset ' +
      'has no active version yet. Read GET /v1/datasets/{id} to tell the two apart: a 404 there means the ' +
      'dataset is absent; an empty activeVersionId means nothing is servable yet. ' +
      'A read with ?versionId= (metrics, catalog, cohorts, customers) or a version\'s changes answer it too when the version named (or `since`) ' +
      'is not one of the dataset\'s versions that became active (active or superseded), when a version replaced none and no `since` is given, ' +
      'and, for customers and changes, once the version\'s rows were purged (VERSION_RETENTION_DAYS after it was superseded; its metrics, catalog and cohorts stay readable).',
  },
  'method-not-allowed': {
    status: 405,
    title: 'Method Not Allowed',
    description: 'The path exists but does not take this method. The Allow header lists the methods it takes.',
  },
  conflict: {
    status: 409,
    title: 'Conflict',
    description:
      'The request collides with an existing resource, most often an externalRef already used by a dataset of ' +
      'this account and mode (the existingId member names it). Do not retry: the existing resource is the answer. ' +
      'For uploads: the upload was already used by a version, or (tus) already has a resumable upload under way, or a ' +
      'PATCH came with an Upload-Offset other than the upload\'s offset (HEAD the upload URL to learn it).',
  },
  'payload-too-large': {
    status: 413,
    title: 'Payload Too Large',
    description:
      'The request body is larger than the endpoint accepts. Also the problem of a version whose file, though within the upload ' +
      'limit, needs more memory to build than a build may use: nothing was written, and the same file will fail the same way.',
  },
  'unsupported-media-type': {
    status: 415,
    title: 'Unsupported Media Type',
    description: 'The request body has a Content-Type the endpoint does not take.',
  },
  'bad-request': {
    status: 400,
    title: 'Bad Request',
    description:
      'The request is malformed: unparsable JSON, a body or query that fails its schema, a path or query that is not ' +
      'valid percent-encoded UTF-8, a NUL character in a path, a query or a JSON string, a malformed multipart body, or ' +
      'a malformed header. ' +
      'The errors member lists each problem as {field, code, message}. Fix the request; a changed body needs a new Idempotency-Key.',
  },
  'idempotency-key-required': {
    status: 400,
    title: 'Bad Request',
    description:
      'Every mutating /v1 call needs an Idempotency-Key header (for example a UUID, best derived from the operation). ' +
      'Nothing ran.',
  },
  'idempotency-key-reused': {
    status: 422,
    title: 'Unprocessable Entity',
    description:
      'This Idempotency-Key was used in the last 24 hours with a different request (method, path, content type or body). ' +
      'Nothing ran and the first request\'s outcome is kept. Use a new key for a different request.',
  },
  'ingest-validation-failed': {
    status: 422,
    title: 'Unprocessable Entity',
    description:
      'One or more rows of the uploaded file are invalid, so nothing was written. The errors member lists every ' +
      'problem as {row, field, code, message}, with rows numbered as a spreadsheet shows them (the header is row 1).',
  },
  gone: {
    status: 410,
    title: 'Gone',
    description:
      'A resumable (tus) upload that was not finished within 24 hours of requesting its upload has expired, with the ' +
      'bytes it received. Request a new upload (POST /v1/datasets/{id}/uploads) and send the file again.',
  },
  'precondition-failed': {
    status: 412,
    title: 'Precondition Failed',
    description:
      'A tus request without the Tus-Resumable header, or with a protocol version this service does not speak. ' +
      'Send Tus-Resumable: 1.0.0 (tus clients do).',
  },
  locked: {
    status: 423,
    title: 'Locked',
    description:
      'Another request is working on the same resumable upload and did not let go in time (it was asked to). ' +
      'Retry shortly: tus clients do so themselves.',
  },
  'not-implemented': {
    status: 501,
    title: 'Not Implemented',
    description:
      'The tus request needs a protocol extension this service does not offer (creation-defer-length or ' +
      'concatenation). Declare the upload\'s length when creating it, and send its parts in order.',
  },
  internal: {
    status: 500,
    title: 'Internal Server Error',
    description: 'The service failed. Nothing private is disclosed; retrying with the same Idempotency-Key is safe.',
  },
  unavailable: {
    status: 503,
    title: 'Service Unavailable',
    description:
      'The service cannot reach its database right now. Retry with the same Idempotency-Key: either the first ' +
      'attempt landed and its response returns, or a fresh run happens.',
  },
} as const satisfies Record<string, { status: number; title: string; description: string }>;

export type ProblemType = keyof typeof problemTypes;

export type ProblemOptions = {
  /** Extension members (RFC 9457 §3.2), e.g. errors or existingId. */
  extensions?: Record<string, unknown>;
  /** Extra response headers, e.g. Allow on a 405. */
  headers?: Record<string, string>;
};

/** A failure with a known problem type; thrown by domain code and routes, rendered by api/. */
export class Problem extends Error {
  readonly type: ProblemType;
  readonly status: number;
  readonly title: string;
  readonly detail: string;
  readonly extensions: Record<string, unknown>;
  readonly headers: Record<string, string>;

  constructor(type: ProblemType, detail: string, options: ProblemOptions = {}) {
    super(detail);
    this.name = 'Problem';
    this.type = type;
    this.status = problemTypes[type].status;
    this.title = problemTypes[type].title;
    this.detail = detail;
    this.extensions = options.extensions ?? {};
    this.headers = options.headers ?? {};
  }
}

export type FieldError = { field: string; code: string; message: string };

export function badRequest(detail: string, errors: FieldError[]): Problem {
  return new Problem('bad-request', detail, { extensions: { errors } });
}
