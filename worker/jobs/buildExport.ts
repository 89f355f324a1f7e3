// Builds an export: the version's rows, COPYed out of PostgreSQL and streamed into the blob
// store chunk by chunk, never whole in memory.
import type { Job } from 'pg-boss';
import type { BlobStore } from '../../shared/blobs/blobStore.ts';
import type { Pool } from '../../shared/platform/db.ts';
import { exportById, exportRowsOut, markExportBuilding, markExportFailed, markExportReady } from '../../shared/domain/exports.ts';
import type { Logger } from '../../shared/platform/log.ts';
import { BUILD_RETRY_LIMIT } from '../../shared/platform/queue.ts';
import type { UsageMeter } from '../../shared/tenancy/usage.ts';

export type ExportJob = { exportId: string };

export function buildExport(pool: Pool, blobs: BlobStore, meter: UsageMeter, log: Logger) {
  return async ([job]: Job<ExportJob>[]): Promise<void> => {
    const { exportId } = job!.data;
    const exp = await exportById(pool, exportId);
    if (!exp || exp.status === 'ready' || exp.status === 'failed') return;
    try {
      await markExportBuilding(pool, exportId);
      const client = await pool.connect();
      let blob;
      try {
        blob = await blobs.write(exportRowsOut(client, exp.versionId, exp.format), Number.MAX_SAFE_INTEGER);
      } finally {
        client.release();
      }
      const rowCount = exp.versionRowCount;
      try {
        await markExportReady(pool, exportId, { blobId: blob.id, bytes: blob.bytes, rowCount });
      } catch (error) {
        await blobs.delete(blob.id).catch(() => {});
        throw error;
      }
      meter.add(exp.accountId, exp.mode, 'export_rows', rowCount);
      log.info({ exportId, format: exp.format, rows: rowCount, bytes: blob.bytes }, 'export built');
    } catch (error) {
      log.error({ err: error, exportId, attempt: job!.retryCount }, 'export failed');
      if (job!.retryCount >= BUILD_RETRY_LIMIT) {
        await markExportFailed(pool, exportId, 'The export could not be built. Request a new one.');
      }
      throw error;
    }
  };
}

/** The dead-letter queue's consumer: an export job whose every attempt failed or never returned. */
export function buildExportDead(pool: Pool, log: Logger) {
  return async (jobs: Job<ExportJob>[]): Promise<void> => {
    for (const job of jobs) {
      log.warn({ exportId: job.data.exportId }, 'export dead-lettered; failing it if unfinished');
      await markExportFailed(pool, job.data.exportId, 'The export could not be built. Request a new one.');
    }
  };
}
