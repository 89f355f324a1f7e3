// The OpenAPI 3.1 document, generated from the operations' own zod schemas, and /docs, the
// Scalar reference of that document.
import { OpenAPIRegistry, OpenApiGeneratorV31 } from '@asteasolutions/zod-to-openapi';
import { randomBytes } from 'node:crypto';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { apiReference } from '@scalar/express-api-reference';
import type { RequestHandler } from 'express';
import { z } from 'zod';
import { problemTypes, type ProblemType } from '../shared/platform/problems.ts';
import { isMutating, type Operation } from './defineOperation.ts';
import { OAUTH_BROWSER_FLOW } from './routes/index.ts';
import { csvFormatMarkdown } from './csvFormat.ts';
import { atThisServer } from './examples.ts';
import { ProblemSchema } from './schemas.ts';

// Every route may refuse a URL it cannot understand (api/malformed.ts): bad-request.
const v1FilterProblems = (op: Operation): ProblemType[] =>
  op.surface === 'v1'
    ? [
        'unauthorized',
        ...(isMutating(op.method) ? (['forbidden', 'idempotency-key-required', 'idempotency-key-reused'] as const) : (['forbidden'] as const)),
        'bad-request',
        'internal',
        'unavailable',
      ]
    : op.surface === 'public'
      ? ['bad-request', 'internal']
      : [];

/** The detail of each problem type's example (when no richer example is given below). */
const EXAMPLE_DETAILS: Record<ProblemType, string> = {
  unauthorized: 'No credential was sent. Send an API key as "Authorization: Bearer svc_test_…".',
  forbidden: 'This credential lacks the scope service.write, which this call needs.',
  'not-found': 'No dataset with id "ds_3k9x0v4m7q2r8t1w5y6z" exists.',
  'method-not-allowed': '/v1/datasets does not take PUT; it takes GET, HEAD, POST.',
  conflict: 'A dataset with externalRef "crm-2026" already exists.',
  'payload-too-large': 'The file is larger than the limit of 2147483648 bytes.',
  'unsupported-media-type': 'This endpoint takes a JSON body: send Content-Type: application/json.',
  'bad-request': 'The request body is not valid.',
  'idempotency-key-required': 'This call changes data, so it needs an Idempotency-Key header. Nothing ran.',
  'idempotency-key-reused': 'This Idempotency-Key was already used with a different request in the last 24 hours. Nothing ran.',
  'ingest-validation-failed': '2 rows were rejected (2 problems); nothing was written.',
  gone: 'The file for this url no longer exists',
  'precondition-failed': 'Tus-Resumable Required',
  locked: 'Another request is writing this upload; retry shortly.',
  'not-implemented': 'creation-defer-length extension is not (yet) supported.',
  internal: 'The service failed while answering this request. Retrying with the same Idempotency-Key is safe.',
  unavailable: 'The service cannot reach its database right now. Retry with the same Idempotency-Key.',
};

/** A plain example of each problem type, for the operations that may answer it. */
const plainProblemExample = (errorsBase: string, type: ProblemType, instance: string) => ({
  [type]: {
    summary: problemTypes[type].title,
    value: { type: `${errorsBase}/${type}`, title: problemTypes[type].title, status: problemTypes[type].status, detail: EXAMPLE_DETAILS[type], instance },
  },
});

/** Examples of problem documents, shown with every operation that may answer the type. */
const problemExamples = (errorsBase: string): Partial<Record<ProblemType, Record<string, { summary: string; value: object }>>> => ({
  'bad-request': {
    malformedUrl: {
      summary: 'A path or query that is not percent-encoded UTF-8, or holds a NUL (%00)',
      value: {
        type: `${errorsBase}/bad-request`,
        title: 'Bad Request',
        status: 400,
        detail: 'The request URL cannot be understood.',
        instance: '/v1/datasets/%ff',
        errors: [{ field: 'path', code: 'malformed_url', message: 'The path is not valid percent-encoded UTF-8.' }],
      },
    },
    nulInJson: {
      summary: 'A JSON string or member name holding a NUL (\\u0000)',
      value: {
        type: `${errorsBase}/bad-request`,
        title: 'Bad Request',
        status: 400,
        detail: 'The request body is not valid.',
        instance: '/v1/datasets',
        errors: [{ field: 'name', code: 'invalid_character', message: 'Strings may not contain a NUL character (\\u0000).' }],
      },
    },
  },
});

