// The thread on which a process reads or makes versions' bases for conversion to a reporting
// currency, and converts with them (fxBasisMaker.ts): one request at a time, each basis in a
// transaction of its own, on a connection of its own. The basis read last is kept while the
// thread lives and its row is unchanged, for the next currency or set of rates asked of the same
// version.
import { parentPort, workerData } from 'node:worker_threads';
import type { FxBasis } from '../figures/fxBasis.ts';
import { convert, convertCohorts, type RateTable, type Reporting, type ReportingCohorts } from '../figures/reporting.ts';
import { createPool } from '../platform/db.ts';
import { fxBasisTag, readFxBasis } from './monthlyFigures.ts';

/** What is asked of a version's basis: only that it be made (and kept), or figures converted with it. */
export type BasisWork = { kind: 'make' } | { kind: 'metrics' | 'cohorts'; table: RateTable; currency: string };
export type BasisAnswer = { kind: 'make' } | { kind: 'metrics'; reporting: Reporting } | { kind: 'cohorts'; cohorts: ReportingCohorts };

export type ToFxBasisThread = { id: number; versionId: string; work: BasisWork };
export type FromFxBasisThread = { id: number; answer: BasisAnswer } | { id: number; error: { name: string; message: string; code?: string } };

const { databaseUrl } = workerData as { databaseUrl: string };
const pool = createPool(databaseUrl, 1, 'dataset-service-fx-basis');
const port = parentPort!;
let last: { versionId: string; tag: string; basis: FxBasis } | undefined;

/** The version's basis: the one read last while its row is unchanged (told by fxBasisTag), else read (or made) now. */
async function basisOf(versionId: string): Promise<FxBasis> {
  if (last?.versionId === versionId && last.tag === (await fxBasisTag(pool, versionId))) return last.basis;
  last = undefined;
  const basis = await readFxBasis(pool, versionId);
  const tag = await fxBasisTag(pool, versionId);
  if (tag !== undefined) last = { versionId, tag, basis };
  return basis;
}

async function answer(versionId: string, work: BasisWork): Promise<BasisAnswer> {
  const basis = await basisOf(versionId);
  if (work.kind === 'make') return { kind: 'make' };
  if (work.kind === 'metrics') return { kind: 'metrics', reporting: convert(basis, work.table, work.currency) };
  return { kind: 'cohorts', cohorts: convertCohorts(basis, work.table, work.currency) };
}

/** Requests are answered one at a time, so that the second of two asked at once of a version finds its basis read. */
let turn = Promise.resolve();

port.on('message', ({ id, versionId, work }: ToFxBasisThread) => {
  turn = turn.then(() => answer(versionId, work)).then(
    (answer) => port.postMessage({ id, answer } satisfies FromFxBasisThread),
    (error: Error & { code?: string }) => port.postMessage({ id, error: { name: error.name, message: error.message, ...(error.code ? { code: error.code } : {}) } } satisfies FromFxBasisThread),
  );
});
port.on('close', () => void pool.end());
