// Datasets, always read and written within one tenant: (account, mode).
import type { Mode } from '../tenancy/apiKeys.ts';
import type { PgBoss } from 'pg-boss';
import { type Pool, prepared, type Queryable, withTransaction } from '../platform/db.ts';
import { inTransaction, queues } from '../platform/queue.ts';
import { recordEvent } from './events.ts';
import { newId } from '../platform/ids.ts';
import { Problem } from '../platform/problems.ts';

export type Tenant = { accountId: string; mode: Mode };

export type Dataset = {
  id: string;
  object: 'dataset';
  externalRef: string;
  name: string | null;
  mode: Mode;
  activeVersionId: string | null;
  createdAt: string;
};

type DatasetRow = {
  id: string;
  external_ref: string;
  name: string | null;
  mode: Mode;
  active_version_id: string | null;
  created_at: Date;
};

const COLUMNS = 'id, external_ref, name, mode, active_version_id, created_at';

const toDataset = (r: DatasetRow): Dataset => ({
  id: r.id,
  object: 'dataset',
  externalRef: r.external_ref,
  name: r.name,
  mode: r.mode,
  activeVersionId: r.active_version_id,
  createdAt: r.created_at.toISOString(),
});

export const datasetNotFound = (id: string) => new Problem('not-found', `No dataset with id ${JSON.stringify(id)} exists.`);

/** A new dataset and its `dataset.created` event, in one transaction; 409 when its externalRef is taken. */
export async function createDataset(pool: Pool, tenant: Tenant, input: { externalRef: string; name?: string | undefined }): Promise<Dataset> {
  return withTransaction(pool, async (client) => {
    const { rows } = await client.query<DatasetRow>(
      `INSERT INTO datasets (id, account_id, mode, external_ref, name) VALUES ($1, $2, $3, $4, $5)
       ON CONFLICT DO NOTHING RETURNING ${COLUMNS}`,
      [newId('ds'), tenant.accountId, tenant.mode, input.externalRef, input.name ?? null],
    );
    if (!rows[0]) {
      const existing = await findDatasetByExternalRef(client, tenant, input.externalRef);
      throw new Problem('conflict', `A dataset with externalRef ${JSON.stringify(input.externalRef)} already exists.`, {
        extensions: { existingId: existing?.id ?? null },
      });
    }
    const dataset = toDataset(rows[0]);
    await recordEvent(client, dataset.id, 'dataset.created', dataset);
    return dataset;
  });
}

const datasetOfTenant = prepared('dataset-by-id', `SELECT ${COLUMNS} FROM datasets WHERE id = $1 AND account_id = $2 AND mode = $3 AND deleted_at IS NULL`);

export async function findDataset(db: Queryable, tenant: Tenant, id: string): Promise<Dataset | undefined> {
  const { rows } = await db.query<DatasetRow>(datasetOfTenant([id, tenant.accountId, tenant.mode]));
  return rows[0] && toDataset(rows[0]);
}

export async function findDatasetByExternalRef(db: Queryable, tenant: Tenant, externalRef: string): Promise<Dataset | undefined> {
  const { rows } = await db.query<DatasetRow>(
    `SELECT ${COLUMNS} FROM datasets WHERE account_id = $1 AND mode = $2 AND external_ref = $3 AND deleted_at IS NULL`,
    [tenant.accountId, tenant.mode, externalRef],
  );
  return rows[0] && toDataset(rows[0]);
}

export type Page<T> = { object: 'list'; data: T[]; nextCursor: string | null };

