// One request to the service, as the spec's retry table says: an Idempotency-Key on every mutating
// call, generated once per logical operation and sent again on each retry; retries (with growing,
// jittered delays) on a timeout, a dropped connection, 502 and 503 only, never on another answer;
// every other failure thrown as the error class of its problem type.
import { randomUUID } from 'node:crypto';
import { ConnectionError, DatasetServiceError, errorFromProblem, type ProblemDocument, TimeoutError } from './errors.ts';

export const SDK_VERSION = '0.1.0';

export type ClientOptions = {
  /** An API key (svc_test_…, svc_live_…) or an OAuth access token (svc_oauth_…). */
  apiKey: string;
  /** Where the service is. Default: http://localhost:3000. */
  baseUrl?: string;
  /** How many times a request is retried after a timeout, a dropped connection, 502 or 503. Default 2. */
  maxRetries?: number;
  /** How long one attempt of a JSON call may take before it counts as a timeout. Default 60 s. */
  timeoutMs?: number;
  /** The fetch to use (default: the global one). */
  fetch?: typeof fetch;
};

/** A body sent as is: made anew for each attempt when it can be (a file is opened again). */
export type RawBody = {
  contentType: string;
  open: () => NonNullable<RequestInit['body']>;
  /** False for a stream the caller handed over: it is sent once and never retried. */
  replayable: boolean;
};

export type RequestSpec = {
  method: 'GET' | 'POST' | 'PATCH' | 'DELETE';
  path: string;
  query?: Record<string, string | number | undefined>;
  json?: unknown;
  raw?: RawBody;
  headers?: Record<string, string>;
  /** For a mutating call: the operation's key (default: a new UUID, kept across the retries). */
  idempotencyKey?: string;
  /** This request's limit per attempt; null for none (a file upload: the socket's own limits apply). */
  timeoutMs?: number | null;
  /** Failure statuses handed back to the caller (its body unread) rather than thrown. */
  passStatuses?: number[];
};

const RETRYABLE_STATUSES = new Set([502, 503]);

export class Transport {
  readonly baseUrl: string;
  private readonly apiKey: string;
  private readonly maxRetries: number;
  private readonly timeoutMs: number;
  private readonly fetch: typeof fetch;

  constructor(options: ClientOptions) {
    if (!options.apiKey) throw new DatasetServiceError('an apiKey is needed (svc_test_…, svc_live_… or svc_oauth_…)');
    this.apiKey = options.apiKey;
    this.baseUrl = (options.baseUrl ?? 'http://localhost:3000').replace(/\/+$/, '');
    this.maxRetries = options.maxRetries ?? 2;
    this.timeoutMs = options.timeoutMs ?? 60_000;
    this.fetch = options.fetch ?? globalThis.fetch;
  }

  /** Sends the request and parses its JSON answer. */
  async json<T>(spec: RequestSpec): Promise<T> {
    const response = await this.send(spec);
    return (await response.json()) as T;
  }

  /** Sends the request; the successful answer's body is left to the caller to read (a download). */
  async send(spec: RequestSpec): Promise<Response> {
    const mutating = spec.method !== 'GET';
    const idempotencyKey = mutating ? (spec.idempotencyKey ?? randomUUID()) : undefined;
    for (let attempt = 0; ; attempt++) {
      const canRetry = attempt < this.maxRetries && (spec.raw?.replayable ?? true);
      let response: Response;
      try {
        response = await this.attempt(spec, idempotencyKey);
      } catch (error) {
        const failure = asConnectionFailure(error, this.baseUrl);
        if (!canRetry) throw failure;
        await sleep(backoff(attempt));
        continue;
      }
      if (response.ok || spec.passStatuses?.includes(response.status)) return response;
      if (RETRYABLE_STATUSES.has(response.status) && canRetry) {
        await response.body?.cancel();
        await sleep(retryAfter(response) ?? backoff(attempt));
        continue;
      }
      throw errorFromProblem(await problemOf(response), response.headers.get('request-id') ?? undefined);
    }
  }

  private async attempt(spec: RequestSpec, idempotencyKey: string | undefined): Promise<Response> {
    const url = new URL(this.baseUrl + spec.path);
    for (const [name, value] of Object.entries(spec.query ?? {})) if (value !== undefined) url.searchParams.set(name, String(value));
    const headers: Record<string, string> = {
      authorization: `Bearer ${this.apiKey}`,
      accept: 'application/json',
      'user-agent': `dataset-service-sdk/${SDK_VERSION} node/${process.versions.node}`,
      ...spec.headers,
    };
    if (idempotencyKey) headers['idempotency-key'] = idempotencyKey;
    let body: RequestInit['body'];
    if (spec.json !== undefined) {
      headers['content-type'] = 'application/json';
      body = JSON.stringify(spec.json);
    } else if (spec.raw) {
      headers['content-type'] = spec.raw.contentType;
      body = spec.raw.open();
    }
    const limit = spec.timeoutMs === undefined ? this.timeoutMs : spec.timeoutMs;
    const init: RequestInit & { duplex?: 'half' } = { method: spec.method, headers };
    if (body !== undefined) init.body = body;
    if (body instanceof ReadableStream) init.duplex = 'half';
    if (limit !== null) init.signal = AbortSignal.timeout(limit);
    return this.fetch(url, init);
  }
}

/** A failure before any answer, named by the service's address (what a person checks first). */
function asConnectionFailure(error: unknown, baseUrl: string): ConnectionError {
  if (error instanceof DOMException && (error.name === 'TimeoutError' || error.name === 'AbortError')) {
    return new TimeoutError(`no answer from the service at ${baseUrl} in time`, { cause: error });
  }
  if (error instanceof TypeError) {
    const cause = (error as { cause?: { code?: string; message?: string } }).cause;
    return new ConnectionError(`cannot reach the service at ${baseUrl} (${cause?.code ?? cause?.message ?? error.message})`, { cause: error });
  }
  throw error;
}

async function problemOf(response: Response): Promise<ProblemDocument> {
  const text = await response.text();
  try {
    const parsed = JSON.parse(text) as ProblemDocument;
    if (typeof parsed.type === 'string') return parsed;
  } catch {
    // not a problem document: a proxy's page, say
  }
  return { type: 'about:blank', title: response.statusText || `HTTP ${response.status}`, status: response.status, detail: text.slice(0, 200) };
}

/** 0.5 s, 1 s, 2 s, … up to 8 s, each within ±25%. */
function backoff(attempt: number): number {
  return Math.min(8000, 500 * 2 ** attempt) * (0.75 + Math.random() * 0.5);
}

function retryAfter(response: Response): number | undefined {
  const seconds = Number(response.headers.get('retry-after'));
  return Number.isFinite(seconds) && seconds > 0 ? Math.min(seconds, 60) * 1000 : undefined;
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
