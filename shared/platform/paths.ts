// Where the project's own files are, from source (shared/) or from the build (dist/shared/).
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

function findRoot(start: string): string {
  let dir = start;
  while (!existsSync(join(dir, 'package.json'))) {
    const parent = dirname(dir);
    if (parent === dir) throw new Error('project root not found');
    dir = parent;
  }
  return dir;
}

export const projectRoot = findRoot(dirname(fileURLToPath(import.meta.url)));
export const sqlDir = join(projectRoot, 'sql');
