// The OpenAPI 3.1 document, generated from the operations' own zod schemas, and /docs, a
// readable reference page rendered from that document.
import { OpenAPIRegistry, OpenApiGeneratorV31 } from '@asteasolutions/zod-to-openapi';
import type { RequestHandler } from 'express';
import { z } from 'zod';
import { problemTypes, type ProblemType } from '../shared/platform/problems.ts';
import { isMutating, type Operation } from './defineOperation.ts';
import { escapeHtml } from './html.ts';
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
    for (const [status, spec] of Object.entries(op.responses)) {
      responses[status] = {
        description: spec.description,
        ...(spec.headers && {
          headers: Object.fromEntries(Object.entries(spec.headers).map(([h, d]) => [h, { description: d, schema: { type: 'string' } }])),
        }),
        ...(spec.schema && {
          content: {
            [spec.contentType ?? 'application/json']: { schema: spec.schema, ...(spec.example !== undefined && { example: spec.example }) },
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
      const examples = Object.assign({}, ...types.map((t) => examplesOf[t] ?? {}));
      responses[String(status)] ??= {
        description: types.map((t) => `\`${t}\` (${errorsBase}/${t})`).join(', '),
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
      ...(op.surface === 'v1' && { security: [{ bearer: [] }] }),
      request: {
        ...(op.params && { params: op.params }),
        ...(op.query && { query: op.query }),
        ...(op.surface === 'v1' &&
          isMutating(op.method) && {
            headers: z.object({
              'Idempotency-Key': z.string().min(1).max(255).meta({
                description: 'Required. The same key and body within 24 hours replays the first answer; another body gets 422.',
              }),
            }),
          }),
        ...(op.requestHeaders && { headers: op.requestHeaders }),
        ...((op.body || op.otherBodies) && {
          body: {
            required: true,
            content: {
              ...(op.body && { 'application/json': { schema: op.body } }),
              ...op.otherBodies,
            },
          },
        }),
      },
      responses,
    });
  }

  return new OpenApiGeneratorV31(registry.definitions).generateDocument({
    openapi: '3.1.0',
    info: {
      title: 'Dataset Service API',
      version: '1',
      description:
        'Datasets of contract rows, built into versions by workers. Every mutating /v1 call needs an Idempotency-Key; ' +
        'every failure is an RFC 9457 problem document whose type is described at its URI. Test-mode (svc_test_) and ' +
        'live-mode (svc_live_) credentials never see each other\'s data. /v1 allows no browser origin.',
    },
    servers: [{ url: baseUrl }],
  });
}

type Doc = ReturnType<typeof buildOpenApiDocument>;

/** A plain, dependency-free reference page: every operation with its parameters and answers. */
export function renderReference(doc: Doc, errorsBase: string): string {
  const sections: string[] = [];
  for (const [path, item] of Object.entries(doc.paths ?? {})) {
    for (const [method, op] of Object.entries(item as Record<string, Record<string, unknown>>)) {
      const params = ((op['parameters'] as { name: string; in: string; required?: boolean; description?: string }[]) ?? [])
        .map((p) => `<li><code>${escapeHtml(p.name)}</code> (${p.in}${p.required ? ', required' : ''})${p.description ? `: ${escapeHtml(p.description)}` : ''}</li>`)
        .join('');
      const body = (op['requestBody'] as { content: Record<string, { schema: unknown }> } | undefined)?.content;
      const responses = Object.entries(op['responses'] as Record<string, { description: string }>)
        .map(([status, r]) => `<li><strong>${status}</strong> ${escapeHtml(r.description)}</li>`)
        .join('');
      sections.push(`<section id="${escapeHtml(String(op['operationId']))}">
<h2><span class="m">${method.toUpperCase()}</span> <code>${escapeHtml(path)}</code></h2>
<p><strong>${escapeHtml(String(op['summary'] ?? ''))}.</strong> ${escapeHtml(String(op['description'] ?? ''))}</p>
${params ? `<h3>Parameters</h3><ul>${params}</ul>` : ''}
${body ? `<h3>Body</h3><pre>${escapeHtml(JSON.stringify(Object.values(body)[0]?.schema, null, 2))}</pre>` : ''}
<h3>Responses</h3><ul>${responses}</ul></section>`);
    }
  }
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(doc.info.title)}</title>
<style>body{font:16px/1.5 system-ui,sans-serif;max-width:52rem;margin:2rem auto;padding:0 1rem;color:#1a1a1a}
section{border-top:1px solid #ddd;padding-top:.5rem}.m{font:600 .8em monospace;background:#1a1a1a;color:#fff;padding:.15em .4em;border-radius:3px}
pre{background:#f5f5f5;padding:.75rem;overflow:auto;font-size:.85em}code{font-size:.95em}</style></head>
<body><h1>${escapeHtml(doc.info.title)}</h1><p>${escapeHtml(doc.info.description ?? '')}</p>
<p>Machine-readable: <a href="/openapi.json">/openapi.json</a>. Problem types: <a href="${escapeHtml(errorsBase)}/">their pages</a>.</p>
${sections.join('\n')}</body></html>`;
}

export function openApiRoutes(doc: Doc, errorsBase: string): { json: RequestHandler; docs: RequestHandler } {
  const html = renderReference(doc, errorsBase);
  return {
    json: (_req, res) => void res.json(doc),
    docs: (_req, res) => void res.type('html').send(html),
  };
}
