import type { Response } from 'express';
import { z } from 'zod';
import type { BlobStore } from '../../../shared/blobs/blobStore.ts';
import { exportFileName, type ExportRecord } from '../../../shared/domain/exports.ts';
import { EXPORT_FORMAT_NAMES, exportFormat, mediaType } from '../../../shared/domain/exportFormats.ts';
import type { ResponseSpec } from '../../defineOperation.ts';
import { csvExample, jsonlExample } from '../../examples.ts';
import { Problem } from '../../../shared/platform/problems.ts';
import { sendPaced } from '../../../shared/platform/pacedWrites.ts';

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

/** The answer of both download routes: the file, in the format the export was requested in. */
export const exportFileAnswer: ResponseSpec = {
  description:
    'The file (CSV or JSONL, as the export was requested), sent at the pace the client reads it; a client that takes nothing of it for CLIENT_STALL_TIMEOUT_MS (60 s by default) has its connection closed.',
  contentType: mediaType('csv'),
  schema: z.string(),
  example: csvExample,
  alternatives: { [mediaType('jsonl')]: { schema: z.string(), example: jsonlExample } },
  headers: { 'Content-Disposition': 'attachment; filename="exp_….csv"' },
};

/** `a`, `a or b`, `a, b or c`: for the reference's prose about the formats. */
export const orList = (items: string[]) => (items.length < 2 ? items.join('') : `${items.slice(0, -1).join(', ')} or ${items.at(-1)}`);

/**
 * Sends a ready export's file as a download, a page at a time at the client's pace: no connection
 * is held while the client reads, and one that takes nothing for `stallMs` is cut off
 * (shared/platform/pacedWrites.ts). A HEAD gets its headers (with the length) and no read.
 */
export async function sendExportFile(blobs: BlobStore, res: Response, exp: ExportRecord, stallMs: number): Promise<void> {
  if (exp.status !== 'ready' || !exp.blobId) {
    throw new Problem('conflict', `The export is ${exp.status}, not ready: GET the export until its status is ready.`);
  }
  res
    .status(200)
    .set('Content-Type', exportFormat(exp.format).contentType)
    .set('Content-Length', String(exp.bytes))
    .set('Content-Disposition', `attachment; filename="${exportFileName(exp)}"`)
    .set('Cache-Control', 'private, no-store');
  if (res.req.method === 'HEAD') return void res.end();
  await sendPaced(res, blobs.readInPages(exp.blobId), stallMs);
}
