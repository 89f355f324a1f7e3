// The build-version job: runs the version's build (worker/jobs/versionBuild.ts) on one of the
// worker's build threads, then logs and meters it. A failure the same file would meet again (the
// build ran out of its thread's memory; PostgreSQL refused a value as data) fails the version at
// once; any other is retried by pg-boss, and the last attempt's failure fails the version. A job
// whose attempts never returned (a worker or thread that died, no heartbeat) ends in the dead-letter
// queue, whose consumer fails the version if it is still unfinished.
import type { Job, PgBoss } from 'pg-boss';
import { CONTRACT_FIELDS } from '../../shared/contract/fields.ts';
import { withTransaction, type Pool } from '../../shared/platform/db.ts';
import type { Logger } from '../../shared/platform/log.ts';
import { BUILD_RETRY_LIMIT, queues } from '../../shared/platform/queue.ts';
import { convertsFigures } from '../../shared/domain/figuresBackfill.ts';
import { analyzeSharedCustomersAfter } from '../../shared/domain/customerTables.ts';
import type { UsageMeter } from '../../shared/tenancy/usage.ts';
import { type Lane, turnOf, turnTaken } from '../../shared/domain/fairQueues.ts';
import {
  type BuildJob,
  claimBuild,
  finishVersion,
  mayStartBuild,
  sendBuildJobLater,
  sendBuildJobToMainLane,
  type StoredProblem,
  type Views,
} from '../../shared/domain/versions.ts';
import { BuildOutOfMemory, type BuildThreads } from '../buildThreads.ts';

export type { BuildJob };

/** How long a build taken while another of its dataset runs waits before it is tried again. */
const WAIT_FOR_DATASET_SECONDS = 1;

/** What every log line of a build job names, so that a request can be followed to its build. */
const jobFields = (job: Job<BuildJob>) => {
  const { versionId, datasetId, requestId, accountId } = job.data;
  return { jobId: job.id, versionId, datasetId, accountId, requestId };
};

/** The file's columns by contract_rows column, for a data error PostgreSQL reports by column. */
const FIELDS: Record<string, string> = Object.fromEntries(CONTRACT_FIELDS.map((f) => [f.column, f.name]));

/**
 * A failure retrying cannot change: its problem, or undefined for one worth retrying. SQLSTATE
 * class 22 (data exception: a NUL byte, a value out of range) is a value of the file PostgreSQL
 * will refuse again, the same way.
 */
export function deterministicProblem(error: unknown): StoredProblem | undefined {
  if (error instanceof BuildOutOfMemory) {
    return {
      type: 'payload-too-large',
      detail:
        `Building this file needed more memory than a build may use (${error.limitMb} MiB), so the build stopped and nothing was written. ` +
        'Retrying the same file will not help.',
      errorCount: 0,
    };
  }
  const { code, where } = (error ?? {}) as { code?: unknown; where?: unknown };
  if (typeof code === 'string' && code.startsWith('22')) {
    const column = typeof where === 'string' ? /\bcolumn (\w+)/.exec(where)?.[1] : undefined;
    const field = column && FIELDS[column];
    return {
      type: 'ingest-validation-failed',
      detail:
        `The file holds a value that cannot be stored${field ? ` in ${field}` : ''} (${(error as Error).message}), so nothing was written. ` +
        'Retrying the same file will not help: correct the value and upload the file again.',
      errorCount: 0,
    };
  }
  return undefined;
}

const UNFINISHED: StoredProblem = {
  type: 'internal',
  detail: 'The version could not be built: every attempt failed. Upload the file again.',
  errorCount: 0,
};

/**
 * The consumer of one lane's build jobs (`lane`: build, or build-express for small files). The
 * lane's fair clock moves to the job's turn as it starts (shared/domain/fairQueues.ts).
 */
