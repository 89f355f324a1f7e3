// The purge of a deleted dataset (datasets.ts deleteDataset sends its job): its rows, versions
// (with their errors, metrics and catalog), exports and uploads, then the files they held, then
// its record. Nothing of it was readable from the moment it was deleted; this frees the space.
// Idempotent: a purge cut short is run again by its job's retry.
import type { BlobStore } from '../blobs/blobStore.ts';
import { type Pool, withTransaction } from '../platform/db.ts';
import { deleteRowsOfVersion } from './contractRows.ts';
import { deleteDatasetRecord, isDeleted } from './datasets.ts';
import { deleteExportsOfDataset, exportFilesOfDataset } from './exports.ts';
import { deleteCustomerChanges } from './customerTables.ts';
import { deleteUploadsOfDataset } from './uploads.ts';
import { claimBuild, deleteVersionsOfDataset, versionsOfDataset } from './versions.ts';

/**
 * At deletion, with an object store: its export files are deleted at once, since their presigned
 * download URLs (valid an hour) cannot be withdrawn otherwise. Our own signed URLs check the
 * dataset, so with PostgreSQL the purge may take them later.
 */
export async function withdrawDownloads(pool: Pool, blobs: BlobStore, datasetId: string): Promise<void> {
  if (!blobs.presignDownload) return;
  for (const id of await exportFilesOfDataset(pool, datasetId)) await blobs.delete(id);
}

export type Purged = { versions: number; rows: number; files: number };

export async function purgeDeletedDataset(pool: Pool, blobs: BlobStore, datasetId: string): Promise<Purged | undefined> {
  if (!(await isDeleted(pool, datasetId))) return undefined;
  const versions = await versionsOfDataset(pool, datasetId);
  let rows = 0;
  for (const version of versions) {
    // A build of it still running ends first (it then finds the dataset deleted and rolls back).
    await withTransaction(pool, (client) => claimBuild(client, version.id));
    rows += await deleteRowsOfVersion(pool, version.id);
    await deleteCustomerChanges(pool, version.id); // not the version's: no foreign key (sql/016), or a table of their own (sql/029)
  }
  const exportFiles = await deleteExportsOfDataset(pool, datasetId);
  const deletedVersions = await deleteVersionsOfDataset(pool, datasetId);
  const uploadFiles = await deleteUploadsOfDataset(pool, datasetId);
  const files = [...new Set([...versions.flatMap((v) => [v.blobId, v.rejectedBlobId].filter((id): id is string => id !== null)), ...exportFiles, ...uploadFiles])];
  for (const id of files) await blobs.delete(id).catch(() => {}); // a file already gone is fine; orphans are swept anyway
  await deleteDatasetRecord(pool, datasetId);
  return { versions: deletedVersions, rows, files: files.length };
}
