// Versions: upload a contract file and wait for its outcome, read versions, and every row error of
// a failed one (paged, or the rejected rows as CSV to fix in a spreadsheet).
import { randomUUID } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { DatasetServiceError, errorFromProblem, type ProblemDocument } from '../errors.ts';
import { everyItem } from '../pages.ts';
import { pollUntil } from '../polling.ts';
import type { Transport } from '../transport.ts';
import type { ContractChange, ContractChangesParams, Page, PageParams, RowError, Upload, Version, VersionChanges, VersionChangesParams } from '../types.ts';
import { filenameOf, requestBody, sendResumable, sizeOf, type UploadProgress, type UploadSource } from '../uploadSources.ts';
import type { MutationOptions } from './datasets.ts';

/** Files from this size go through the resumable endpoint unless told otherwise. */
export const RESUMABLE_FROM_BYTES = 32 * 1024 * 1024;

export type UploadOptions = MutationOptions & {
  /** Called as bytes go out, then as the version is built (rows processed). */
  onProgress?: (progress: UploadProgress) => void;
  /** Send through the resumable (tus) endpoint: 'auto' (default) from 32 MiB for a path or a sized stream; true; false. */
  resumable?: boolean | 'auto';
  /** Wait for the build's outcome (default). false: return the version as soon as it is queued. */
  wait?: boolean;
  /** How long to wait for the outcome in all, in ms. Default: one hour. */
  waitTimeoutMs?: number;
  /** The file's name, kept with a resumable upload (default: the path's). */
  filename?: string;
};

export type WaitOptions = {
  onProgress?: (progress: UploadProgress) => void;
  /** Default: one hour. */
  timeoutMs?: number;
};

const FINISHED = new Set<Version['status']>(['active', 'superseded', 'failed']);

export class Versions {
  private readonly transport: Transport;

  constructor(transport: Transport) {
    this.transport = transport;
  }

  /**
   * Uploads a contract file as a new version of the dataset and, by default, waits until it is
   * built: the version (active, or superseded when a newer one became active first); an
   * IngestValidationError with the first row errors and errorCount when rows are invalid (nothing
   * was written); PayloadTooLargeError or InternalServerError when it could not be built.
   * Retried with the same Idempotency-Key on a timeout, a dropped connection, 502 or 503.
   */
  async upload(datasetId: string, source: UploadSource, options: UploadOptions = {}): Promise<Version> {
    const key = options.idempotencyKey ?? randomUUID();
    const size = await sizeOf(source);
    const resumable =
      options.resumable === true ||
      (options.resumable !== false && size !== undefined && size >= RESUMABLE_FROM_BYTES && ('path' in source || 'stream' in source));
    const waitSeconds = options.wait === false ? 0 : options.onProgress ? 1 : 60;
    const path = `/v1/datasets/${encodeURIComponent(datasetId)}/versions`;
    const prefer = { prefer: `wait=${waitSeconds}` };
    let answer: Response;
    if (resumable) {
      if (size === undefined) throw new DatasetServiceError('a stream is sent resumably only when its size is given');
      const filename = options.filename ?? filenameOf(source);
      const upload = await this.transport.json<Upload>({
        method: 'POST',
        path: `/v1/datasets/${encodeURIComponent(datasetId)}/uploads`,
        json: filename ? { filename } : {},
        idempotencyKey: `${key}.upload`,
      });
      await sendResumable(upload.tusEndpoint, source, size, filename, options.onProgress);
      answer = await this.transport.send({ method: 'POST', path, json: { uploadId: upload.id }, idempotencyKey: key, headers: prefer, timeoutMs: (waitSeconds + 60) * 1000, passStatuses: [422] });
    } else {
      const raw = requestBody(source, size, options.onProgress);
      answer = await this.transport.send({ method: 'POST', path, raw, idempotencyKey: key, headers: prefer, timeoutMs: null, passStatuses: [422] });
    }
    if (answer.status === 422) throw await this.validationFailure(answer);
    const version = (await answer.json()) as Version;
    if (version.progress) options.onProgress?.({ phase: 'building', versionId: version.id, ...version.progress });
    if (options.wait === false || FINISHED.has(version.status)) return outcome(version);
    return this.wait(datasetId, version.id, { ...(options.onProgress && { onProgress: options.onProgress }), ...(options.waitTimeoutMs && { timeoutMs: options.waitTimeoutMs }) });
  }

  get(datasetId: string, versionId: string): Promise<Version> {
    return this.transport.json({ method: 'GET', path: `/v1/datasets/${encodeURIComponent(datasetId)}/versions/${encodeURIComponent(versionId)}` });
  }

