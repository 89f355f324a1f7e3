// Versions: created with their build job in one transaction, built by the worker, read by the API.
// Each outcome (active, superseded, failed) is recorded with its event in one transaction, the
// event carrying the version as its GET renders it (renderVersion).
import type { RecognisedColumns, VersionWarning } from '../contract/columns.ts';
import type { PgBoss } from 'pg-boss';
import type { EventType } from '../contract/events.ts';
import { type Client, type Pool, type Queryable, withTransaction, WITHOUT_WAITING_FOR_WAL } from '../platform/db.ts';
import { type FairTurn, priorityOf, takeTurn } from './fairQueues.ts';
import { setActiveVersion, type Tenant } from './datasets.ts';
import { recordEvent } from './events.ts';
import { clearRowErrors, ERRORS_IN_VERSION, pageOfRowErrors } from './versionErrors.ts';
import { newId } from '../platform/ids.ts';
import { Problem, problemTypes } from '../platform/problems.ts';
import { inTransaction, queues } from '../platform/queue.ts';
import { jobOrigin } from '../platform/requestContext.ts';

/** What a build read of its file's header, and the warnings that follow. */
export type Recognised = { columns: RecognisedColumns | null; warnings: VersionWarning[] };

export type VersionStatus = 'queued' | 'building' | 'active' | 'superseded' | 'failed';
export const FINISHED: readonly VersionStatus[] = ['active', 'superseded', 'failed'];

/**
 * What a failed version stores; the full problem document is rendered by the API. Row errors are
 * `ingest-validation-failed`; a file whose build needs more memory than a build may use is
 * `payload-too-large`; a build that failed every attempt for a reason of the service's is `internal`.
 */
export type StoredProblem = { type: 'ingest-validation-failed' | 'payload-too-large' | 'internal'; detail: string; errorCount: number };

export type VersionRecord = {
  id: string;
  datasetId: string;
  seq: number;
  status: VersionStatus;
  blobId: string | null;
  requestPath: string;
  bytesTotal: number | null;
  rowsProcessed: number;
  bytesProcessed: number;
  rowCount: number | null;
  contributingRowCount: number | null;
  problem: StoredProblem | null;
  createdAt: Date;
  completedAt: Date | null;
  /** When its rows were purged (VERSION_RETENTION_DAYS after it was superseded); null while they are kept. */
  rowsPurgedAt: Date | null;
  /** When it became active (null if it never did), and the version active then, which it replaced (null for the first). */
  activatedAt: Date | null;
  replacedVersionId: string | null;
  /** What its header held (null until a build read it), and its warnings. */
  columns: RecognisedColumns | null;
  warnings: VersionWarning[];
};

type Row = {
  id: string;
  dataset_id: string;
  seq: number;
  status: VersionStatus;
  blob_id: string | null;
  request_path: string;
  bytes_total: number | null;
  rows_processed: number;
  bytes_processed: number;
  row_count: number | null;
  contributing_row_count: number | null;
  problem: StoredProblem | null;
  created_at: Date;
  completed_at: Date | null;
  rows_purged_at: Date | null;
  activated_at: Date | null;
  replaced_version_id: string | null;
  columns: RecognisedColumns | null;
  warnings: VersionWarning[] | null;
};

const COLUMNS = `v.id, v.dataset_id, v.seq, v.status, v.blob_id, v.request_path, v.bytes_total, v.rows_processed,
  v.bytes_processed, v.row_count, v.contributing_row_count, v.problem, v.created_at, v.completed_at, v.rows_purged_at, v.activated_at, v.replaced_version_id, v.columns, v.warnings`;

const toRecord = (r: Row): VersionRecord => ({
  id: r.id,
  datasetId: r.dataset_id,
  seq: r.seq,
  status: r.status,
  blobId: r.blob_id,
  requestPath: r.request_path,
  bytesTotal: r.bytes_total,
  rowsProcessed: r.rows_processed,
  bytesProcessed: r.bytes_processed,
  rowCount: r.row_count,
  contributingRowCount: r.contributing_row_count,
  problem: r.problem,
  createdAt: r.created_at,
  completedAt: r.completed_at,
  rowsPurgedAt: r.rows_purged_at,
  activatedAt: r.activated_at,
  replacedVersionId: r.replaced_version_id,
  columns: r.columns,
  warnings: r.warnings ?? [],
});

