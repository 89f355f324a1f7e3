// Exports: request one, wait until it is built, download it as a stream or to a file.
import { createWriteStream } from 'node:fs';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { ExportFailedError } from '../errors.ts';
import { pollUntil } from '../polling.ts';
import type { Transport } from '../transport.ts';
import type { CreateExportParams, Export } from '../types.ts';
import type { MutationOptions } from './datasets.ts';

export class Exports {
  private readonly transport: Transport;

  constructor(transport: Transport) {
    this.transport = transport;
  }

  /** Requests an export of the active version (or `versionId`) as CSV or JSON Lines; it is built in the background. */
  create(datasetId: string, params: CreateExportParams, options: MutationOptions = {}): Promise<Export> {
    return this.transport.json({ method: 'POST', path: `/v1/datasets/${encodeURIComponent(datasetId)}/exports`, json: params, ...options });
  }

  get(datasetId: string, exportId: string): Promise<Export> {
    return this.transport.json({ method: 'GET', path: exportPath(datasetId, exportId) });
  }

  /** Polls until the export is ready (returned) or failed (ExportFailedError). */
  async wait(datasetId: string, exportId: string, options: { timeoutMs?: number } = {}): Promise<Export> {
    const found = await pollUntil(() => this.get(datasetId, exportId), (e) => e.status === 'ready' || e.status === 'failed', `export ${exportId}`, options.timeoutMs);
    if (found.status === 'failed') throw new ExportFailedError(found.id, found.failure);
    return found;
  }

  /** A ready export's file as a stream (never held in memory whole). */
  async download(datasetId: string, exportId: string): Promise<Readable> {
    const response = await this.transport.send({ method: 'GET', path: `${exportPath(datasetId, exportId)}/content`, headers: { accept: '*/*' }, timeoutMs: null });
    return Readable.fromWeb(response.body as import('node:stream/web').ReadableStream);
  }

  /** Writes a ready export's file to `path`. */
  async downloadTo(datasetId: string, exportId: string, path: string): Promise<void> {
    await pipeline(await this.download(datasetId, exportId), createWriteStream(path));
  }
}

const exportPath = (datasetId: string, exportId: string) => `/v1/datasets/${encodeURIComponent(datasetId)}/exports/${encodeURIComponent(exportId)}`;
