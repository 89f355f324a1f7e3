// A user's upload program, run as a child process: tus-js-client sends a file to a tus endpoint
// (or resumes an upload URL) and prints, as JSON lines, the upload URL, progress and the end.
// With DIE_AFTER_BYTES it kills itself (SIGKILL) as soon as it has sent that many bytes: a program
// cut off mid-upload, at once, whatever the machine's speed. With CHUNK_SIZE it sends PATCHes of
// that many bytes (by default one for the whole file): whatever the kernel's socket buffers took
// when it dies, the service holds at most one chunk more than it had sent.
// Usage: node test/support/tusClient.ts <file> <endpoint> [<upload url to resume>]
import { readFileSync } from 'node:fs';
import { Upload } from 'tus-js-client';

const [file, endpoint, uploadUrl] = process.argv.slice(2);
const bytes = readFileSync(file!);
const say = (line: object) => process.stdout.write(`${JSON.stringify(line)}\n`);
const dieAfter = process.env['DIE_AFTER_BYTES'] === undefined ? undefined : Number(process.env['DIE_AFTER_BYTES']);
const chunkSize = process.env['CHUNK_SIZE'] === undefined ? undefined : Number(process.env['CHUNK_SIZE']);

const upload = new Upload(bytes, {
  endpoint: endpoint!,
  ...(uploadUrl && { uploadUrl }),
  retryDelays: [0, 500, 1000, 2000],
  ...(chunkSize !== undefined && { chunkSize }),
  onUploadUrlAvailable: () => say({ url: upload.url }),
  onProgress: (sent, total) => {
    say({ sent, total });
    if (dieAfter !== undefined && sent >= dieAfter) process.kill(process.pid, 'SIGKILL');
  },
  onSuccess: () => say({ done: true }),
  onError: (error) => {
    say({ error: String(error) });
    process.exitCode = 1;
  },
});
upload.start();