export const versionNotFound = (id: string) => new Problem('not-found', `No version with id ${JSON.stringify(id)} exists.`);

/**
 * Files of at most this many bytes, whole when their version is created, are built in the express
 * lane: build slots that larger files never take, so that a small file is built within a couple of
 * seconds whatever other accounts have queued or building (contract, "Sharing the service fairly").
 */
export const EXPRESS_BUILD_MAX_BYTES = 1024 * 1024;

/** What a build job carries: the version, where it comes from, and its turn in its lane's fair order. */
export type BuildJob = { versionId: string; datasetId?: string; requestId?: string; accountId?: string; turn?: FairTurn };

/**
 * Sends the build job of a version (in `db`'s transaction, when it is one), in its account's turn
 * (fairQueues.ts). The dataset is the job's group: one build per dataset at a time, anywhere. The
 * express lane takes a small whole file whose dataset has no other version queued or building
 * (one that has waits in the same lane as the build before it, behind it).
 */
async function sendBuildJob(db: Queryable, boss: PgBoss, version: { id: string; datasetId: string }, file: { whole: boolean; bytes: number | null }): Promise<void> {
  const { rows } = await db.query<{ account_id: string; busy: boolean }>(
    `SELECT d.account_id, EXISTS (SELECT 1 FROM versions v WHERE v.dataset_id = d.id AND v.id <> $2 AND v.status IN ('queued', 'building')) AS busy
     FROM datasets d WHERE d.id = $1`,
    [version.datasetId, version.id],
  );
  const { account_id: accountId, busy } = rows[0]!;
  const express = file.whole && file.bytes !== null && file.bytes <= EXPRESS_BUILD_MAX_BYTES && !busy;
  const turn = await takeTurn(db, express ? 'build-express' : 'build', accountId);
  const data: BuildJob = { versionId: version.id, datasetId: version.datasetId, ...jobOrigin(), accountId, turn };
  await boss.send(queues.buildVersion, data, { db: inTransaction(db), group: { id: version.datasetId }, priority: priorityOf(turn) });
}

/**
 * A build job taken too early (an earlier version of its dataset is still queued in the express
 * lane) sent again for a little later, in the same turn.
 */
export async function sendBuildJobLater(boss: PgBoss, job: BuildJob & { datasetId: string }, turn: FairTurn, seconds: number): Promise<void> {
  await boss.send(queues.buildVersion, { ...job, turn }, { group: { id: job.datasetId }, priority: priorityOf(turn), startAfter: seconds });
}

/**
 * A build the express lane could not finish within its threads' memory, sent to the other lane
 * (whose threads may use more) in its account's next turn there.
 */
export async function sendBuildJobToMainLane(pool: Pool, boss: PgBoss, job: BuildJob & { datasetId: string }): Promise<void> {
  await withTransaction(pool, async (client) => {
    const { rows } = await client.query<{ account_id: string }>('SELECT account_id FROM datasets WHERE id = $1', [job.datasetId]);
    if (!rows[0]) return;
    const turn = await takeTurn(client, 'build', rows[0].account_id);
    await boss.send(queues.buildVersion, { ...job, turn }, { db: inTransaction(client), group: { id: job.datasetId }, priority: priorityOf(turn) });
  });
}

/**
 * Whether the version's build may start now, and if so it is marked building at once: not while
 * another version of its dataset is building, nor while an earlier one still waits for its first
 * start. pg-boss's groupConcurrency 1 looks for an active job of the group in the snapshot of
 * the fetch, so two workers fetching at once can each take a job of one dataset; this answers
 * under the dataset's lock, so that of two such builds one starts and the other waits its turn.
 * (A version waiting for its file, having started, holds no later one back: see deferBuild.)
 */
