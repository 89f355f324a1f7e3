// A version's build: streams its file from the blob store through the CSV parser and validator
// into contract_rows with COPY, inside one transaction. Any row error rolls it back (nothing is
// written; the version is `failed` with its errors). Otherwise metrics and catalog are computed
// and the version activates in the same transaction, unless a newer version of the dataset is
// already active (then it ends `superseded`). A crash mid-build loses only the uncommitted
// transaction. It runs on a build thread (worker/buildThread.ts), with the thread's own pool and
// blob store; the job around it (worker/jobs/buildVersion.ts) stays in the worker's main thread.
import type { BlobStore } from '../../shared/blobs/blobStore.ts';
import { WriterBehind } from '../../shared/blobs/blobRecords.ts';
import { cancelRunningStatement, type Client, type Pool, withTransaction } from '../../shared/platform/db.ts';
import { copyRowsIn } from '../../shared/domain/contractRows.ts';
import { ErrorSpill, rejectedRowCount } from '../../shared/domain/versionErrors.ts';
import { storeRejectedRows } from '../../shared/domain/rejectedRows.ts';
import { findDuplicates } from '../../shared/ingest/duplicates.ts';
import { parseContracts } from '../../shared/ingest/parseContracts.ts';
import { GuardedTally, limitsForFile, type TallyEnd, type TallyLimits, type TallyResult } from '../../shared/ingest/tally.ts';
import { LocalTallyFeed, type TallyFeed } from '../../shared/ingest/tallyFeed.ts';
import { computeReads, storeReads } from '../../shared/domain/metricsAndCatalog.ts';
import { openCustomersCopy } from '../../shared/domain/customerTables.ts';
import { computeMonthlyFigures, storeMonthlyFigures } from '../../shared/domain/monthlyFigures.ts';
import { COPY_HEADER, discardCustomerLines } from '../../shared/figures/customerChanges.ts';
import { type RecognisedColumns, type VersionWarning, versionWarnings } from '../../shared/contract/columns.ts';
import {
  activateVersion,
  claimBuild,
  deferBuild,
  FINISHED,
  finishVersion,
  recordProgress,
  startBuild,
  type StoredProblem,
  versionById,
  type Views,
} from '../../shared/domain/versions.ts';

const PROGRESS_MS = 500;

type Buildable = NonNullable<Awaited<ReturnType<typeof versionById>>>;

/** How a build ended, for the job that ran it: its log line and the metering of ingested rows. */
export type BuildSummary = {
  /** deferred: the file arrives slowly; the job sent when it is whole builds it. */
  outcome: 'active' | 'failed' | 'superseded' | 'skipped' | 'deferred';
  accountId?: string;
  mode?: 'test' | 'live';
  /** Rows stored (active only). */
  rowCount: number;
  rows: number;
  errors: number;
  readsIn?: 'node' | 'sql';
  /** Whether the customers' rows went to PostgreSQL as the tally's book made them (a tally on a thread of its own), rather than after. */
  customersStreamed?: boolean;
  /** Whether they went to a table of the version's own (sql/029), analyzed as it was indexed. */
  customersApart?: boolean;
  /** Partitions of the book (of 64) the build's own thread walked, helping its tally thread (shared/ingest/bookShare.ts). */
  bookShared?: number;
  /** Why the reads were computed in SQL: what outgrew the tally's limits. */
  tallyGaveUpOn?: string;
  timings?: Record<string, number>;
};

/** How a build may be run otherwise than by default. */
export type BuildOptions = {
  /** What the tally may hold before the reads are computed in SQL (default: DEFAULT_TALLY_LIMITS). */
  tallyLimits?: TallyLimits;
  /**
   * Where the rows are counted, given the file's size in bytes (null: not known yet): by default, or
   * when it answers undefined, in the build's own thread (a build thread hands its tally thread's feed).
   */
  tallyFeed?: (limits: TallyLimits | undefined, fileBytes: number | null) => TallyFeed | undefined;
  /** Rows from which a version's customers get a table of their own (CUSTOMERS_APART_ROWS; sql/029); none if not given. */
  customersApartRows?: number;
  /** Rows from which the build's own thread helps walk the book, when its customers have a table of their own (BOOK_SHARE_ROWS); never if not given. */
  bookShareRows?: number;
  /** Customers' rows of a table of their own from which they are looked up by month and movement by index (LOOKUP_INDEX_ROWS by default). */
  lookupIndexRows?: number;
};

