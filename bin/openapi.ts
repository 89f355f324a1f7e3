// Writes the OpenAPI document the service serves at /openapi.json to a file (default
// dist/openapi.json), for linting (`npm run lint:openapi`) and for generating the SDK's types.
// Usage: node bin/openapi.ts [PATH] ; BASE_URL sets the server URL written in it.
import { mkdir, writeFile } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';
import { buildOpenApiDocument } from '../api/openapi.ts';
import { operations } from '../api/routes/index.ts';
import { loadConfig } from '../shared/platform/config.ts';

const target = resolve(process.argv[2] ?? 'dist/openapi.json');
const config = loadConfig({ ...process.env, BASE_URL: process.env['BASE_URL'] ?? 'https://datasets.acme.test' });
await mkdir(dirname(target), { recursive: true });
await writeFile(target, `${JSON.stringify(buildOpenApiDocument(operations, config.baseUrl, config.errorsBase), null, 2)}\n`);