export async function mayStartBuild(pool: Pool, versionId: string, datasetId: string): Promise<boolean> {
  return withTransaction(pool, async (client) => {
    await client.query(`SELECT pg_advisory_xact_lock(hashtext('dataset-builds'), hashtext($1))`, [datasetId]);
    const { rows } = await client.query<{ busy: boolean }>(
      `SELECT EXISTS (SELECT 1 FROM versions e JOIN versions v ON v.dataset_id = e.dataset_id
         WHERE v.id = $1 AND e.id <> v.id AND (e.status = 'building' OR (e.seq < v.seq AND e.status = 'queued' AND e.started_at IS NULL))) AS busy`,
      [versionId],
    );
    if (rows[0]?.busy) return false;
    await client.query(`UPDATE versions SET status = 'building', started_at = clock_timestamp() WHERE id = $1 AND status IN ('queued', 'building')`, [versionId]);
    return true;
  });
}

export async function createVersion(
  client: Client,
  boss: PgBoss,
  input: { datasetId: string; blobId: string; bytesTotal: number | null; requestPath: string; uploadId?: string; whole: boolean },
): Promise<VersionRecord> {
  const { rows } = await client.query<Row>(
    `INSERT INTO versions AS v (id, dataset_id, status, blob_id, upload_id, request_path, bytes_total)
     VALUES ($1, $2, 'queued', $3, $4, $5, $6) RETURNING ${COLUMNS}`,
    [newId('ver'), input.datasetId, input.blobId, input.uploadId ?? null, input.requestPath, input.bytesTotal],
  );
  const version = toRecord(rows[0]!);
  await sendBuildJob(client, boss, version, { whole: input.whole, bytes: input.bytesTotal });
  return version;
}

/**
 * The file of a version created while it streamed in is whole: its size is recorded, and if its
 * build handed its slot back meanwhile (deferBuild: queued again, having started), another build
 * job is sent. The UPDATE holds the version's row, so this and deferBuild are ordered: whichever
 * runs second sees what the other did (see deferBuild), and no version is left queued with no job.
 */
export async function streamedFileArrived(pool: Pool, boss: PgBoss, version: { id: string; datasetId: string }, bytes: number): Promise<void> {
  await withTransaction(pool, async (client) => {
    const { rows } = await client.query<{ deferred: boolean }>(
      `UPDATE versions SET bytes_total = $2 WHERE id = $1 RETURNING status = 'queued' AND started_at IS NOT NULL AS deferred`,
      [version.id, bytes],
    );
    // Not the express lane: that version's dataset had a build under way (this one).
    if (rows[0]?.deferred) await sendBuildJob(client, boss, version, { whole: false, bytes });
  });
}

/**
 * Removes a version whose file never arrived whole (the request failed while streaming it), as
 * if it had never been created; a build that started on it fails and its job ends.
 */
export async function deleteVersion(db: Queryable, versionId: string): Promise<void> {
  await db.query('DELETE FROM versions WHERE id = $1', [versionId]);
}

export async function findVersion(db: Queryable, tenant: Tenant, datasetId: string, versionId: string): Promise<VersionRecord | undefined> {
  const { rows } = await db.query<Row>(
    `SELECT ${COLUMNS} FROM versions v JOIN datasets d ON d.id = v.dataset_id
     WHERE v.id = $1 AND v.dataset_id = $2 AND d.account_id = $3 AND d.mode = $4 AND d.deleted_at IS NULL`,
    [versionId, datasetId, tenant.accountId, tenant.mode],
  );
  return rows[0] && toRecord(rows[0]);
}

/** A version of the dataset that can be exported: built (active or superseded), its rows not purged; else undefined. */
export async function findExportableVersion(db: Queryable, tenant: Tenant, datasetId: string, versionId: string): Promise<VersionRecord | undefined> {
  const version = await findVersion(db, tenant, datasetId, versionId);
  return version && ['active', 'superseded'].includes(version.status) && !version.rowsPurgedAt ? version : undefined;
}

/**
 * The version whose figures a read serves: the one named, if it is of this dataset and became
 * active (now active or superseded); without a name, the active one. Else undefined.
 */
