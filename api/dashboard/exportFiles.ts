// Exports from the dashboard: requested as POST …/exports requests one (the same domain
// functions: an export of a built version, queued for a worker), waited for a little, then
// downloaded from the blob store as a file. Each press of the button is a new export, as each new
// Idempotency-Key is for a program.
import type { Response } from 'express';
import type { Dataset, Tenant } from '../../shared/domain/datasets.ts';
import { type ExportFormat, exportFormat } from '../../shared/domain/exportFormats.ts';
import { createExport, exportFileName, type ExportRecord, findExport } from '../../shared/domain/exports.ts';
import { findExportableVersion } from '../../shared/domain/versions.ts';
import { withTransaction } from '../../shared/platform/db.ts';
import { sendPaced } from '../../shared/platform/pacedWrites.ts';
import type { Deps } from '../defineOperation.ts';

type ExportDeps = Pick<Deps, 'pool' | 'boss' | 'blobs' | 'config'>;

const WAIT_MS = 20_000;

/** A new export of the dataset's active version, waited for up to WAIT_MS; undefined when there is nothing to export. */
export async function requestExport(deps: ExportDeps, tenant: Tenant, dataset: Dataset, format: ExportFormat): Promise<ExportRecord | undefined> {
  const versionId = dataset.activeVersionId;
  if (!versionId) return undefined;
  if (!(await findExportableVersion(deps.pool, tenant, dataset.id, versionId))) return undefined;
  let exp = await withTransaction(deps.pool, (client) => createExport(client, deps.boss, { datasetId: dataset.id, versionId, format }));
  const deadline = Date.now() + WAIT_MS;
  for (let pause = 50; Date.now() < deadline && (exp.status === 'queued' || exp.status === 'building'); pause = Math.min(pause * 2, 500)) {
    await new Promise((resolve) => setTimeout(resolve, pause));
    exp = (await findExport(deps.pool, tenant, dataset.id, exp.id)) ?? exp;
  }
  return exp;
}

/** A ready export's file, streamed from the blob store as a download. */
export async function sendExportDownload(deps: ExportDeps, res: Response, exp: ExportRecord & { blobId: string }): Promise<void> {
  res
    .status(200)
    .set('Content-Type', exportFormat(exp.format).contentType)
    .set('Content-Length', String(exp.bytes))
    .set('Content-Disposition', `attachment; filename="${exportFileName(exp)}"`);
  // At the client's pace, a page at a time: a slow reader holds no connection (as the API's download).
  await sendPaced(res, deps.blobs.readInPages(exp.blobId), deps.config.clientStallTimeoutMs);
}
