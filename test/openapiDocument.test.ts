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
});
