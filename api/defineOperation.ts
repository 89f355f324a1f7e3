// One operation = one route file: its zod schemas, its OpenAPI description and its handler, so
// that validation and documentation come from the same source and cannot drift.
import type { Request, Response } from 'express';
import type { z } from 'zod';
import type { PgBoss } from 'pg-boss';
import type { BlobStore } from '../shared/blobs/blobStore.ts';
import type { UsageMeter } from '../shared/tenancy/usage.ts';
import type { VersionOutcomes } from '../shared/domain/versionOutcomes.ts';
import type { Config } from '../shared/platform/config.ts';
import type { Pool } from '../shared/platform/db.ts';
import type { Logger } from '../shared/platform/log.ts';
import type { ProblemType } from '../shared/platform/problems.ts';
import { discardBody, parseOrThrow, readJsonBody } from './body.ts';
import type { AuthorizationServer } from './oauth/provider.ts';
import type { OAuthKeys } from '../shared/oauth/keys.ts';
import type { ResumableReception } from './reception/resumable.ts';
import type { SecretBox } from '../shared/platform/sealedSecrets.ts';
import { type Metrics, setRouteLabel } from './metrics.ts';

export type Deps = {
  config: Config;
  pool: Pool;
  log: Logger;
  meter: UsageMeter;
  /** Enqueues jobs (pg-boss as a producer). */
  boss: PgBoss;
  /** Wakes requests waiting for a build's outcome. */
  outcomes: VersionOutcomes;
  /** Where uploaded files and exports live. */
  blobs: BlobStore;
  /** Resumable (tus) uploads of upload files. */
  resumable: ResumableReception;
  /** Seals and opens webhook signing secrets. */
  secrets: SecretBox;
  /** The OAuth authorization server mounted at /oauth, and its keys. */
  oauth: { provider: AuthorizationServer; keys: OAuthKeys };
  /** This process's Prometheus metrics (GET /metrics), when measured. */
  metrics?: Metrics;
};

/**
 * Renders again, on an idempotent replay, an answer that was kept by reference (its status and
 * headers are set): from `payload`, what the operation kept, and `keptBody`, the bytes it kept.
 */
export type KeptAnswerRenderer = (ctx: { res: Response; deps: Deps; keptBody: Buffer }, payload: never) => Promise<void>;

export type HttpMethod = 'get' | 'head' | 'post' | 'put' | 'patch' | 'delete' | 'options';

export type ResponseSpec = {
  description: string;
  schema?: z.ZodType;
  contentType?: string;
  example?: unknown;
  /** Several named examples instead of one (an answer whose shape a query parameter changes). */
  examples?: Record<string, { summary: string; value: unknown }>;
  /** Other representations of the same answer, chosen by the request's Accept header. */
  alternatives?: Record<string, { schema: z.ZodType; example?: unknown }>;
  headers?: Record<string, string>;
};

type AnyObject = z.ZodObject<z.ZodRawShape>;

export type Operation<P extends AnyObject = AnyObject, Q extends AnyObject = AnyObject, B extends z.ZodType = z.ZodType> = {
  operationId: string;
  method: HttpMethod;
  /** Express-style path, e.g. /v1/datasets/:id. */
  path: string;
  /** v1: behind authentication, scope and idempotency filters. public: no credential. oauth: served by
   * the authorization server under /oauth, listed here for the reference only. */
  surface: 'v1' | 'public' | 'oauth';
  tags: string[];
  summary: string;
  description?: string;
  params?: P;
  query?: Q;
  /** Request headers the operation reads (documentation only; the handler reads them). */
  requestHeaders?: AnyObject;
  body?: B;
  /** An example of the JSON body, for the reference. */
  bodyExample?: unknown;
  /** Bodies the handler reads itself (streams, multipart), by content type: documentation only. */
  otherBodies?: Record<string, { schema: z.ZodType; description?: string; example?: unknown }>;
  responses: Record<number, ResponseSpec>;
  /** Problem types this operation itself may answer (the filters' ones are added for /v1). */
  problems?: ProblemType[];
  /** Headers this operation adds to its problem answers, by status (documentation only). */
  problemHeaders?: Record<number, Record<string, string>>;
  /**
   * The answers this operation keeps by reference rather than by their bytes (with
   * keepStreamedAnswer or keepAnswerWithout, api/filters/idempotency.ts), by the name the
   * reference is kept under: how each is rendered again on replay.
   */
  keptAnswers?: Record<string, KeptAnswerRenderer>;
  handle(ctx: {
    req: Request;
    res: Response;
    deps: Deps;
    params: z.output<P>;
    query: z.output<Q>;
    body: z.output<B>;
  }): Promise<void>;
};

export function defineOperation<P extends AnyObject, Q extends AnyObject, B extends z.ZodType>(
  op: Operation<P, Q, B>,
): Operation {
  return op as unknown as Operation;
}

/** Every operation's kept-answer renderers by name; a name declared twice is a programming error. */
export function keptAnswerRenderers(ops: Operation[]): Map<string, KeptAnswerRenderer> {
  const renderers = new Map<string, KeptAnswerRenderer>();
  for (const op of ops) {
    for (const [name, render] of Object.entries(op.keptAnswers ?? {})) {
      if (renderers.has(name)) throw new Error(`kept answer "${name}" is declared by two operations`);
      renderers.set(name, render);
    }
  }
  return renderers;
}

export const isMutating = (method: string) => !['get', 'head', 'options'].includes(method.toLowerCase());

/** The Express handler for an operation: parse params, query and body, then run it. */
export function handlerFor(op: Operation, deps: Deps) {
  return async (req: Request, res: Response) => {
    setRouteLabel(res, op.path);
    const params = op.params ? parseOrThrow(op.params, req.params, 'path') : {};
    const query = op.query ? parseOrThrow(op.query, req.query, 'query string') : {};
    const body = op.body ? parseOrThrow(op.body, await readJsonBody(req), 'request body') : undefined;
    // A mutating call that takes no body still has it read, for its idempotency record.
    if (!op.body && !op.otherBodies && op.surface === 'v1' && isMutating(op.method)) await discardBody(req);
    await op.handle({ req, res, deps, params, query, body } as Parameters<Operation['handle']>[0]);
  };
}
