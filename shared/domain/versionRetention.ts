// Retention of superseded versions (contract, "Deleting and keeping data"): VERSION_RETENTION_DAYS
// after a version was superseded, its rows are purged with what needs them (its exports, each
// customer's changes, its changes since and to other versions); the version record stays, with
// rowsPurgedAt, and so do its metrics, catalog and cohorts (small: read with ?versionId=);
// exporting it, its customers and its changes answer 404. The active version is
// never touched (only superseded versions are taken, and a superseded one never becomes active
// again). Rows go in batches (contractRows.ts), so a purge blocks neither builds nor reads; a
// purge cut short (a worker killed) is taken again by the next run, as the version is not marked
// purged until its rows are gone, nor its purge finished until its customers and changes are too
// (sql/030).
import type { BlobStore } from '../blobs/blobStore.ts';
import { isLockNotAvailable, type Pool } from '../platform/db.ts';
import { deleteRowsOfVersion } from './contractRows.ts';
import { deleteExportsOfVersion } from './exports.ts';
import { fxBasisApart } from './fxBasisMaker.ts';
import { deleteCustomerChanges } from './customerTables.ts';
import { deleteChangesOfVersion } from './versionChanges.ts';
import { markPurgeFinished, markRowsPurged, versionsPastRetention } from './versions.ts';

/** `held`: versions whose customers a read held past the wait (their purge finishes at a later run). */
export type RetentionRun = { versions: number; rows: number; files: number; held: number };

export async function purgeVersionsPastRetention(
  pool: Pool,
  blobs: BlobStore,
  retentionDays: number,
  options: { batchRows?: number; limit?: number; onBatch?: (versionId: string, deleted: number) => void; lockTimeoutMs?: number } = {},
): Promise<RetentionRun> {
  const run: RetentionRun = { versions: 0, rows: 0, files: 0, held: 0 };
  for (const version of await versionsPastRetention(pool, retentionDays, options.limit ?? 100)) {
    // The exports first: from here on exporting it answers 404, and no download reads rows being deleted.
    const files = await deleteExportsOfVersion(pool, version.id);
    for (const id of files) await blobs.delete(id).catch(() => {}); // an orphan left is swept later
    run.rows += await deleteRowsOfVersion(pool, version.id, { batchRows: options.batchRows, onBatch: (n) => options.onBatch?.(version.id, n) });
    await markRowsPurged(pool, version.id);
    // After the mark, from which its customers and changes answer 404 (changes computed while the rows were going included).
    // Its basis for a reporting currency is made from them first, if no reporting read made it yet: its customers of
    // several currencies are counted once each from there, and would otherwise be counted once per currency.
    await fxBasisApart(pool, version.id);
    try {
      await deleteCustomerChanges(pool, version.id, options.lockTimeoutMs);
    } catch (error) {
      if (!isLockNotAvailable(error)) throw error;
      run.held++; // a read holds its table of customers: the next run drops it, the others go on now
      continue;
    }
    await deleteChangesOfVersion(pool, version.id);
    await markPurgeFinished(pool, version.id);
    run.versions++;
    run.files += files.length;
  }
  return run;
}
