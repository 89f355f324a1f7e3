// The datasets of a tenant as a person's list shows them: each with its active version's row
// count and when its newest version was uploaded, in one query (read only; datasets.ts and
// versions.ts stay the writers).
import type { Queryable } from '../platform/db.ts';
import type { Tenant } from './datasets.ts';

export type DatasetOverview = {
  id: string;
  externalRef: string;
  name: string | null;
  activeVersionId: string | null;
  /** Rows of the active version; null while none is active. */
  activeRowCount: number | null;
  /** When the newest version was created; null before the first upload. */
  lastUploadAt: Date | null;
  createdAt: Date;
};

/** Newest first, `limit` at a time; the cursor is the id of the last dataset of the previous page. */
export async function datasetsOverview(
  db: Queryable,
  tenant: Tenant,
  query: { limit: number; cursor?: string | undefined },
): Promise<{ data: DatasetOverview[]; nextCursor: string | null }> {
  const { rows } = await db.query<{
    id: string;
    external_ref: string;
    name: string | null;
    active_version_id: string | null;
    active_row_count: string | null;
    last_upload_at: Date | null;
    created_at: Date;
  }>(
    `SELECT d.id, d.external_ref, d.name, d.active_version_id, a.row_count AS active_row_count,
            (SELECT max(v.created_at) FROM versions v WHERE v.dataset_id = d.id) AS last_upload_at, d.created_at
     FROM datasets d LEFT JOIN versions a ON a.id = d.active_version_id
     WHERE d.account_id = $1 AND d.mode = $2 AND d.deleted_at IS NULL
       AND ($3::text IS NULL OR (d.created_at, d.id) < (
             SELECT c.created_at, c.id FROM datasets c WHERE c.id = $3 AND c.account_id = $1 AND c.mode = $2))
     ORDER BY d.created_at DESC, d.id DESC
     LIMIT $4`,
    [tenant.accountId, tenant.mode, query.cursor ?? null, query.limit + 1],
  );
  const data = rows.slice(0, query.limit).map((r) => ({
    id: r.id,
    externalRef: r.external_ref,
    name: r.name,
    activeVersionId: r.active_version_id,
    activeRowCount: r.active_row_count === null ? null : Number(r.active_row_count),
    lastUploadAt: r.last_upload_at,
    createdAt: r.created_at,
  }));
  return { data, nextCursor: rows.length > query.limit ? data.at(-1)!.id : null };
}
