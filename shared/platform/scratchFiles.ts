// Temporary files for what a build spills past its memory (the contracts for the figures, the
// customers' lines, the contractId hashes): created readable by the process's user only and
// unlinked at once, so that they go when closed, or with the process, whatever happens.
import { randomUUID } from 'node:crypto';
import { openSync, unlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** A new temporary file's descriptor (read and write), already unlinked. */
export function openScratchFile(kind: string): number {
  const path = join(tmpdir(), `dataset-service-${kind}-${process.pid}-${randomUUID()}`);
  const fd = openSync(path, 'w+', 0o600);
  unlinkSync(path);
  return fd;
}