/** The reference's sections, in order, with what each is about. */
const TAGS = [
  { name: 'Datasets', description: 'A dataset holds the versions of one collection of contract rows; one version at a time is active.' },
  {
    name: 'Versions',
    description: `Each upload becomes a version, built by a worker: every row error is reported at once, or the version activates with its metrics and catalog.\n\n${csvFormatMarkdown()}`,
  },
  { name: 'Uploads', description: 'Large files: a signed URL to PUT to, or a resumable tus endpoint; then a version from {"uploadId"}.' },
  { name: 'Reads', description: 'Metrics and catalog of the active version, computed when it was built.' },
  {
    name: 'Exchange rates',
    description:
      'Your own month-end exchange rates, uploaded as sets; the newest set of your account and mode is in force, and metrics convert to one reporting currency with it (`?reportingCurrency=`).',
  },
  { name: 'Exports', description: 'A version\'s rows as a CSV or JSONL file, built by a worker.' },
  { name: 'Events', description: 'What happened to your datasets, versions and exports, kept 30 days.' },
  { name: 'Webhooks', description: 'Endpoints that receive events, signed per Standard Webhooks.' },
  { name: 'OAuth', description: OAUTH_BROWSER_FLOW },
  { name: 'Operations', description: 'Probes and Prometheus metrics, for operators.' },
];

const toOpenApiPath = (path: string) => path.replace(/:(\w+)/g, '{$1}');

