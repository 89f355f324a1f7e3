// Builds an export: the version's rows, COPYed out of PostgreSQL and streamed into the blob
// store chunk by chunk, never whole in memory.
import type { Job } from 'pg-boss';
import type { BlobStore } from '../../shared/blobs/blobStore.ts';
import { type Pool, withTransaction } from '../../shared/platform/db.ts';
import { exportById, exportRowsOut, type ExportViews, markExportBuilding, markExportFailed, markExportReady } from '../../shared/domain/exports.ts';
import type { Logger } from '../../shared/platform/log.ts';
import { BUILD_RETRY_LIMIT } from '../../shared/platform/queue.ts';
import type { UsageMeter } from '../../shared/tenancy/usage.ts';
import { type FairTurn, turnOf, turnTaken } from '../../shared/domain/fairQueues.ts';

/** The export to build, and where it comes from (its dataset, and the request and account that asked for it, when known). */
export type ExportJob = { exportId: string; datasetId?: string; requestId?: string; accountId?: string; turn?: FairTurn };

/** What every log line of an export job names, so that a request can be followed to its export. */
const jobFields = (job: Job<ExportJob>) => {
  const { exportId, datasetId, requestId, accountId } = job.data;
  return { jobId: job.id, exportId, datasetId, accountId, requestId };
};

export function buildExport(pool: Pool, blobs: BlobStore, config: { baseUrl: string }, meter: UsageMeter, log: Logger) {
  const views: ExportViews = { pool, blobs, config };
  return async ([job]: Job<ExportJob>[]): Promise<void> => {
    const { exportId } = job!.data;
    const fields = jobFields(job!);
    const turn = turnOf(job!.data);
    // The export lane's fair clock moves to this job's turn (shared/domain/fairQueues.ts).
    if (turn) await turnTaken(pool, turn).catch((error: unknown) => log.warn({ err: error, ...fields }, 'fair clock not moved'));
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
        await withTransaction(pool, (client) => markExportReady(client, views, exportId, { blobId: blob.id, bytes: blob.bytes, rowCount }));
      } catch (error) {
        await blobs.delete(blob.id).catch(() => {});
        throw error;
      }
      meter.add(exp.accountId, exp.mode, 'export_rows', rowCount);
      log.info({ ...fields, accountId: exp.accountId, datasetId: exp.datasetId, versionId: exp.versionId, format: exp.format, rows: rowCount, bytes: blob.bytes }, 'export built');
    } catch (error) {
      log.error({ err: error, ...fields, accountId: exp.accountId, datasetId: exp.datasetId, versionId: exp.versionId, attempt: job!.retryCount }, 'export failed');
      if (job!.retryCount >= BUILD_RETRY_LIMIT) {
        await withTransaction(pool, (client) => markExportFailed(client, views, exportId, 'The export could not be built. Request a new one.'));
      }
      throw error;
    }
  };
}

/** The dead-letter queue's consumer: an export job whose every attempt failed or never returned. */
export function buildExportDead(pool: Pool, blobs: BlobStore, config: { baseUrl: string }, log: Logger) {
  const views: ExportViews = { pool, blobs, config };
  return async (jobs: Job<ExportJob>[]): Promise<void> => {
    for (const job of jobs) {
      log.warn(jobFields(job), 'export dead-lettered; failing it if unfinished');
      await withTransaction(pool, (client) => markExportFailed(client, views, job.data.exportId, 'The export could not be built. Request a new one.'));
    }
  };
}