/** Builds the version unless it is already finished (a retry after a commit). */
export async function buildVersionNow(
  pool: Pool,
  blobs: BlobStore,
  views: Views,
  versionId: string,
  signal: AbortSignal,
  options: BuildOptions = {},
): Promise<BuildSummary> {
  const version = await versionById(pool, versionId);
  if (!version || FINISHED.includes(version.status)) return { outcome: 'skipped', rowCount: 0, rows: 0, errors: 0 };
  try {
    return await build(pool, blobs, views, version, signal, options);
  } catch (error) {
    if (!(error instanceof WriterBehind)) throw error;
    // The file arrives slowly: this slot goes to other builds (a slow client costs its own
    // request only); the job sent when the file is whole builds it. If it became whole just now,
    // that job may never come: build it here.
    if (await deferBuild(pool, versionId)) return buildVersionNow(pool, blobs, views, versionId, signal, options);
    return { outcome: 'deferred', rowCount: 0, rows: 0, errors: 0 };
  }
}

/** Durations of the build's phases, for the log line that ends it. */
function phases() {
  const timings: Record<string, number> = {};
  let mark = performance.now();
  return {
    timings,
    end(name: string) {
      const now = performance.now();
      timings[name] = Math.round(now - mark);
      mark = now;
    },
  };
}

async function build(pool: Pool, blobs: BlobStore, views: Views, version: Buildable, signal: AbortSignal, options: BuildOptions): Promise<BuildSummary> {
  const versionId = version.id;
  await startBuild(pool, versionId);
  const spill = new ErrorSpill(pool, versionId);
  let seen = { rows: 0, bytes: 0 };
  const progress = setInterval(() => void recordProgress(pool, versionId, seen).catch(() => {}), PROGRESS_MS);
  const phase = phases();
  let outcome: 'active' | 'failed' | 'superseded';
  let rowCount = 0;
  // Metrics and catalog, counted as the rows stream to COPY.
  // Sized to the file when its size is known: a small file's tally takes kilobytes (limitsForFile).
  const limits = options.tallyLimits ?? limitsForFile(version.bytesTotal);
  const tally: TallyFeed = options.tallyFeed?.(limits, version.bytesTotal) ?? new LocalTallyFeed(new GuardedTally(limits));
  let tallied: TallyEnd | undefined;
  let readsInNode = false;
  let customersStreamed = false;
  let customersApart = false;
  let bookShared = 0;
  let columns: RecognisedColumns | null = null;
  let warnings: VersionWarning[] = [];

  const client = await pool.connect();
  // When this attempt loses its job (a stopping worker hands it back), whatever statement the
  // build is running is cancelled, so the transaction rolls back now rather than at the end.
  const cancel = () => void cancelRunningStatement(pool, client).catch(() => {});
  try {
    signal.addEventListener('abort', cancel, { once: true });
    await client.query('BEGIN');
    if (!(await claimBuild(client, versionId))) {
      await client.query('ROLLBACK');
      return { outcome: 'skipped', rowCount: 0, rows: 0, errors: 0 }; // another attempt built it meanwhile
    }
    // The build's statements are few and large: compiling them (JIT) costs more than it saves.
    await client.query('SET LOCAL jit = off');
    phase.end('startMs');
    const parsed = await parseContracts({
      // pg-boss aborts when this attempt lost its job (a stopping worker hands it back).
      signal,
      source: blobs.read(version.blobId!),
      releaseChunks: true, // the blob's chunks are read for this build alone
      versionId,
      sink: copyRowsIn(client),
      report: (error) => spill.add(error),
      reportsBehind: () => spill.behind(),
      tally,
      progress: (rows, bytes) => (seen = { rows, bytes }),
    });
    seen = { rows: parsed.rows, bytes: parsed.bytes };
    columns = parsed.columns;
    phase.end('copyMs');
    tallied = await tally.end();
    // Distinct hashes prove distinct contractIds; otherwise SQL finds the duplicates (if any).
    const distinctContractIds = tallied.contractIdsDistinct
      ? tallied.presentContractIds
      : await findDuplicates(client, versionId, (error) => spill.add(error));
    await spill.flush();
    phase.end('checkMs');

    if (spill.count > 0) {
      outcome = 'failed';
    } else {
      const apart = seen.rows >= (options.customersApartRows ?? Infinity);
      const share = apart && seen.rows >= (options.bookShareRows ?? Infinity);
      const figures = tallied.complete ? await tallyResult(client, tally, distinctContractIds, versionId, { apart, share, lookupIndexRows: options.lookupIndexRows }) : undefined;
      // Stopped while the customers' rows were being written (their COPY cancelled): not a reason
      // to compute the figures in SQL, and build on without the job.
      signal.throwIfAborted();
      readsInNode = figures !== undefined;
      customersStreamed = figures?.figures.customers.streamed === true;
      bookShared = figures?.partitionsShared ?? 0;
      if (tallied.complete && !figures) tallied = { ...tallied, gaveUpOn: tally.whyLost?.() ?? 'the tally could not give its figures' };
      try {
        const reads = figures
          ? await storeReads(client, versionId, figures)
          : await computeReads(client, versionId, { distinctContractIds });
        rowCount = reads.rowCount;
        phase.end('readsMs');
        // Customers' rows the tally counted go to a table of the version's own from CUSTOMERS_APART_ROWS: streamed there
        // (tallyResult), or held and stored there now. Those computed in SQL go to the shared table.
        const storedApart = await storeMonthlyFigures(client, versionId, figures?.figures ?? (await computeMonthlyFigures(client, versionId)), { apart: apart && readsInNode, lookupIndexRows: options.lookupIndexRows });
        customersApart = (customersStreamed && apart) || storedApart;
        phase.end('figuresMs');
        warnings = versionWarnings(columns, reads);
        // The cancel that a stop sends ends the statement then running, not the ones after it.
        signal.throwIfAborted();
        outcome = await activateVersion(client, version, { ...reads, rowsProcessed: seen.rows, bytesProcessed: seen.bytes }, { columns, warnings }, views);
      } finally {
        discardCustomerLines(figures?.figures.customers); // stored, or not to be
      }
    }
    await client.query(outcome === 'active' ? 'COMMIT' : 'ROLLBACK');
    phase.end('commitMs');
  } catch (error) {
    await client.query('ROLLBACK').catch(() => {});
    await spill.abandon();
    throw error;
  } finally {
    signal.removeEventListener('abort', cancel);
    clearInterval(progress);
    client.release();
    tally.close();
  }

  if (outcome === 'failed') {
    await recordProgress(pool, versionId, seen);
    const rejected = await rejectedRowCount(pool, versionId);
    const problems = `${spill.count} problem${spill.count === 1 ? '' : 's'}`;
    const detail = `${rejected} row${rejected === 1 ? ' was' : 's were'} rejected (${problems}); nothing was written.`;
    const problem: StoredProblem = { type: 'ingest-validation-failed', detail, errorCount: spill.count };
    // The rejected rows as a file of their own, made once, before the outcome is told, so that
    // their GETs read pages of it and never the source again. If it cannot be made now, the first
    // GET of them makes it.
    await storeRejectedRows(pool, blobs, { id: versionId, blobId: version.blobId! }).catch(() => {});
    await withTransaction(pool, (c) => finishVersion(c, versionId, 'failed', problem, views, { columns, warnings: versionWarnings(columns) }));
  } else if (outcome === 'superseded') {
    await withTransaction(pool, (c) => finishVersion(c, versionId, 'superseded', null, views));
  }
  // The file of a version that failed validation stays a while, for its rejected rows (rejectedRows.ts).
  if (outcome !== 'failed') await blobs.delete(version.blobId!);
  return {
    outcome,
    accountId: version.accountId,
    mode: version.mode,
    rowCount,
    rows: seen.rows,
    errors: spill.count,
    readsIn: readsInNode ? 'node' : 'sql',
    customersStreamed,
    customersApart,
    bookShared,
    ...(tallied?.gaveUpOn !== undefined && { tallyGaveUpOn: tallied.gaveUpOn }),
    timings: phase.timings,
  };
}