export async function findReadableVersion(db: Queryable, tenant: Tenant, datasetId: string, versionId: string | undefined): Promise<VersionRecord | undefined> {
  const { rows } = await db.query<Row>(
    `SELECT ${COLUMNS} FROM versions v JOIN datasets d ON d.id = v.dataset_id
     WHERE v.id = coalesce($1, d.active_version_id) AND v.dataset_id = $2 AND v.activated_at IS NOT NULL
       AND d.account_id = $3 AND d.mode = $4 AND d.deleted_at IS NULL`,
    [versionId ?? null, datasetId, tenant.accountId, tenant.mode],
  );
  return rows[0] && toRecord(rows[0]);
}

export async function listVersions(
  db: Queryable,
  datasetId: string,
  query: { limit: number; cursor?: string | undefined },
): Promise<{ versions: VersionRecord[]; nextCursor: string | null }> {
  const { rows } = await db.query<Row>(
    `SELECT ${COLUMNS} FROM versions v
     WHERE v.dataset_id = $1 AND ($2::text IS NULL OR v.seq < (SELECT seq FROM versions c WHERE c.id = $2 AND c.dataset_id = $1))
     ORDER BY v.seq DESC LIMIT $3`,
    [datasetId, query.cursor ?? null, query.limit + 1],
  );
  const versions = rows.slice(0, query.limit).map(toRecord);
  return { versions, nextCursor: rows.length > query.limit ? versions.at(-1)!.id : null };
}

/** A version by id, whatever the tenant: for the worker, and for replays (their key is already the tenant's). */
export async function versionById(db: Queryable, versionId: string) {
  const { rows } = await db.query<Row & { account_id: string; mode: 'test' | 'live' }>(
    `SELECT ${COLUMNS}, d.account_id, d.mode FROM versions v JOIN datasets d ON d.id = v.dataset_id WHERE v.id = $1`,
    [versionId],
  );
  const r = rows[0];
  return r && { ...toRecord(r), accountId: r.account_id, mode: r.mode };
}

export const VERSION_FINISHED_CHANNEL = 'version_finished';

// The build's steps, for the worker.

/**
 * Inside the build's transaction: waits until no other build of this version holds it (a retry
 * can start while a stopped worker's build is still finishing), then tells whether it still
 * needs building.
 */
export async function claimBuild(client: Client, versionId: string): Promise<boolean> {
  await client.query(`SELECT pg_advisory_xact_lock(hashtext('build-version'), hashtext($1))`, [versionId]);
  const { rows } = await client.query<{ status: VersionStatus }>('SELECT status FROM versions WHERE id = $1', [versionId]);
  return rows[0] !== undefined && !FINISHED.includes(rows[0].status);
}

/**
 * Marks a version building (again, on a retry): progress reset, errors of an earlier try gone.
 * Committed without waiting for the WAL (WITHOUT_WAITING_FOR_WAL): a crash that lost it loses a
 * build that a retry starts again, and the build's own commit waits for the WAL, this included.
 * The wait was a third of a small build's start.
 */
export async function startBuild(db: Pool, versionId: string): Promise<void> {
  await db.query(
    // Never a finished version: the sweep may have failed it (its file was abandoned) since it was read.
    `UPDATE versions SET status = 'building', started_at = clock_timestamp(), rows_processed = 0, bytes_processed = 0
     FROM ${WITHOUT_WAITING_FOR_WAL}
     WHERE id = $1 AND status IN ('queued', 'building')`,
    [versionId],
  );
  await clearRowErrors(db, versionId);
}

/**
 * The build caught up with a file still arriving slowly and handed its slot back: the version
 * waits, queued, for the job sent when the file is whole (streamedFileArrived), or for the sweep
 * if its writer dies. Returns whether the file was whole by then after all (it arrived between the
 * build's last look and this update): then the caller builds it at once, since the job for it may
 * not have been sent.
 */
