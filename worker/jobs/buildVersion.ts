// Builds a version: streams its file from the blob store through the CSV parser and validator
// into contract_rows with COPY, inside one transaction. Any row error rolls it back (nothing is
// written; the version is `failed` with its errors). Otherwise metrics and catalog are computed
// and the version activates in the same transaction, unless a newer version of the dataset is
// already active (then it ends `superseded`). A crash mid-build loses only the uncommitted
// transaction; pg-boss retries the job when the heartbeat stops.
import type { Job } from 'pg-boss';
import { from as copyFrom } from 'pg-copy-streams';
import { deleteBlob, readBlob } from '../../shared/blobs.ts';
import type { Pool } from '../../shared/db.ts';
import { COPY_COLUMNS } from '../../shared/ingest/contractRow.ts';
import { ErrorSpill } from '../../shared/ingest/errorSpill.ts';
import { parseContracts } from '../../shared/ingest/parseContracts.ts';
import type { Logger } from '../../shared/log.ts';
import { BUILD_RETRY_LIMIT } from '../../shared/queue.ts';
import { computeReads } from '../../shared/reads.ts';
import type { UsageMeter } from '../../shared/usage.ts';
import { FINISHED, type StoredProblem, VERSION_FINISHED_CHANNEL, versionForBuild } from '../../shared/versions.ts';

const PROGRESS_MS = 500;

export type BuildJob = { versionId: string };

async function finish(pool: Pool, versionId: string, status: 'failed' | 'superseded', problem: StoredProblem | null): Promise<void> {
  await pool.query(
    `WITH done AS (UPDATE versions SET status = $2, problem = $3, completed_at = clock_timestamp() WHERE id = $1 RETURNING id)
     SELECT pg_notify($4, id) FROM done`,
    [versionId, status, problem && JSON.stringify(problem), VERSION_FINISHED_CHANNEL],
  );
}

/** Reports every later row of a repeated contractId; returns the number of distinct contractIds. */
async function findDuplicates(client: { query: Pool['query'] }, versionId: string, spill: ErrorSpill): Promise<number> {
  // One pass answers both: most files have no duplicate, and the catalog needs the distinct count.
  const { rows: counts } = await client.query<{ distinct_ids: number; repeated: number }>(
    `SELECT count(*) AS distinct_ids, count(*) FILTER (WHERE n > 1) AS repeated
     FROM (SELECT contract_id, count(*) AS n FROM contract_rows WHERE version_id = $1 AND contract_id IS NOT NULL GROUP BY contract_id) g`,
    [versionId],
  );
  const { distinct_ids: distinctIds, repeated } = counts[0]!;
  if (repeated === 0) return distinctIds;
  const { rows } = await client.query<{ row_number: number; contract_id: string; first: number }>(
    `SELECT row_number, contract_id, first FROM (
       SELECT row_number, contract_id, min(row_number) OVER (PARTITION BY contract_id) AS first
       FROM contract_rows WHERE version_id = $1 AND contract_id IS NOT NULL) x
     WHERE row_number > first ORDER BY row_number`,
    [versionId],
  );
  for (const r of rows) {
    spill.add({
      row: Number(r.row_number),
      field: 'contractId',
      code: 'duplicate',
      message: `contractId ${JSON.stringify(r.contract_id)} already appears in row ${r.first}.`,
    });
  }
  return distinctIds;
}

export function buildVersion(pool: Pool, meter: UsageMeter, log: Logger) {
  return async ([job]: Job<BuildJob>[]): Promise<void> => {
    const { versionId } = job!.data;
    const version = await versionForBuild(pool, versionId);
    if (!version || FINISHED.includes(version.status)) return; // already built (a retry after commit)
    try {
      await build(pool, meter, log, version);
    } catch (error) {
      log.error({ err: error, versionId, attempt: job!.retryCount }, 'build failed');
      if (job!.retryCount >= BUILD_RETRY_LIMIT) {
        await finish(pool, versionId, 'failed', { type: 'internal', detail: 'The version could not be built. Upload the file again.', errorCount: 0 });
      }
      throw error;
    }
  };
}