  /** One page of the dataset's versions, newest first. */
  list(datasetId: string, params: PageParams = {}): Promise<Page<Version>> {
    return this.transport.json({ method: 'GET', path: `/v1/datasets/${encodeURIComponent(datasetId)}/versions`, query: params });
  }

  listAll(datasetId: string, params: Omit<PageParams, 'cursor'> = {}): AsyncGenerator<Version, void, undefined> {
    return everyItem((cursor) => this.list(datasetId, { ...params, ...(cursor && { cursor }) }));
  }

  /**
   * Polls the version (quickly at first, then every 2 s) until it is built, reporting its progress:
   * the version when it is active or superseded; the error of its problem when it failed.
   */
  async wait(datasetId: string, versionId: string, options: WaitOptions = {}): Promise<Version> {
    const read = async () => {
      const version = await this.get(datasetId, versionId);
      if (version.progress) options.onProgress?.({ phase: 'building', versionId, ...version.progress });
      return version;
    };
    return outcome(await pollUntil(read, (v) => FINISHED.has(v.status), `version ${versionId}`, options.timeoutMs));
  }

  /** One page of a failed version's row errors, in row order. */
  listErrors(datasetId: string, versionId: string, params: PageParams = {}): Promise<Page<RowError>> {
    return this.transport.json({ method: 'GET', path: `${versionPath(datasetId, versionId)}/errors`, query: params });
  }

  /** Every row error of a failed version, page after page (a million errors never sit in memory at once). */
  listAllErrors(datasetId: string, versionId: string, params: { limit?: number } = {}): AsyncGenerator<RowError, void, undefined> {
    return everyItem((cursor) => this.listErrors(datasetId, versionId, { limit: params.limit ?? 100, ...(cursor && { cursor }) }));
  }

  /** The rejected rows as CSV (the file's header and cells, after each row's number and problems), as a stream. */
  async rejectedRows(datasetId: string, versionId: string): Promise<Readable> {
    const response = await this.transport.send({ method: 'GET', path: `${versionPath(datasetId, versionId)}/errors`, headers: { accept: 'text/csv' }, timeoutMs: null });
    return Readable.fromWeb(response.body as import('node:stream/web').ReadableStream);
  }

  /** Writes the rejected rows to a file. */
  async downloadRejectedRows(datasetId: string, versionId: string, path: string): Promise<void> {
    await pipeline(await this.rejectedRows(datasetId, versionId), createWriteStream(path));
  }

  /**
   * What changed since another version (`since`; by default the one this version replaced): the
   * contracts added, removed, changed and unchanged, and the restated months. NotFoundError when
   * the version replaced none and no `since` is given, or once the rows of either were purged.
   */
  changes(datasetId: string, versionId: string, params: VersionChangesParams = {}): Promise<VersionChanges> {
    return this.transport.json({ method: 'GET', path: `${versionPath(datasetId, versionId)}/changes`, query: params });
  }

  /** One page of the contract changes (`change` keeps one kind), by contractId. */
  contractChanges(datasetId: string, versionId: string, params: ContractChangesParams = {}): Promise<Page<ContractChange>> {
    return this.transport.json({ method: 'GET', path: `${versionPath(datasetId, versionId)}/changes/contracts`, query: params });
  }

  /** Every contract change, page after page. */
  contractChangesAll(datasetId: string, versionId: string, params: Omit<ContractChangesParams, 'cursor'> = {}): AsyncGenerator<ContractChange, void, undefined> {
    return everyItem((cursor) => this.contractChanges(datasetId, versionId, { limit: 100, ...params, ...(cursor && { cursor }) }));
  }

  /**
   * A 422 of a version's creation names the failed version in Location: its first errors and
   * errorCount are read from there, so that a file with a million bad rows is not read whole.
   */
  private async validationFailure(answer: Response): Promise<Error> {
    const location = answer.headers.get('location');
    const requestId = answer.headers.get('request-id') ?? undefined;
    if (!location) return errorFromProblem((await answer.json()) as ProblemDocument, requestId);
    await answer.body?.cancel();
    // The service's own URL of the version: its path below the client's base URL (which may hold a prefix).
    const base = this.transport.baseUrl;
    const path = location.startsWith(`${base}/`) ? location.slice(base.length) : new URL(location, base).pathname;
    const version = await this.transport.json<Version>({ method: 'GET', path });
    return failureOf(version, requestId);
  }
}

const versionPath = (datasetId: string, versionId: string) => `/v1/datasets/${encodeURIComponent(datasetId)}/versions/${encodeURIComponent(versionId)}`;

/** A finished version, or the error of its problem. */
function outcome(version: Version): Version {
  if (version.status === 'failed') throw failureOf(version);
  return version;
}

function failureOf(version: Version, requestId?: string): Error {
  const problem = { versionId: version.id, ...version.problem } as ProblemDocument;
  return errorFromProblem(problem, requestId);
}
