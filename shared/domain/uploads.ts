// Upload URLs: a pending upload, a signed PUT URL for it (shared/platform/signedUrls.ts), the file
// streamed into the blob store, then used once.
import type { Queryable } from '../platform/db.ts';
import { setBlobBytes } from '../blobs/blobRecords.ts';
import { newId } from '../platform/ids.ts';
import { SIGNED_URL_TTL_SECONDS } from '../platform/signedUrls.ts';

export type UploadRecord = {
  id: string;
  datasetId: string;
  status: 'pending' | 'uploaded' | 'used';
  filename: string | null;
  contentType: string;
  maxBytes: number;
  blobId: string | null;
  bytes: number | null;
  sha256: Buffer | null;
  expiresAt: Date;
  createdAt: Date;
  /** When a resumable (tus) upload of its file started; null when none is under way. */
  resumableAt: Date | null;
};

type Row = {
  id: string;
  dataset_id: string;
  status: UploadRecord['status'];
  filename: string | null;
  content_type: string;
  max_bytes: number;
  blob_id: string | null;
  bytes: number | null;
  sha256: Buffer | null;
  expires_at: Date;
  created_at: Date;
  resumable_at: Date | null;
};

const toRecord = (r: Row): UploadRecord => ({
  id: r.id,
  datasetId: r.dataset_id,
  status: r.status,
  filename: r.filename,
  contentType: r.content_type,
  maxBytes: r.max_bytes,
  blobId: r.blob_id,
  bytes: r.bytes,
  sha256: r.sha256,
  expiresAt: r.expires_at,
  createdAt: r.created_at,
  resumableAt: r.resumable_at,
});

export const uploadPath = (id: string) => `/uploads/${id}`;

export async function createUpload(
  db: Queryable,
  input: { datasetId: string; filename?: string | undefined; contentType: string; maxBytes: number; blobId?: string },
): Promise<UploadRecord> {
  const { rows } = await db.query<Row>(
    `INSERT INTO uploads (id, dataset_id, status, filename, content_type, max_bytes, blob_id, expires_at)
     VALUES ($1, $2, 'pending', $3, $4, $5, $6, date_trunc('second', now()) + make_interval(secs => $7)) RETURNING *`,
    [newId('upl'), input.datasetId, input.filename ?? null, input.contentType, input.maxBytes, input.blobId ?? null, SIGNED_URL_TTL_SECONDS],
  );
  return toRecord(rows[0]!);
}

/** An upload by id (its URL's signature is the permission); none once its dataset is deleted. */
export async function findUpload(db: Queryable, id: string): Promise<UploadRecord | undefined> {
  const { rows } = await db.query<Row>('SELECT u.* FROM uploads u JOIN datasets d ON d.id = u.dataset_id WHERE u.id = $1 AND d.deleted_at IS NULL', [id]);
  return rows[0] && toRecord(rows[0]);
}

/** Records the file of a pending or uploaded upload; undefined when it was used meanwhile. */
export async function attachBlob(db: Queryable, id: string, blob: { id: string; bytes: number; sha256: Buffer }): Promise<{ previousBlobId: string | null } | undefined> {
  const { rows } = await db.query<{ previous: string | null }>(
    `UPDATE uploads u SET status = 'uploaded', blob_id = $2, bytes = $3, sha256 = $4, uploaded_at = now(), resumable_at = NULL
     FROM (SELECT blob_id AS previous FROM uploads WHERE id = $1 FOR UPDATE) p
     WHERE u.id = $1 AND u.status <> 'used' RETURNING p.previous`,
    [id, blob.id, blob.bytes, blob.sha256],
  );
  return rows[0] && { previousBlobId: rows[0].previous };
}

/** Records a file the client put straight into the object store (its digest is not known). */
export async function markUploaded(db: Queryable, id: string, bytes: number): Promise<void> {
  const { rows } = await db.query<{ blob_id: string | null }>(
    `WITH marked AS (UPDATE uploads SET status = 'uploaded', bytes = $2, uploaded_at = now() WHERE id = $1 AND status = 'pending')
     SELECT blob_id FROM uploads WHERE id = $1`,
    [id, bytes],
  );
  if (rows[0]?.blob_id) await setBlobBytes(db, rows[0].blob_id, bytes);
}

/**
 * Starts the one resumable upload of a pending upload, into its blob: the one it has (an object
 * store's), else `newBlobId`. The blob id and when the upload was requested, or undefined when the
 * upload is not pending or already has a resumable upload.
 */
export async function startResumable(db: Queryable, id: string, newBlobId: string): Promise<{ blobId: string; requestedAt: Date } | undefined> {
  const { rows } = await db.query<{ blob_id: string; created_at: Date }>(
    `UPDATE uploads SET resumable_at = now(), blob_id = coalesce(blob_id, $2)
     WHERE id = $1 AND status = 'pending' AND resumable_at IS NULL RETURNING blob_id, created_at`,
    [id, newBlobId],
  );
  return rows[0] && { blobId: rows[0].blob_id, requestedAt: rows[0].created_at };
}

/**
 * Ends an upload's resumable upload (terminated, or never created): it is pending again, with no
 * file; `blobId` is forgotten when it was made for that upload (an object store's stays).
 */
export async function endResumable(db: Queryable, id: string, forgetBlobId: string | null): Promise<void> {
  await db.query(
    `UPDATE uploads SET resumable_at = NULL, status = 'pending', bytes = NULL, uploaded_at = NULL,
       blob_id = CASE WHEN blob_id = $2 THEN NULL ELSE blob_id END
     WHERE id = $1 AND status <> 'used'`,
    [id, forgetBlobId],
  );
}

/** How long an upload not used by a version is kept, its resumable upload included. */
export const UNUSED_UPLOAD_HOURS = 24;

/** Deletes uploads never used, 24 hours on (their files become orphans: fileRetention.ts). */
export async function deleteUnusedUploads(db: Queryable): Promise<number> {
  const { rowCount } = await db.query(`DELETE FROM uploads WHERE status <> 'used' AND created_at < now() - make_interval(hours => $1)`, [UNUSED_UPLOAD_HOURS]);
  return rowCount ?? 0;
}

/** Marks an uploaded file used by a version (once). The reason when it cannot be. */
export async function useUpload(
  db: Queryable,
  id: string,
  datasetId: string,
): Promise<{ blobId: string; bytes: number } | { refused: 'missing' | 'used' | 'pending' }> {
  const { rows } = await db.query<{ blob_id: string; bytes: number }>(
    `UPDATE uploads SET status = 'used', used_at = now() WHERE id = $1 AND dataset_id = $2 AND status = 'uploaded' RETURNING blob_id, bytes`,
    [id, datasetId],
  );
  if (rows[0]) return { blobId: rows[0].blob_id, bytes: rows[0].bytes };
  const upload = await findUpload(db, id);
  if (!upload || upload.datasetId !== datasetId) return { refused: 'missing' };
  return { refused: upload.status === 'used' ? 'used' : 'pending' };
}

/** Deletes a deleted dataset's uploads (after its versions); their files, for the blob store to delete. */
export async function deleteUploadsOfDataset(db: Queryable, datasetId: string): Promise<string[]> {
  const { rows } = await db.query<{ blob_id: string | null }>('DELETE FROM uploads WHERE dataset_id = $1 RETURNING blob_id', [datasetId]);
  return rows.flatMap((r) => (r.blob_id ? [r.blob_id] : []));
}
