// The configured blob store. The S3 client is loaded only when it is used (it costs ~50 MiB of memory).
import type { BlobStore } from './blobStore.ts';
import { WriterHeartbeat } from './blobRecords.ts';
import { createPostgresBlobStore } from './postgresBlobStore.ts';
import type { Config } from '../platform/config.ts';
import type { Pool } from '../platform/db.ts';

export async function createBlobStore(config: Config, pool: Pool): Promise<BlobStore> {
  const writers = new WriterHeartbeat(pool, config.blobHeartbeatMs);
  if (config.blobStore.kind !== 's3') return createPostgresBlobStore(pool, writers, config.streamedBuildPatienceMs);
  const { createS3BlobStore } = await import('./s3BlobStore.ts');
  return createS3BlobStore(config.blobStore, pool, writers);
}