export async function deferBuild(db: Queryable, versionId: string): Promise<boolean> {
  await db.query(`UPDATE versions SET status = 'queued', rows_processed = 0, bytes_processed = 0 WHERE id = $1 AND status = 'building'`, [versionId]);
  const { rows } = await db.query<{ whole: boolean }>(
    'SELECT b.bytes IS NOT NULL AS whole FROM versions v JOIN blobs b ON b.id = v.blob_id WHERE v.id = $1',
    [versionId],
  );
  return rows[0]?.whole ?? false;
}

export async function recordProgress(db: Queryable, versionId: string, seen: { rows: number; bytes: number }): Promise<void> {
  // Only while building: a progress sent just before the build committed may land after it, and
  // must not take an active version's figures back (a client saw 105,080 of 200,000 rows, done).
  await db.query(`UPDATE versions SET rows_processed = $2, bytes_processed = $3 WHERE id = $1 AND status = 'building'`, [versionId, seen.rows, seen.bytes]);
}

/** What rendering a version needs: where the API is and where its problem types live. */
export type Views = { baseUrl: string; errorsBase: string };

/** The URL of a version's errors resource. */
export const errorsUrlOf = (baseUrl: string, version: VersionRecord) => `${baseUrl}/v1/datasets/${version.datasetId}/versions/${version.id}/errors`;

/**
 * A failed version's problem as the version object carries it: a 422 holds its first
 * ERRORS_IN_VERSION row errors, how many there are, and where to read them all, so that a version
 * and a list of versions stay small however bad the file was.
 */
async function problemInVersion(db: Queryable, version: VersionRecord, views: Views): Promise<Record<string, unknown> | null> {
  const stored = version.problem;
  if (version.status !== 'failed' || !stored) return null;
  const t = problemTypes[stored.type];
  const base = { type: `${views.errorsBase}/${stored.type}`, title: t.title, status: t.status, detail: stored.detail, instance: version.requestPath };
  if (stored.type !== 'ingest-validation-failed') return { ...base, versionId: version.id };
  const first = await pageOfRowErrors(db, version.id, { limit: ERRORS_IN_VERSION });
  if (first === 'bad-cursor') throw new Error('unreachable: no cursor');
  return { ...base, errors: first.errors, errorCount: stored.errorCount, errorsUrl: errorsUrlOf(views.baseUrl, version), versionId: version.id };
}

/** The version object, as GET …/versions/{id} shows it (and its events carry it). */
export async function renderVersion(db: Queryable, version: VersionRecord, views: Views) {
  return {
    id: version.id,
    object: 'version' as const,
    datasetId: version.datasetId,
    status: version.status,
    rowCount: version.rowCount,
    contributingRowCount: version.contributingRowCount,
    progress: { rowsProcessed: version.rowsProcessed, bytesProcessed: version.bytesProcessed, bytesTotal: version.bytesTotal },
    problem: await problemInVersion(db, version, views),
    createdAt: version.createdAt.toISOString(),
    completedAt: version.completedAt?.toISOString() ?? null,
    rowsPurgedAt: version.rowsPurgedAt?.toISOString() ?? null,
    replacedVersionId: version.replacedVersionId,
    columns: version.columns,
    warnings: version.warnings,
  };
}

/** Records the event of each version that just changed, as its GET now shows it (in the caller's transaction). */
async function recordVersionEvents(db: Queryable, rows: Row[], views: Views): Promise<void> {
  for (const row of rows) {
    const version = toRecord(row);
    const type = `version.${version.status}` as EventType;
    await recordEvent(db, version.datasetId, type, await renderVersion(db, version, views));
  }
}

/**
 * Inside the build's transaction: makes the version the dataset's active one, unless a newer
 * version already is (versions activate in creation order). The version replaced becomes
 * superseded; both events are recorded. The caller commits or rolls back.
 */