export function buildOpenApiDocument(operations: Operation[], baseUrl: string, errorsBase: string) {
  const registry = new OpenAPIRegistry();
  registry.registerComponent('securitySchemes', 'bearer', {
    type: 'http',
    scheme: 'bearer',
    description: 'An API key (svc_test_… or svc_live_…) or an OAuth access token (svc_oauth_…).',
  });

  const examplesOf = problemExamples(errorsBase);
  for (const op of operations) {
    const problems = [...new Set([...(op.problems ?? []), ...v1FilterProblems(op)])];
    const responses: Record<string, object> = {};
    const mutatingV1 = op.surface === 'v1' && isMutating(op.method);
    // Headers every answer of the operation carries.
    const standardHeaders: Record<string, string> = {
      'Request-Id': 'This request\'s id in the service\'s logs: yours from X-Request-Id, else a new one. Quote it when asking for help.',
      ...(mutatingV1 && { 'Idempotent-Replayed': '"true" when this answer is the replay of the first one for this Idempotency-Key (nothing ran again).' }),
    };
    const headersOf = (own: Record<string, string> = {}) =>
      Object.fromEntries(Object.entries({ ...standardHeaders, ...own }).map(([h, d]) => [h, { description: d, schema: { type: 'string' } }]));
    for (const [status, spec] of Object.entries(op.responses)) {
      responses[status] = {
        description: spec.description,
        headers: headersOf(spec.headers),
        ...(spec.schema && {
          content: {
            [spec.contentType ?? 'application/json']: {
              schema: spec.schema,
              ...(spec.examples !== undefined ? { examples: spec.examples } : spec.example !== undefined && { example: spec.example }),
            },
            ...Object.fromEntries(
              Object.entries(spec.alternatives ?? {}).map(([type, alt]) => [type, { schema: alt.schema, ...(alt.example !== undefined && { example: alt.example }) }]),
            ),
          },
        }),
      };
    }
    const byStatus = new Map<number, ProblemType[]>();
    for (const type of problems) {
      const status = problemTypes[type].status;
      byStatus.set(status, [...(byStatus.get(status) ?? []), type]);
    }
    for (const [status, types] of byStatus) {
      const examples = Object.assign({}, ...types.map((t) => examplesOf[t] ?? plainProblemExample(errorsBase, t, toOpenApiPath(op.path))));
      responses[String(status)] ??= {
        description: types.map((t) => `\`${t}\` (${errorsBase}/${t})`).join(', '),
        headers: headersOf({
          ...(status === 405 && { Allow: 'The methods the path takes.' }),
          ...(status === 401 && { 'WWW-Authenticate': 'Bearer, with error="invalid_token" when a token was presented, and resource_metadata.' }),
          ...op.problemHeaders?.[status],
        }),
        content: {
          'application/problem+json': { schema: ProblemSchema, ...(Object.keys(examples).length > 0 && { examples }) },
        },
      };
    }
    registry.registerPath({
      method: op.method,
      path: toOpenApiPath(op.path),
      operationId: op.operationId,
      tags: op.tags,
      summary: op.summary,
      ...(op.description && { description: op.description }),
      // Only /v1 needs a credential; every other operation says so (security: []).
      security: op.surface === 'v1' ? [{ bearer: [] }] : [],
      request: {
        ...(op.params && { params: op.params }),
        ...(op.query && { query: op.query }),
        ...((mutatingV1 || op.requestHeaders) && {
          headers: z.object({
            ...(mutatingV1 && {
              'Idempotency-Key': z.string().min(1).max(255).meta({
                description: 'Required. The same key and body within 24 hours replays the first answer; another body gets 422.',
                example: '3f1c9b52-7d0e-4a8b-9f61-2c4e8d7a1b90',
              }),
            }),
            ...op.requestHeaders?.shape,
          }),
        }),
        ...((op.body || op.otherBodies) && {
          body: {
            required: true,
            content: {
              ...(op.body && { 'application/json': { schema: op.body, ...(op.bodyExample !== undefined && { example: op.bodyExample }) } }),
              ...op.otherBodies,
            },
          },
        }),
      },
      responses,
    });
  }

  const doc = new OpenApiGeneratorV31(registry.definitions).generateDocument({
    openapi: '3.1.0',
    info: {
      title: 'Dataset Service API',
      version: '1',
      description: introduction(errorsBase),
      license: { name: 'Proprietary', identifier: 'LicenseRef-Proprietary' },
    },
    servers: [{ url: baseUrl }],
    tags: TAGS,
  });
  for (const item of Object.values(doc.paths ?? {})) {
    for (const op of Object.values(item as Record<string, { operationId?: string }>)) {
      const samples = op?.operationId ? CODE_SAMPLES[op.operationId]?.(baseUrl) : undefined;
      if (samples) Object.assign(op, { 'x-codeSamples': samples });
    }
  }
  return atThisServer(doc, baseUrl, errorsBase);
}

/** What one can do, in three steps, then what every call shares: the reference's first page. */
const introduction = (errorsBase: string) =>
  [
    'The Dataset Service turns files of contracts into the figures a finance team reads: month-end MRR, ARR and ARPA, ' +
      'new business, expansion, contraction, churn and reactivation, churn and revenue retention rates, cohorts, and which customers moved in a month.',
    '',
    '1. **Create a dataset**: `POST /v1/datasets` with your own `externalRef` (the CRM export, the billing system…).',
    '2. **Upload its contract file**: `POST /v1/datasets/{id}/versions` with the CSV as the body (`curl --data-binary @contracts.csv`). ' +
      'A worker builds it into a version: you get the active version, or every bad cell of the file at once (nothing is written). Each upload replaces the data.',
    '3. **Read the figures**: `GET /v1/datasets/{id}/metrics`, `/cohorts`, `/customers?month=YYYY-MM` and `/catalog`; export the rows; or receive events by webhook instead of polling.',
    '',
    'Every call carries `Authorization: Bearer` with an API key from your operator (`svc_test_…` in test mode, `svc_live_…` in live mode, which never see each other\'s data) ' +
      'or an OAuth access token a person granted your program. Every mutating call needs an `Idempotency-Key`: the same key replays the first answer, so a retry never runs twice. ' +
      `Every failure is an RFC 9457 problem document whose \`type\` (under ${errorsBase}/) is described at its URI. Call /v1 from a backend: it allows no browser origin.`,
  ].join('\n');

