// Exports: a version's rows in one of the formats of shared/domain/exportFormats.ts, written by
// a worker with COPY … TO STDOUT straight into the blob store, downloaded as a stream. Each
// outcome (ready, failed) is recorded with its event in one transaction.
import type { Readable } from 'node:stream';
import type { PgBoss } from 'pg-boss';
import { to as copyTo } from 'pg-copy-streams';
import type { BlobStore } from '../blobs/blobStore.ts';
import type { Client, Queryable } from '../platform/db.ts';
import type { Tenant } from './datasets.ts';
import { recordEvent } from './events.ts';
import { type ExportFormat, exportFormat } from './exportFormats.ts';
import { checkedId, newId } from '../platform/ids.ts';
import { SIGNED_URL_TTL_SECONDS, signingSecret, signPath } from '../platform/signedUrls.ts';
import { inTransaction, queues } from '../platform/queue.ts';
import { priorityOf, takeTurn } from './fairQueues.ts';
import { jobOrigin } from '../platform/requestContext.ts';

export const EXPORT_RETENTION = '7 days';
export const exportPath = (id: string) => `/exports/${id}/download`;

export type ExportRecord = {
  id: string;
  datasetId: string;
  versionId: string;
  format: ExportFormat;
  status: 'queued' | 'building' | 'ready' | 'failed';
  blobId: string | null;
  rowCount: number | null;
  bytes: number | null;
  failure: string | null;
  createdAt: Date;
  completedAt: Date | null;
  expiresAt: Date | null;
};

type Row = {
  id: string;
  dataset_id: string;
  version_id: string;
  format: ExportFormat;
  status: ExportRecord['status'];
  blob_id: string | null;
  row_count: number | null;
  bytes: number | null;
  failure: string | null;
  created_at: Date;
  completed_at: Date | null;
  expires_at: Date | null;
};

const toRecord = (r: Row): ExportRecord => ({
  id: r.id,
  datasetId: r.dataset_id,
  versionId: r.version_id,
  format: r.format,
  status: r.status,
  blobId: r.blob_id,
  rowCount: r.row_count,
  bytes: r.bytes,
  failure: r.failure,
  createdAt: r.created_at,
  completedAt: r.completed_at,
  expiresAt: r.expires_at,
});

/** The export row and its build job, in the caller's transaction. */
export async function createExport(
  client: Client,
  boss: PgBoss,
  input: { datasetId: string; versionId: string; format: ExportFormat },
): Promise<ExportRecord> {
  const { rows } = await client.query<Row>(
    `INSERT INTO exports (id, dataset_id, version_id, format, status) VALUES ($1, $2, $3, $4, 'queued') RETURNING *`,
    [newId('exp'), input.datasetId, input.versionId, input.format],
  );
  const created = toRecord(rows[0]!);
  // In its account's turn: accounts' exports are taken in turn (fairQueues.ts).
  const { rows: owner } = await client.query<{ account_id: string }>('SELECT account_id FROM datasets WHERE id = $1', [input.datasetId]);
  const turn = await takeTurn(client, 'export', owner[0]!.account_id);
  await boss.send(
    queues.buildExport,
    { exportId: created.id, datasetId: input.datasetId, ...jobOrigin(), turn },
    { db: inTransaction(client), priority: priorityOf(turn) },
  );
  return created;
}

export async function findExport(db: Queryable, tenant: Tenant, datasetId: string, exportId: string): Promise<ExportRecord | undefined> {
  const { rows } = await db.query<Row>(
    `SELECT e.* FROM exports e JOIN datasets d ON d.id = e.dataset_id
     WHERE e.id = $1 AND e.dataset_id = $2 AND d.account_id = $3 AND d.mode = $4 AND d.deleted_at IS NULL`,
    [exportId, datasetId, tenant.accountId, tenant.mode],
  );
  return rows[0] && toRecord(rows[0]);
}

/** For signed downloads and the worker: the export whatever the tenant, with its version's row count. */
export async function exportById(
  db: Queryable,
  exportId: string,
): Promise<(ExportRecord & { accountId: string; mode: 'test' | 'live'; versionRowCount: number }) | undefined> {
  const { rows } = await db.query<Row & { account_id: string; mode: 'test' | 'live'; version_row_count: number | null }>(
    `SELECT e.*, d.account_id, d.mode, v.row_count AS version_row_count
     FROM exports e JOIN datasets d ON d.id = e.dataset_id JOIN versions v ON v.id = e.version_id WHERE e.id = $1 AND d.deleted_at IS NULL`,
    [exportId],
  );
  const r = rows[0];
  return r && { ...toRecord(r), accountId: r.account_id, mode: r.mode, versionRowCount: r.version_row_count ?? 0 };
}

/**
 * The COPY … TO STDOUT statement for a version's rows in the format (COPY takes no parameters: the
 * id is checked against our id format before it is inlined).
 */
export function exportCopySql(versionId: string, format: ExportFormat): string {
  return exportFormat(format).copySql(`FROM contract_rows WHERE version_id = '${checkedId('ver', versionId)}' ORDER BY row_number`);
}

