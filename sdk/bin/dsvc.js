#!/usr/bin/env node
// The dsvc command: the CLI built into dist/ (npm run build; npm pack builds it first). In this repository before a build,
// its TypeScript source, which Node.js 22.18 and newer runs as it is.
try {
  await import('../dist/cli/main.js');
} catch (error) {
  if (error?.code !== 'ERR_MODULE_NOT_FOUND' || !String(error.message).includes('dist/cli/main.js')) throw error;
  await import('../src/cli/main.ts');
}
