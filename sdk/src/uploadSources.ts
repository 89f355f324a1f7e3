// What a program can upload (a path, a string, bytes, a stream) and how each is sent: as the body
// of one request (made anew for each retry when it can be), or through the resumable (tus)
// endpoint, with the bytes sent reported as they go.
import { createReadStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import { basename } from 'node:path';
import { Readable } from 'node:stream';
import { Upload as TusUpload } from 'tus-js-client';
import { DatasetServiceError } from './errors.ts';
import type { RawBody } from './transport.ts';

export type UploadSource =
  | { path: string }
  | { text: string }
  | { data: Uint8Array }
  /** A stream is sent once (never retried); give its size to send it resumably. */
  | { stream: Readable | ReadableStream<Uint8Array>; size?: number };

/** Bytes going out, then rows being built. */
export type UploadProgress =
  | { phase: 'uploading'; bytesSent: number; bytesTotal: number | null }
  | { phase: 'building'; versionId: string; rowsProcessed: number; bytesProcessed: number; bytesTotal: number | null };

type OnProgress = ((progress: UploadProgress) => void) | undefined;

/** The source's size in bytes, when it is known before sending. */
export async function sizeOf(source: UploadSource): Promise<number | undefined> {
  if ('path' in source) return (await stat(source.path)).size;
  if ('text' in source) return Buffer.byteLength(source.text);
  if ('data' in source) return source.data.byteLength;
  return source.size;
}

export function filenameOf(source: UploadSource): string | undefined {
  return 'path' in source ? basename(source.path) : undefined;
}

/** The source as one request's body: a file is opened again for each attempt; a stream is sent once. */
export function requestBody(source: UploadSource, size: number | undefined, onProgress: OnProgress): RawBody {
  const contentType = 'text/csv';
  if ('text' in source || 'data' in source) {
    const bytes = 'text' in source ? Buffer.from(source.text) : source.data;
    return { contentType, replayable: true, open: () => counted(chunksOf(bytes), bytes.byteLength, onProgress) };
  }
  if ('path' in source) {
    return { contentType, replayable: true, open: () => counted(createReadStream(source.path, { highWaterMark: 256 * 1024 }), size ?? null, onProgress) };
  }
  const stream = source.stream instanceof ReadableStream ? Readable.fromWeb(source.stream as import('node:stream/web').ReadableStream) : source.stream;
  let opened = false;
  return {
    contentType,
    replayable: false,
    open: () => {
      if (opened) throw new DatasetServiceError('a stream can be sent only once');
      opened = true;
      return counted(stream, size ?? null, onProgress);
    },
  };
}

function* chunksOf(bytes: Uint8Array): Generator<Uint8Array> {
  for (let at = 0; at < bytes.byteLength; at += 256 * 1024) yield bytes.subarray(at, at + 256 * 1024);
}

/** A web stream of the chunks that reports, as the request pulls them, how many bytes went out. */
function counted(chunks: Iterable<Uint8Array> | AsyncIterable<Uint8Array>, total: number | null, onProgress: OnProgress): ReadableStream<Uint8Array> {
  let sent = 0;
  onProgress?.({ phase: 'uploading', bytesSent: 0, bytesTotal: total });
  const iterator = (Symbol.asyncIterator in chunks ? chunks[Symbol.asyncIterator]() : chunks[Symbol.iterator]()) as AsyncIterator<Uint8Array> | Iterator<Uint8Array>;
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      const next = await iterator.next();
      if (next.done) {
        controller.close();
        return;
      }
      const chunk = typeof next.value === 'string' ? Buffer.from(next.value) : next.value;
      sent += chunk.byteLength;
      controller.enqueue(chunk);
      onProgress?.({ phase: 'uploading', bytesSent: sent, bytesTotal: total ?? null });
    },
    async cancel() {
      await iterator.return?.();
    },
  });
}

/**
 * Sends the source to a signed tus endpoint with tus-js-client: on a dropped connection it asks
 * the service how much arrived and goes on from there.
 */
export function sendResumable(tusEndpoint: string, source: UploadSource, size: number, filename: string | undefined, onProgress: OnProgress): Promise<void> {
  const input =
    'path' in source
      ? createReadStream(source.path)
      : 'text' in source
        ? Buffer.from(source.text)
        : 'data' in source
          ? Buffer.from(source.data.buffer, source.data.byteOffset, source.data.byteLength)
          : source.stream instanceof ReadableStream
            ? Readable.fromWeb(source.stream as import('node:stream/web').ReadableStream)
            : source.stream;
  onProgress?.({ phase: 'uploading', bytesSent: 0, bytesTotal: size });
  return new Promise((resolve, reject) => {
    const upload = new TusUpload(input, {
      endpoint: tusEndpoint,
      uploadSize: size,
      // A stream is held a chunk at a time so that a resend has the bytes; a file is read again from disk.
      ...('stream' in source && { chunkSize: 8 * 1024 * 1024 }),
      metadata: { filetype: 'text/csv', ...(filename && { filename }) },
      retryDelays: [0, 1000, 3000, 5000, 10_000, 20_000],
      onProgress: (bytesSent, bytesTotal) => onProgress?.({ phase: 'uploading', bytesSent, bytesTotal }),
      onSuccess: () => resolve(),
      onError: (error) => reject(new DatasetServiceError(`the resumable upload failed: ${error.message}`, { cause: error })),
    });
    upload.start();
  });
}
