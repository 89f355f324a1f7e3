// With TEST_BLOB_STORE=s3 the suite runs on the S3-compatible blob store: one local s3rver for
// the whole run (it does not check presigned signatures, so tampering is tested on our own URLs).
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import S3rver from 's3rver';

const BUCKET = 'dataset-service-test';
let server: { stop(): Promise<void>; env: Record<string, string> } | undefined;

export const testBlobStore = (): 'postgres' | 's3' => (process.env['TEST_BLOB_STORE'] === 's3' ? 's3' : 'postgres');

export async function startTestObjectStore(): Promise<void> {
  if (testBlobStore() !== 's3') return;
  const dir = await mkdtemp(join(tmpdir(), 'dataset-service-s3-'));
  const s3rver = new S3rver({ port: 0, address: '127.0.0.1', silent: true, directory: dir, configureBuckets: [{ name: BUCKET }] });
  const { port } = await s3rver.run();
  server = {
    env: {
      BLOB_STORE: 's3',
      S3_BUCKET: BUCKET,
      S3_ENDPOINT: `http://127.0.0.1:${port}`,
      S3_ACCESS_KEY_ID: 'S3RVER',
      S3_SECRET_ACCESS_KEY: 'S3RVER',
    },
    stop: async () => {
      await s3rver.close();
      await rm(dir, { recursive: true, force: true });
    },
  };
}

export async function stopTestObjectStore(): Promise<void> {
  await server?.stop();
  server = undefined;
}

/** The environment that puts a service (or a child process) on the run's blob store. */
export const blobStoreEnv = (): Record<string, string> => server?.env ?? {};