/** Request samples Scalar cannot generate from the schemas: a file sent as it is (`--data` would strip its line breaks). */
const CODE_SAMPLES: Record<string, (baseUrl: string) => Array<{ lang: string; label: string; source: string }>> = {
  createVersion: (baseUrl) => [
    {
      lang: 'shell',
      label: 'curl: a CSV file',
      source:
        `curl ${baseUrl}/v1/datasets/$DS/versions \\\n` +
        `  --header "Authorization: Bearer $KEY" \\\n` +
        `  --header 'Idempotency-Key: crm-2026-rev-1' \\\n` +
        `  --header 'Content-Type: text/csv' \\\n` +
        '  --data-binary @contracts.csv',
    },
    {
      lang: 'shell',
      label: 'curl: multipart',
      source:
        `curl ${baseUrl}/v1/datasets/$DS/versions \\\n` +
        `  --header "Authorization: Bearer $KEY" \\\n` +
        `  --header 'Idempotency-Key: crm-2026-rev-1' \\\n` +
        '  --form file=@contracts.csv',
    },
  ],
};

type Doc = ReturnType<typeof buildOpenApiDocument>;

/** The reference's policy: our own script (the installed Scalar bundle) and the page's one inline script, by nonce; nothing from elsewhere. */
const referencePolicy = (nonce: string) =>
  `default-src 'none'; script-src 'self' 'nonce-${nonce}'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; font-src 'self' data:; ` +
  `connect-src 'self'; worker-src 'self' blob:; frame-ancestors 'none'; base-uri 'none'; form-action 'none'`;

/** Where the installed Scalar bundle is served (no CDN). */
export const REFERENCE_SCRIPT_PATH = '/docs/scalar.standalone.js';
// The package exports no path to its browser bundle: it sits beside its entry point (dist/).
const scalarBundle = join(dirname(createRequire(import.meta.url).resolve('@scalar/api-reference')), 'browser', 'standalone.js');

/**
 * /openapi.json, and /docs: the Scalar API reference (navigation, search, examples, request samples
 * in curl and other languages) of the same document, its script served from the installed
 * @scalar/api-reference package, under a CSP that allows nothing from elsewhere.
 */
export function openApiRoutes(doc: Doc): { json: RequestHandler; docs: RequestHandler; script: RequestHandler } {
  return {
    json: (_req, res) => void res.json(doc),
    docs: (req, res, next) => {
      const nonce = randomBytes(16).toString('base64');
      res.set('Content-Security-Policy', referencePolicy(nonce));
      (apiReference as (config: object) => RequestHandler)({
        url: '/openapi.json',
        cdn: REFERENCE_SCRIPT_PATH,
        nonce,
        pageTitle: 'Dataset Service API reference',
        withDefaultFonts: false,
        hideClientButton: true,
        // Scalar's "Developer Tools / Configure / Share / Deploy" bar, shown on localhost by default: for authors of references on Scalar's platform, not for readers.
        showDeveloperTools: 'never',
        telemetry: false,
        // Nothing that calls Scalar's cloud (its AI agent, its MCP generator): the page stays on this host.
        agent: { disabled: true },
        mcp: { disabled: true },
        // No defaultHttpClient: curl is Scalar's default already, and naming it would hide an operation's own samples (x-codeSamples) behind the generated one.
      })(req, res, next);
    },
    script: (_req, res) => void res.set('Cache-Control', 'public, max-age=86400').sendFile(scalarBundle),
  };
}
