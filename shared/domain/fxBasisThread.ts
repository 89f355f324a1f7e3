// The thread on which a process makes (or reads) versions' bases for conversion to a reporting
// currency (fxBasisMaker.ts): one at a time, each in a transaction of its own, on a connection of
// its own.
import { parentPort, workerData } from 'node:worker_threads';
import type { FxBasis } from '../figures/fxBasis.ts';
import { createPool } from '../platform/db.ts';
import { readFxBasis } from './monthlyFigures.ts';

export type ToFxBasisThread = { id: number; versionId: string };
export type FromFxBasisThread = { id: number; basis: FxBasis } | { id: number; error: { name: string; message: string; code?: string } };

const { databaseUrl } = workerData as { databaseUrl: string };
const pool = createPool(databaseUrl, 1, 'dataset-service-fx-basis');
const port = parentPort!;

port.on('message', ({ id, versionId }: ToFxBasisThread) => {
  readFxBasis(pool, versionId).then(
    (basis) => port.postMessage({ id, basis } satisfies FromFxBasisThread),
    (error: Error & { code?: string }) => port.postMessage({ id, error: { name: error.name, message: error.message, ...(error.code ? { code: error.code } : {}) } } satisfies FromFxBasisThread),
  );
});
port.on('close', () => void pool.end());
