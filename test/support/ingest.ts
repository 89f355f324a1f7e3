import { CONTRACT_HEADER } from './contracts.ts';
import type { Reply, TestService } from './service.ts';
import type { BuildOptions } from '../../worker/jobs/versionBuild.ts';

/** The contract's header line, without its line break: hand-written rows give their cells in its order. */
export const HEADER = CONTRACT_HEADER.trimEnd();

export async function newDataset(svc: TestService, key: string, externalRef = `ds-${Math.random()}`): Promise<string> {
  const reply = await svc.request('/v1/datasets', { key, json: { externalRef } });
  if (reply.status !== 201) throw new Error(`dataset not created: ${reply.text}`);
  return reply.json.id;
}

export function postCsv(svc: TestService, key: string, datasetId: string, csv: string | Buffer, options: { wait?: number; idempotencyKey?: string } = {}): Promise<Reply> {
  return svc.request(`/v1/datasets/${datasetId}/versions`, {
    key,
    body: csv,
    headers: { 'content-type': 'text/csv', ...(options.wait !== undefined && { prefer: `wait=${options.wait}` }) },
    ...(options.idempotencyKey && { idempotencyKey: options.idempotencyKey }),
  });
}

/** The error entries as "row:field:code" strings, in order. */
export const codes = (reply: Reply): string[] => reply.json.errors.map((e: { row: number; field: string; code: string }) => `${e.row}:${e.field}:${e.code}`);

/**
 * Runs the real build for a version now, in this process (for services without a worker), with
 * the build's options (e.g. lowered tally limits). Returns how it ended.
 */
export async function buildNow(svc: TestService, versionId: string, options: BuildOptions = {}) {
  const { buildVersionNow } = await import('../../worker/jobs/versionBuild.ts');
  return buildVersionNow(svc.db, svc.blobs, svc.config, versionId, new AbortController().signal, options);
}
