// Exports: a version's rows in one of the formats of shared/domain/exportFormats.ts, written by
// a worker with COPY … TO STDOUT straight into the blob store, downloaded as a stream.
import type { Readable } from 'node:stream';
import type { PgBoss } from 'pg-boss';
import { to as copyTo } from 'pg-copy-streams';
import type { Client, Queryable } from '../platform/db.ts';
import type { Tenant } from './datasets.ts';
import { type ExportFormat, exportFormat } from './exportFormats.ts';
import { checkedId, newId } from '../platform/ids.ts';
import { inTransaction, queues } from '../platform/queue.ts';
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
  await boss.send(queues.buildExport, { exportId: created.id, datasetId: input.datasetId, ...jobOrigin() }, { db: inTransaction(client) });
  return created;
}

export async function findExport(db: Queryable, tenant: Tenant, datasetId: string, exportId: string): Promise<ExportRecord | undefined> {
  const { rows } = await db.query<Row>(
    `SELECT e.* FROM exports e JOIN datasets d ON d.id = e.dataset_id
     WHERE e.id = $1 AND e.dataset_id = $2 AND d.account_id = $3 AND d.mode = $4`,
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
     FROM exports e JOIN datasets d ON d.id = e.dataset_id JOIN versions v ON v.id = e.version_id WHERE e.id = $1`,
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

export async function markExportReady(db: Queryable, exportId: string, file: { blobId: string; bytes: number; rowCount: number }): Promise<void> {
  await db.query(
    `UPDATE exports SET status = 'ready', blob_id = $2, bytes = $3, row_count = $4, completed_at = clock_timestamp(),
       expires_at = clock_timestamp() + interval '${EXPORT_RETENTION}' WHERE id = $1`,
    [exportId, file.blobId, file.bytes, file.rowCount],
  );
}

/** Fails an export that is not finished yet (a late failure never overwrites a file that was built). */
export async function markExportFailed(db: Queryable, exportId: string, failure: string): Promise<void> {
  await db.query(`UPDATE exports SET status = 'failed', failure = $2, completed_at = clock_timestamp() WHERE id = $1 AND status NOT IN ('ready', 'failed')`, [
    exportId,
    failure,
  ]);
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