export async function activateVersion(
  client: Client,
  version: { id: string; datasetId: string; seq: number },
  counts: { rowCount: number; contributing: number; rowsProcessed: number; bytesProcessed: number },
  recognised: Recognised,
  views: Views,
): Promise<'active' | 'superseded'> {
  const { rows } = await client.query<{ active_seq: number | null; deleted: boolean }>(
    `SELECT a.seq AS active_seq, d.deleted_at IS NOT NULL AS deleted FROM datasets d LEFT JOIN versions a ON a.id = d.active_version_id
     WHERE d.id = $1 FOR UPDATE OF d`,
    [version.datasetId],
  );
  // A dataset deleted meanwhile takes no new version: the build rolls back.
  if (!rows[0] || rows[0].deleted) return 'superseded';
  if (rows[0].active_seq != null && rows[0].active_seq > version.seq) return 'superseded';
  const replaced = await client.query<Row>(
    `UPDATE versions v SET status = 'superseded', superseded_at = clock_timestamp()
     WHERE id = (SELECT active_version_id FROM datasets WHERE id = $1) RETURNING ${COLUMNS}`,
    [version.datasetId],
  );
  const activated = await client.query<Row>(
    `UPDATE versions v SET status = 'active', row_count = $2, contributing_row_count = $3, rows_processed = $4,
       bytes_processed = $5, columns = $6, warnings = $7, completed_at = clock_timestamp(), activated_at = clock_timestamp(), replaced_version_id = $8
     WHERE id = $1 RETURNING ${COLUMNS}`,
    [version.id, counts.rowCount, counts.contributing, counts.rowsProcessed, counts.bytesProcessed, JSON.stringify(recognised.columns), JSON.stringify(recognised.warnings), replaced.rows[0]?.id ?? null],
  );
  await setActiveVersion(client, version.datasetId, version.id);
  await recordVersionEvents(client, [...replaced.rows, ...activated.rows], views);
  await client.query('SELECT pg_notify($1, $2)', [VERSION_FINISHED_CHANNEL, version.id]);
  return 'active';
}

/**
 * Ends a version that did not activate, with its event, and wakes whoever waits for it. A version
 * already finished keeps its outcome (a late failure never overwrites a build that made it).
 * `client` is in a transaction: the outcome and its event commit together.
 */
export async function finishVersion(
  client: Client,
  versionId: string,
  status: 'failed' | 'superseded',
  problem: StoredProblem | null,
  views: Views,
  recognised?: Recognised,
): Promise<void> {
  const { rows } = await client.query<Row>(
    `UPDATE versions v SET status = $2, problem = $3, completed_at = clock_timestamp(),
       superseded_at = CASE WHEN $2 = 'superseded' THEN clock_timestamp() END,
       columns = coalesce($4, columns), warnings = coalesce($5, warnings)
     WHERE id = $1 AND status NOT IN ('active', 'superseded', 'failed') RETURNING ${COLUMNS}`,
    [versionId, status, problem && JSON.stringify(problem), recognised ? JSON.stringify(recognised.columns) : null, recognised ? JSON.stringify(recognised.warnings) : null],
  );
  await recordVersionEvents(client, rows, views);
  if (rows[0]) await client.query('SELECT pg_notify($1, $2)', [VERSION_FINISHED_CHANNEL, versionId]);
}

/** Fails the unfinished versions built from these files, whose upload never completed (in the caller's transaction). */
export async function failVersionsOfAbandonedFiles(client: Client, blobIds: string[], views: Views): Promise<string[]> {
  const problem: StoredProblem = {
    type: 'internal',
    detail: 'The file was not received whole: the service lost the upload while receiving it. Upload the file again.',
    errorCount: 0,
  };
  const { rows } = await client.query<Row>(
    `UPDATE versions v SET status = 'failed', problem = $2, completed_at = clock_timestamp()
     WHERE blob_id = ANY($1) AND status IN ('queued', 'building') RETURNING ${COLUMNS}`,
    [blobIds, JSON.stringify(problem)],
  );
  await recordVersionEvents(client, rows, views);
  for (const row of rows) await client.query('SELECT pg_notify($1, $2)', [VERSION_FINISHED_CHANNEL, row.id]);
  return rows.map((r) => r.id);
}

/**
 * Makes a version buildable again for the operator's retry: one still queued or building, or one
 * that failed on our side (`internal`) with its file kept. False for any other (built, or failed for good).
 */