/** Newest first; the cursor is the id of the last item of the previous page. */
export async function listDatasets(
  db: Queryable,
  tenant: Tenant,
  query: { limit: number; cursor?: string | undefined; externalRef?: string | undefined },
): Promise<Page<Dataset>> {
  const { rows } = await db.query<DatasetRow>(
    `SELECT ${COLUMNS} FROM datasets d
     WHERE account_id = $1 AND mode = $2 AND deleted_at IS NULL
       AND ($3::text IS NULL OR external_ref = $3)
       AND ($4::text IS NULL OR (created_at, id) < (
             SELECT created_at, id FROM datasets c WHERE c.id = $4 AND c.account_id = $1 AND c.mode = $2))
     ORDER BY created_at DESC, id DESC
     LIMIT $5`,
    [tenant.accountId, tenant.mode, query.externalRef ?? null, query.cursor ?? null, query.limit + 1],
  );
  const data = rows.slice(0, query.limit).map(toDataset);
  return { object: 'list', data, nextCursor: rows.length > query.limit ? data.at(-1)!.id : null };
}

export async function cursorIsValid(db: Queryable, tenant: Tenant, cursor: string): Promise<boolean> {
  return (await findDataset(db, tenant, cursor)) !== undefined;
}

/** Points the dataset at its new active version (inside the activation's transaction: versions.ts). */
export async function setActiveVersion(db: Queryable, datasetId: string, versionId: string): Promise<void> {
  await db.query('UPDATE datasets SET active_version_id = $2 WHERE id = $1', [datasetId, versionId]);
}

/**
 * Deletes a dataset: from the commit on it answers 404 everywhere and its externalRef is free
 * again. Its `dataset.deleted` event (the dataset as it was) and the job that purges its data
 * (datasetDeletion.ts) are in the same transaction. False when there is no such dataset.
 */
export async function deleteDataset(pool: Pool, boss: PgBoss, tenant: Tenant, id: string): Promise<boolean> {
  return withTransaction(pool, async (client) => {
    const { rows } = await client.query<DatasetRow>(
      `UPDATE datasets SET deleted_at = now() WHERE id = $1 AND account_id = $2 AND mode = $3 AND deleted_at IS NULL RETURNING ${COLUMNS}`,
      [id, tenant.accountId, tenant.mode],
    );
    if (!rows[0]) return false;
    await recordEvent(client, id, 'dataset.deleted', toDataset(rows[0]));
    await boss.send(queues.purgeDataset, { datasetId: id }, { db: inTransaction(client) });
    return true;
  });
}

/** Whether the dataset was deleted (and is not purged yet). */
export async function isDeleted(db: Queryable, id: string): Promise<boolean> {
  const { rows } = await db.query<{ deleted: boolean }>('SELECT deleted_at IS NOT NULL AS deleted FROM datasets WHERE id = $1', [id]);
  return rows[0]?.deleted ?? false;
}

/** The last step of a deleted dataset's purge: its record (its events stay, for their 30 days). */
export async function deleteDatasetRecord(db: Queryable, id: string): Promise<void> {
  await db.query('UPDATE datasets SET active_version_id = NULL WHERE id = $1 AND deleted_at IS NOT NULL', [id]);
  await db.query('DELETE FROM datasets WHERE id = $1 AND deleted_at IS NOT NULL', [id]);
}

/** An account's datasets (the operator's view), newest first; `mode` narrows to one mode. */
export async function datasetsOfAccount(db: Queryable, accountId: string, options: { mode?: Mode | undefined; limit: number }): Promise<Dataset[]> {
  const { rows } = await db.query<DatasetRow>(
    `SELECT ${COLUMNS} FROM datasets WHERE account_id = $1 AND deleted_at IS NULL AND ($2::text IS NULL OR mode = $2)
     ORDER BY created_at DESC, id DESC LIMIT $3`,
    [accountId, options.mode ?? null, options.limit],
  );
  return rows.map(toDataset);
}

/** A dataset by id whatever its tenant (the operator's view); undefined once deleted. */
export async function datasetById(db: Queryable, id: string): Promise<(Dataset & { accountId: string }) | undefined> {
  const { rows } = await db.query<DatasetRow & { account_id: string }>(`SELECT ${COLUMNS}, account_id FROM datasets WHERE id = $1 AND deleted_at IS NULL`, [id]);
  return rows[0] && { ...toDataset(rows[0]), accountId: rows[0].account_id };
}