/** The version's rows in the format, streamed out of PostgreSQL on `client` (COPY … TO STDOUT). */
export function exportRowsOut(client: Client, versionId: string, format: ExportFormat): Readable {
  return client.query(copyTo(exportCopySql(versionId, format)));
}

export async function markExportBuilding(db: Queryable, exportId: string): Promise<void> {
  await db.query(`UPDATE exports SET status = 'building' WHERE id = $1`, [exportId]);
}

/** What rendering an export needs: its download URL is signed by the blob store or by us. */
export type ExportViews = { pool: Queryable; blobs: BlobStore; config: { baseUrl: string } };

export const exportFileName = (exp: ExportRecord) => `${exp.id}.${exportFormat(exp.format).extension}`;

/** The export as the API shows it (and its events carry it); when ready, a fresh downloadUrl (the object store's own, if there is one). */
export async function renderExport(views: ExportViews, exp: ExportRecord) {
  let downloadUrl: string | null = null;
  if (exp.status === 'ready' && exp.blobId) {
    downloadUrl = views.blobs.presignDownload
      ? await views.blobs.presignDownload(exp.blobId, { filename: exportFileName(exp), contentType: exportFormat(exp.format).contentType }, SIGNED_URL_TTL_SECONDS)
      : views.config.baseUrl + signPath(await signingSecret(views.pool), exportPath(exp.id), Math.floor(Date.now() / 1000) + SIGNED_URL_TTL_SECONDS);
  }
  return {
    id: exp.id,
    object: 'export' as const,
    datasetId: exp.datasetId,
    versionId: exp.versionId,
    format: exp.format,
    status: exp.status,
    rowCount: exp.rowCount,
    bytes: exp.bytes,
    failure: exp.failure,
    createdAt: exp.createdAt.toISOString(),
    completedAt: exp.completedAt?.toISOString() ?? null,
    expiresAt: exp.expiresAt?.toISOString() ?? null,
    downloadUrl,
  };
}

/** The export is built, with its `export.ready` event (in the caller's transaction). */
export async function markExportReady(client: Client, views: ExportViews, exportId: string, file: { blobId: string; bytes: number; rowCount: number }): Promise<void> {
  const { rows } = await client.query<Row>(
    `UPDATE exports SET status = 'ready', blob_id = $2, bytes = $3, row_count = $4, completed_at = clock_timestamp(),
       expires_at = clock_timestamp() + interval '${EXPORT_RETENTION}' WHERE id = $1 RETURNING *`,
    [exportId, file.blobId, file.bytes, file.rowCount],
  );
  for (const row of rows) await recordEvent(client, row.dataset_id, 'export.ready', await renderExport(views, toRecord(row)));
}

/**
 * Fails an export that is not finished yet, with its `export.failed` event (in the caller's
 * transaction); a late failure never overwrites a file that was built.
 */
export async function markExportFailed(client: Client, views: ExportViews, exportId: string, failure: string): Promise<void> {
  const { rows } = await client.query<Row>(
    `UPDATE exports SET status = 'failed', failure = $2, completed_at = clock_timestamp() WHERE id = $1 AND status NOT IN ('ready', 'failed') RETURNING *`,
    [exportId, failure],
  );
  for (const row of rows) await recordEvent(client, row.dataset_id, 'export.failed', await renderExport(views, toRecord(row)));
}

/** Deletes exports past their expiry; returns their files, for the blob store to delete. */
export async function expiredExports(db: Queryable): Promise<string[]> {
  const { rows } = await db.query<{ blob_id: string | null }>(`DELETE FROM exports WHERE expires_at < now() RETURNING blob_id`);
  return rows.flatMap((r) => (r.blob_id ? [r.blob_id] : []));
}

/** Makes an export buildable again for the operator's retry; false when it is already ready. */
export async function reopenExport(db: Queryable, exportId: string): Promise<boolean> {
  const { rowCount } = await db.query(
    `UPDATE exports SET status = 'queued', failure = NULL, completed_at = NULL WHERE id = $1 AND status <> 'ready'`,
    [exportId],
  );
  return rowCount === 1;
}

/** The files of a dataset's exports. */
export async function exportFilesOfDataset(db: Queryable, datasetId: string): Promise<string[]> {
  const { rows } = await db.query<{ blob_id: string }>('SELECT blob_id FROM exports WHERE dataset_id = $1 AND blob_id IS NOT NULL', [datasetId]);
  return rows.map((r) => r.blob_id);
}

/** Deletes a deleted dataset's exports; their files, for the blob store to delete. */
export async function deleteExportsOfDataset(db: Queryable, datasetId: string): Promise<string[]> {
  const { rows } = await db.query<{ blob_id: string | null }>('DELETE FROM exports WHERE dataset_id = $1 RETURNING blob_id', [datasetId]);
  return rows.flatMap((r) => (r.blob_id ? [r.blob_id] : []));
}

/** Deletes the exports of a version whose rows are purged; their files, for the blob store to delete. */
export async function deleteExportsOfVersion(db: Queryable, versionId: string): Promise<string[]> {
  const { rows } = await db.query<{ blob_id: string | null }>('DELETE FROM exports WHERE version_id = $1 RETURNING blob_id', [versionId]);
  return rows.flatMap((r) => (r.blob_id ? [r.blob_id] : []));
}