export async function reopenVersion(db: Queryable, versionId: string): Promise<boolean> {
  const { rowCount } = await db.query(
    `UPDATE versions SET status = 'queued', problem = NULL, completed_at = NULL
     WHERE id = $1 AND blob_id IS NOT NULL AND (status IN ('queued', 'building') OR (status = 'failed' AND problem->>'type' = 'internal'))`,
    [versionId],
  );
  return rowCount === 1;
}

/** A deleted dataset's versions (for its purge): their ids and the files they still hold (their own, and their rejected rows'). */
export async function versionsOfDataset(db: Queryable, datasetId: string): Promise<{ id: string; blobId: string | null; rejectedBlobId: string | null }[]> {
  const { rows } = await db.query<{ id: string; blob_id: string | null; rejected_blob_id: string | null }>(
    'SELECT id, blob_id, rejected_blob_id FROM versions WHERE dataset_id = $1',
    [datasetId],
  );
  return rows.map((r) => ({ id: r.id, blobId: r.blob_id, rejectedBlobId: r.rejected_blob_id }));
}

/** The file of a failed version's rejected rows (rejectedRows.ts), if one was made. */
export async function rejectedFileOf(db: Queryable, versionId: string): Promise<string | null> {
  const { rows } = await db.query<{ rejected_blob_id: string | null }>('SELECT rejected_blob_id FROM versions WHERE id = $1', [versionId]);
  return rows[0]?.rejected_blob_id ?? null;
}

/**
 * Records the file of a version's rejected rows, unless one already is: the file that stands
 * (this one, or the one recorded first).
 */
export async function recordRejectedFile(db: Queryable, versionId: string, blobId: string): Promise<string> {
  const { rows } = await db.query<{ rejected_blob_id: string }>(
    `UPDATE versions SET rejected_blob_id = coalesce(rejected_blob_id, $2) WHERE id = $1 RETURNING rejected_blob_id`,
    [versionId, blobId],
  );
  return rows[0]?.rejected_blob_id ?? blobId;
}

/** Deletes a deleted dataset's versions (their errors, metrics and catalog go with them); the rows are deleted first. */
export async function deleteVersionsOfDataset(db: Queryable, datasetId: string): Promise<number> {
  const { rowCount } = await db.query('DELETE FROM versions WHERE dataset_id = $1', [datasetId]);
  return rowCount ?? 0;
}

/** Superseded versions past their retention whose purge is not finished (sql/030), oldest first: not begun, or cut short after their rows were marked purged. */
export async function versionsPastRetention(db: Queryable, retentionDays: number, limit: number): Promise<{ id: string; datasetId: string }[]> {
  const { rows } = await db.query<{ id: string; dataset_id: string }>(
    `SELECT id, dataset_id FROM versions
     WHERE status = 'superseded' AND purge_finished_at IS NULL
       AND (rows_purged_at IS NOT NULL OR superseded_at < now() - make_interval(days => $1))
     ORDER BY superseded_at LIMIT $2`,
    [retentionDays, limit],
  );
  return rows.map((r) => ({ id: r.id, datasetId: r.dataset_id }));
}

/** Records whether the version's customers are in a table of their own (sql/029; monthlyFigures.ts, customersTableOf). */
export async function markCustomersApart(db: Queryable, versionId: string, apart: boolean): Promise<void> {
  await db.query('UPDATE versions SET customers_apart = $2 WHERE id = $1', [versionId, apart]);
}

/** All that needed the version's rows is gone too (its customers, its changes): its purge is finished (sql/030). */
export async function markPurgeFinished(db: Queryable, versionId: string): Promise<void> {
  await db.query('UPDATE versions SET purge_finished_at = clock_timestamp() WHERE id = $1 AND rows_purged_at IS NOT NULL', [versionId]);
}

/** The version's rows are gone: its record stays, readable, with rowsPurgedAt. Only ever a superseded one. */
export async function markRowsPurged(db: Queryable, versionId: string): Promise<void> {
  await db.query(`UPDATE versions SET rows_purged_at = clock_timestamp() WHERE id = $1 AND status = 'superseded' AND rows_purged_at IS NULL`, [versionId]);
}
