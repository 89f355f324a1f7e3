// The OpenAPI document as a generated client and a reader get it: an example for every request
// body and every answer with a body, every operation saying what credential it needs, and the
// people's browser pages kept out of the operations (Redocly's lint runs in .ci/run).
import { expect } from 'chai';
import { buildOpenApiDocument } from '../api/openapi.ts';
import { operations } from '../api/routes/index.ts';
import { CONTRACT_FIELDS, ROW_ERROR_CODES } from '../shared/contract/fields.ts';

describe('the OpenAPI document', () => {
  const doc = buildOpenApiDocument(operations, 'https://datasets.acme.test', 'https://datasets.acme.test/problems') as unknown as {
    paths: Record<string, Record<string, { security?: unknown[]; requestBody?: { content: Record<string, object> }; responses: Record<string, { content?: Record<string, object> }> }>>;
    tags: { name: string; description: string }[];
  };
  const methods = ['get', 'head', 'post', 'put', 'patch', 'delete', 'options'];

  it('when any operation is read, then each request body and each answer with a body has an example, and security is declared', () => {
    const missing: string[] = [];
    for (const [path, item] of Object.entries(doc.paths)) {
      for (const [method, op] of Object.entries(item).filter(([m]) => methods.includes(m))) {
        if (op.security === undefined) missing.push(`${method} ${path}: no security`);
        for (const [type, content] of Object.entries(op.requestBody?.content ?? {})) {
          if (!('example' in content) && !('examples' in content)) missing.push(`${method} ${path} request ${type}`);
        }
        for (const [status, answer] of Object.entries(op.responses)) {
          for (const [type, content] of Object.entries(answer.content ?? {})) {
            if (!('example' in content) && !('examples' in content)) missing.push(`${method} ${path} ${status} ${type}`);
          }
        }
      }
    }
    expect(missing).to.deep.equal([]);
  });

  it('when a JSON answer\'s examples are checked against its schema, then every one is an answer the schema allows', () => {
    const wrong: string[] = [];
    for (const op of operations) {
      for (const [status, spec] of Object.entries(op.responses)) {
        if (!spec.schema || (spec.contentType ?? 'application/json') !== 'application/json') continue;
        const examples = spec.examples ? Object.entries(spec.examples).map(([name, e]) => [name, e.value] as const) : spec.example !== undefined ? [['example', spec.example] as const] : [];
        for (const [name, value] of examples) {
          const checked = spec.schema.safeParse(value);
          if (!checked.success) wrong.push(`${op.operationId} ${status} ${name}: ${checked.error.issues.map((i) => `${i.path.join('.')} ${i.message}`).join('; ')}`);
        }
      }
    }
    expect(wrong).to.deep.equal([]);
  });

  it('when the operations are listed, then the browser pages of the OAuth flow are not among them, and are described in the OAuth section', () => {
    expect(Object.keys(doc.paths).filter((p) => p.startsWith('/oauth/interaction') || p === '/oauth/authorize' || p.startsWith('/account'))).to.deep.equal([]);
    expect(doc.tags.find((t) => t.name === 'OAuth')!.description).to.include('GET /oauth/authorize');
  });

  it('when the Versions section is read, then it describes the file: every column, the reading rules and every row code with its fix', () => {
    const versions = doc.tags.find((t) => t.name === 'Versions')!.description;
    for (const field of CONTRACT_FIELDS) expect(versions).to.include(`\`${field.name}\``);
    for (const code of ROW_ERROR_CODES) expect(versions).to.include(`| \`${code.code}\` | ${code.fix} |`);
    expect(versions).to.include('detected from the header line');
  });

  it('when the examples are read, then every address in them is this server\'s: problem types under its ERRORS_BASE, links under its BASE_URL', () => {
    // An ERRORS_BASE of its own, not under BASE_URL, so that each is told apart.
    const own = buildOpenApiDocument(operations, 'https://datasets.acme.test', 'https://errors.acme.test/p');
    const strings: string[] = [];
    const walk = (value: unknown): void => {
      if (typeof value === 'string') strings.push(value);
      else if (value && typeof value === 'object') Object.values(value).forEach(walk);
    };
    walk(own);
    expect(strings.filter((s) => s.includes('example.com') && !s.includes('hooks.example.com'))).to.deep.equal([]);
    const problemTypes: string[] = [];
    const types = (value: unknown): void => {
      if (value && typeof value === 'object') {
        const v = value as Record<string, unknown>;
        if (typeof v['type'] === 'string' && typeof v['status'] === 'number' && typeof v['title'] === 'string') problemTypes.push(v['type']);
        Object.values(v).forEach(types);
      }
    };
    types(own);
    expect(problemTypes.length).to.be.above(50);
    expect(problemTypes.filter((t) => !t.startsWith('https://errors.acme.test/p/'))).to.deep.equal([]);
    expect(problemTypes).to.include('https://errors.acme.test/p/ingest-validation-failed');
    expect(strings).to.include('https://datasets.acme.test/v1/datasets/ds_3k9x0v4m7q2r8t1w5y6z/versions/ver_9a8b7c6d5e4f3a2b1c0d/errors');
  });

  it('when the introduction and the CSV upload are read, then the introduction says what one can do in three steps and the upload sends the file with --data-binary', () => {
    const own = buildOpenApiDocument(operations, 'https://datasets.acme.test', 'https://datasets.acme.test/problems') as unknown as {
      info: { description: string };
      paths: Record<string, Record<string, { 'x-codeSamples'?: { lang: string; label: string; source: string }[] }>>;
    };
    const steps = own.info.description.split('\n').filter((l) => /^\d\. /.test(l));
    expect(steps.map((l) => l.slice(0, 30))).to.deep.equal(['1. **Create a dataset**: `POST', '2. **Upload its contract file*', '3. **Read the figures**: `GET ']);
    const samples = own.paths['/v1/datasets/{id}/versions']!['post']!['x-codeSamples']!;
    expect(samples[0]!.source).to.match(/^curl https:\/\/datasets\.acme\.test\/v1\/datasets\/\$DS\/versions \\\n/).and.include("--header 'Content-Type: text/csv'").and.match(/--data-binary @contracts\.csv$/);
  });
});
