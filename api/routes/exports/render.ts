import type { Response } from 'express';
import { z } from 'zod';
import type { BlobStore } from '../../../shared/blobs/blobStore.ts';
import type { Queryable } from '../../../shared/platform/db.ts';
import { exportPath, type ExportRecord } from '../../../shared/domain/exports.ts';
import { EXPORT_FORMAT_NAMES, exportFormat } from '../../../shared/domain/exportFormats.ts';
import { Problem } from '../../../shared/platform/problems.ts';
import { SIGNED_URL_TTL_SECONDS, signingSecret, signPath } from '../../../shared/platform/signedUrls.ts';
import { pipeline } from 'node:stream/promises';
import { Readable } from 'node:stream';

export const ExportSchema = z
  .object({
    id: z.string(),
    object: z.literal('export'),
    datasetId: z.string(),
    versionId: z.string(),
    format: z.enum(EXPORT_FORMAT_NAMES),
    status: z.enum(['queued', 'building', 'ready', 'failed']),
    rowCount: z.number().int().nullable(),
    bytes: z.number().int().nullable(),
    failure: z.string().nullable().meta({ description: 'Why the build failed, when it did.' }),
    createdAt: z.string().meta({ format: 'date-time' }),
    completedAt: z.string().nullable().meta({ format: 'date-time' }),
    expiresAt: z.string().nullable().meta({ format: 'date-time', description: 'When the file is deleted.' }),
    downloadUrl: z.string().nullable().meta({ description: 'When ready: a signed URL valid one hour, needing no credential.' }),
  })
  .meta({ id: 'Export' });

const fileName = (exp: ExportRecord) => `${exp.id}.${exportFormat(exp.format).extension}`;

/** `a`, `a or b`, `a, b or c`: for the reference's prose about the formats. */
export const orList = (items: string[]) => (items.length < 2 ? items.join('') : `${items.slice(0, -1).join(', ')} or ${items.at(-1)}`);

/** The export as the API shows it; when ready, a fresh downloadUrl (the object store's own, if there is one). */
export async function renderExport(deps: { pool: Queryable; blobs: BlobStore; config: { baseUrl: string } }, exp: ExportRecord) {
  let downloadUrl: string | null = null;
  if (exp.status === 'ready' && exp.blobId) {
    downloadUrl = deps.blobs.presignDownload
      ? await deps.blobs.presignDownload(exp.blobId, { filename: fileName(exp), contentType: exportFormat(exp.format).contentType }, SIGNED_URL_TTL_SECONDS)
      : deps.config.baseUrl + signPath(await signingSecret(deps.pool), exportPath(exp.id), Math.floor(Date.now() / 1000) + SIGNED_URL_TTL_SECONDS);
  }
  return {
    id: exp.id,
    object: 'export' as const,
    datasetId: exp.datasetId,
    versionId: exp.versionId,
    format: exp.format,
    status: exp.status,
    rowCount: exp.rowCount,
    bytes: exp.bytes,
    failure: exp.failure,
    createdAt: exp.createdAt.toISOString(),
    completedAt: exp.completedAt?.toISOString() ?? null,
    expiresAt: exp.expiresAt?.toISOString() ?? null,
    downloadUrl,
  };
}

/** Streams a ready export's file as a download; a HEAD gets its headers (with the length) and no read. */
export async function sendExportFile(blobs: BlobStore, res: Response, exp: ExportRecord): Promise<void> {
  if (exp.status !== 'ready' || !exp.blobId) {
    throw new Problem('conflict', `The export is ${exp.status}, not ready: GET the export until its status is ready.`);
  }
  res
    .status(200)
    .set('Content-Type', exportFormat(exp.format).contentType)
    .set('Content-Length', String(exp.bytes))
    .set('Content-Disposition', `attachment; filename="${fileName(exp)}"`)
    .set('Cache-Control', 'private, no-store');
  if (res.req.method === 'HEAD') return void res.end();
  await pipeline(Readable.from(blobs.read(exp.blobId)), res);
}