export function buildVersion(pool: Pool, boss: PgBoss, threads: BuildThreads, meter: UsageMeter, views: Views, log: Logger, lane: Lane) {
  return async ([job]: Job<BuildJob>[]): Promise<void> => {
    const { versionId, datasetId } = job!.data;
    const fields = jobFields(job!);
    const turn = turnOf(job!.data) ?? { lane, start: 0 };
    // A dataset's builds run one at a time, in creation order, in either lane: one sent to this
    // lane while another of its dataset builds, or an earlier one still waits (in the express lane
    // too), goes after it (mayStartBuild).
    if (lane !== 'build-express' && datasetId !== undefined && !(await mayStartBuild(pool, versionId, datasetId))) {
      await sendBuildJobLater(boss, { ...job!.data, datasetId }, turn, WAIT_FOR_DATASET_SECONDS);
      log.info(fields, 'build waits for another version of its dataset');
      return;
    }
    await turnTaken(pool, turn).catch((error: unknown) => log.warn({ err: error, ...fields }, 'fair clock not moved'));
    const started = performance.now();
    try {
      const built = await threads.run(versionId, job!.signal);
      if (built.outcome === 'skipped') return; // already built (a retry after a commit)
      if (built.outcome === 'deferred') {
        log.info(fields, 'build deferred until its file has arrived');
        return;
      }
      if (built.outcome === 'active') {
        meter.add(built.accountId!, built.mode!, 'rows_ingested', built.rowCount);
        // Its basis for a reporting currency, made now rather than at its first reporting read (a miss costs that read only).
        const ahead = await convertsFigures(pool, built.accountId!, built.mode!).catch(() => false);
        if (ahead) await boss.send(queues.backfillFigures, {}).catch((error: unknown) => log.warn({ err: error, ...fields }, 'basis for conversion not sent ahead'));
        if (!built.customersApart) await analyzeSharedCustomersAfter(pool, built.rowCount).catch((error: unknown) => log.warn({ err: error, ...fields }, 'customers not analyzed'));
      }
      log.info(
        { ...fields, accountId: built.accountId ?? fields.accountId, mode: built.mode, outcome: built.outcome, rows: built.rows, errors: built.errors, readsIn: built.readsIn, customersStreamed: built.customersStreamed, tallyGaveUpOn: built.tallyGaveUpOn, ...built.timings, ms: Math.round(performance.now() - started) },
        'version built',
      );
    } catch (error) {
      if (lane === 'build-express' && error instanceof BuildOutOfMemory && datasetId !== undefined) {
        // Not the file's fault: the express lane's threads have a small heap. The other lane builds it.
        log.warn({ ...fields, limitMb: error.limitMb }, 'small build ran out of the express lane\'s memory; sent to the other lane');
        return sendBuildJobToMainLane(pool, boss, { ...job!.data, datasetId });
      }
      const problem = deterministicProblem(error);
      log.error({ err: error, ...fields, attempt: job!.retryCount, retried: !problem && job!.retryCount < BUILD_RETRY_LIMIT }, 'build failed');
      if (problem) return failUnfinished(pool, views, versionId, problem);
      if (job!.retryCount >= BUILD_RETRY_LIMIT) await failUnfinished(pool, views, versionId, UNFINISHED);
      throw error;
    }
  };
}

/**
 * Fails the version unless it finished. Under the build's lock: a build still running elsewhere
 * (an attempt whose worker lost its claim but not its connection) ends before this decides.
 */
async function failUnfinished(pool: Pool, views: Views, versionId: string, problem: StoredProblem): Promise<void> {
  await withTransaction(pool, async (client) => {
    if (await claimBuild(client, versionId)) await finishVersion(client, versionId, 'failed', problem, views);
  });
}

/** The dead-letter queue's consumer: a build job whose every attempt failed or never returned. */
export function buildVersionDead(pool: Pool, views: Views, log: Logger) {
  return async (jobs: Job<BuildJob>[]): Promise<void> => {
    for (const job of jobs) {
      const { versionId } = job.data;
      log.warn(jobFields(job), 'build dead-lettered; failing the version if unfinished');
      await failUnfinished(pool, views, versionId, UNFINISHED);
    }
  };
}