async function build(
  pool: Pool,
  meter: UsageMeter,
  log: Logger,
  version: NonNullable<Awaited<ReturnType<typeof versionForBuild>>>,
): Promise<void> {
  const versionId = version.id;
  await pool.query(
    `UPDATE versions SET status = 'building', started_at = clock_timestamp(), rows_processed = 0, bytes_processed = 0 WHERE id = $1`,
    [versionId],
  );
  await pool.query('DELETE FROM version_errors WHERE version_id = $1', [versionId]);
  const spill = new ErrorSpill(pool, versionId);
  let seen = { rows: 0, bytes: 0 };
  const progress = setInterval(() => {
    void pool
      .query('UPDATE versions SET rows_processed = $2, bytes_processed = $3 WHERE id = $1', [versionId, seen.rows, seen.bytes])
      .catch(() => {});
  }, PROGRESS_MS);

  const client = await pool.connect();
  const timings: Record<string, number> = {};
  let mark = performance.now();
  const phase = (name: string) => {
    const now = performance.now();
    timings[name] = Math.round(now - mark);
    mark = now;
  };
  let outcome: 'active' | 'failed' | 'superseded';
  let rowCount = 0;
  try {
    await client.query('BEGIN');
    const copy = client.query(copyFrom(`COPY contract_rows (${COPY_COLUMNS}) FROM STDIN`));
    const parsed = await parseContracts({
      source: readBlob(pool, version.blobId!),
      versionId,
      sink: copy,
      report: (error) => spill.add(error),
      progress: (rows, bytes) => (seen = { rows, bytes }),
    });
    seen = { rows: parsed.rows, bytes: parsed.bytes };
    phase('copyMs');
    const distinctContractIds = await findDuplicates(client, versionId, spill);
    await spill.flush();
    phase('checkMs');

    if (spill.count > 0) {
      await client.query('ROLLBACK');
      outcome = 'failed';
    } else {
      const reads = await computeReads(client, versionId, { distinctContractIds });
      rowCount = reads.rowCount;
      phase('readsMs');
      // Activation: versions of a dataset activate in creation order.
      const { rows } = await client.query<{ active_seq: number | null }>(
        `SELECT a.seq AS active_seq FROM datasets d LEFT JOIN versions a ON a.id = d.active_version_id WHERE d.id = $1 FOR UPDATE OF d`,
        [version.datasetId],
      );
      if (rows[0]?.active_seq != null && rows[0].active_seq > version.seq) {
        await client.query('ROLLBACK');
        outcome = 'superseded';
      } else {
        await client.query(
          `UPDATE versions SET status = 'superseded' WHERE id = (SELECT active_version_id FROM datasets WHERE id = $1)`,
          [version.datasetId],
        );
        await client.query(
          `UPDATE versions SET status = 'active', row_count = $2, contributing_row_count = $3, rows_processed = $4,
             bytes_processed = $5, completed_at = clock_timestamp() WHERE id = $1`,
          [versionId, reads.rowCount, reads.contributing, seen.rows, seen.bytes],
        );
        await client.query('UPDATE datasets SET active_version_id = $2 WHERE id = $1', [version.datasetId, versionId]);
        await client.query('SELECT pg_notify($1, $2)', [VERSION_FINISHED_CHANNEL, versionId]);
        await client.query('COMMIT');
        phase('commitMs');
        outcome = 'active';
      }
    }
  } catch (error) {
    await client.query('ROLLBACK').catch(() => {});
    throw error;
  } finally {
    clearInterval(progress);
    client.release();
  }

  if (outcome === 'failed') {
    await pool.query('UPDATE versions SET rows_processed = $2, bytes_processed = $3 WHERE id = $1', [versionId, seen.rows, seen.bytes]);
    const { rows } = await pool.query<{ rejected: number }>(
      'SELECT count(DISTINCT row_number) AS rejected FROM version_errors WHERE version_id = $1',
      [versionId],
    );
    const rejected = rows[0]!.rejected;
    const detail = `${rejected} row${rejected === 1 ? ' was' : 's were'} rejected (${spill.count} problem${spill.count === 1 ? '' : 's'}); nothing was written.`;
    await finish(pool, versionId, 'failed', { type: 'ingest-validation-failed', detail, errorCount: spill.count });
  } else if (outcome === 'superseded') {
    await finish(pool, versionId, 'superseded', null);
  } else {
    meter.add(version.accountId, version.mode, 'rows_ingested', rowCount);
  }
  await deleteBlob(pool, version.blobId!);
  log.info({ versionId, outcome, rows: seen.rows, errors: spill.count, ...timings }, 'version built');
}