/**
 * The tally's figures. A tally on a thread of its own streams the customers' rows into their COPY
 * while its book makes them, so that PostgreSQL stores them as the book goes on rather than after
 * it (realistic 10M rows: the book and that COPY took 21 and 17 s one after the other). If the
 * figures cannot be had after all (the thread ended, the COPY failed), what was written goes, back
 * to the savepoint, and the build computes them in SQL. `apart`: into a table of the version's own,
 * indexed once full (sql/029; by month and movement from `lookupIndexRows`). `share`: the build's own thread helps walk the book.
 */
async function tallyResult(
  client: Client,
  tally: TallyFeed,
  distinctContractIds: number,
  versionId: string,
  { apart, share, lookupIndexRows }: { apart: boolean; share: boolean; lookupIndexRows: number | undefined },
): Promise<TallyResult | undefined> {
  if (!tally.streamsLines) return tally.result(distinctContractIds, versionId);
  await client.query('SAVEPOINT customer_rows');
  // The feed ends the COPY with the last of the rows, before the book makes its documents: the
  // table of the version's own is indexed meanwhile (realistic 1M rows: 0.5 s of documents).
  const { copy, stored } = await openCustomersCopy(client, versionId, { apart, lookupIndexRows });
  copy.write(COPY_HEADER); // the rows that follow, the tally's and its helper's, carry none
  // A large build's thread helps walk the book (shared/ingest/bookShare.ts): it has nothing else to do meanwhile.
  const result = await tally.result(distinctContractIds, versionId, copy, share);
  if (result?.figures.customers.streamed) {
    if (!copy.writableEnded) copy.end();
    await stored;
    await client.query('RELEASE SAVEPOINT customer_rows');
    return result;
  }
  copy.destroy(new Error("the tally stopped before the customers' rows were all written"));
  await stored.catch(() => {});
  await client.query('ROLLBACK TO SAVEPOINT customer_rows');
  return result; // undefined: SQL computes the figures
}
