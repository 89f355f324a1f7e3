// The S3-compatible blob store (BLOB_STORE=s3): bytes in the bucket under the blob's id, the
// `blobs` row as everywhere else. Writes are multipart uploads fed as the source streams (memory
// holds a few 5 MiB parts); clients upload and download large files straight to and from the
// bucket through presigned URLs.
import { DeleteObjectCommand, GetObjectCommand, HeadObjectCommand, PutObjectCommand, S3Client, type S3ClientConfig } from '@aws-sdk/client-s3';
import { Upload } from '@aws-sdk/lib-storage';
import { getSignedUrl } from '@aws-sdk/s3-request-presigner';
import { PassThrough, type Readable } from 'node:stream';
import { type BlobSource, type BlobStore, TooLarge } from './blobStore.ts';
import { completeBlob, deleteBlobRecord, insertBlob, insertUnwrittenBlob, type WriterHeartbeat } from './blobRecords.ts';
import type { S3Settings } from '../platform/config.ts';
import type { Pool } from '../platform/db.ts';
import { newId } from '../platform/ids.ts';
import { readerDigest } from '../platform/streamDigest.ts';
import { S3ResumableStore } from './s3ResumableStore.ts';

/** What readInPages reads at a time. */
const PAGE_BYTES = 1024 * 1024;

export function createS3Client(settings: S3Settings): S3Client {
  return new S3Client(s3ClientConfig(settings));
}

function s3ClientConfig(settings: S3Settings): S3ClientConfig {
  return {
    region: settings.region,
    ...(settings.endpoint && { endpoint: settings.endpoint, forcePathStyle: true }),
    ...(settings.accessKeyId && settings.secretAccessKey && {
      credentials: { accessKeyId: settings.accessKeyId, secretAccessKey: settings.secretAccessKey },
    }),
    // Plain bodies: not every S3-compatible server reads aws-chunked uploads with checksum trailers.
    requestChecksumCalculation: 'WHEN_REQUIRED',
    responseChecksumValidation: 'WHEN_REQUIRED',
  };
}

const isMissing = (error: unknown) => {
  const e = error as { name?: string; $metadata?: { httpStatusCode?: number } };
  return e?.name === 'NotFound' || e?.name === 'NoSuchKey' || e?.$metadata?.httpStatusCode === 404;
};

export function createS3BlobStore(settings: S3Settings, pool: Pool, writers: WriterHeartbeat): BlobStore {
  const s3 = createS3Client(settings);
  const Bucket = settings.bucket;
  const resumable = new S3ResumableStore({ ...s3ClientConfig(settings), bucket: Bucket }, pool);

  const remove = async (id: string) => {
    await resumable.discardUnder(id);
    await s3.send(new DeleteObjectCommand({ Bucket, Key: id }));
    await deleteBlobRecord(pool, id);
  };

  return {
    kind: 's3',
    async write(source: BlobSource, maxBytes: number) {
      const id = newId('blob');
      await insertBlob(pool, id);
      writers.add(id);
      // Hashed as it streams here, unless it already is (the idempotency filter hashes a request's body).
      const hash = readerDigest(source);
      const body = new PassThrough();
      let bytes = 0;
      const upload = new Upload({ client: s3, params: { Bucket, Key: id, Body: body }, partSize: 5 * 1024 * 1024, queueSize: 2 });
      // Feeds the upload as the source streams; its own failure (413 first) is the one to report.
      let fed: unknown;
      const feed = (async () => {
        for await (const chunk of source as AsyncIterable<Buffer>) {
          bytes += chunk.length;
          if (bytes > maxBytes) throw new TooLarge(maxBytes);
          hash.update(chunk);
          if (!body.write(chunk)) await new Promise((resolve) => body.once('drain', resolve));
        }
        body.end();
      })().catch((error: unknown) => {
        fed = error;
        body.destroy(error as Error);
      });
      try {
        await Promise.all([feed, upload.done()]);
        if (fed) throw fed;
      } catch (error) {
        await upload.abort().catch(() => {});
        await remove(id).catch(() => {});
        throw fed ?? error;
      } finally {
        writers.remove(id);
      }
      const sha256 = hash.sha256();
      // Its record went while its bytes came (a restart lost it, or the sweep took it for
      // abandoned): the file is not handed on as if it were there.
      const recorded = await completeBlob(pool, id, bytes, sha256).catch(async (error: unknown) => {
        await remove(id).catch(() => {});
        throw error;
      });
      if (!recorded) {
        await remove(id).catch(() => {});
        throw new Error(`blob ${id}: its row was lost while it was written`);
      }
      return { id, bytes, sha256 };
    },
    async *read(id: string) {
      const object = await s3.send(new GetObjectCommand({ Bucket, Key: id }));
      yield* object.Body as Readable;
    },
    // Ranged GETs of PAGE_BYTES, each read whole before it is handed over: no socket of the
    // client's pool is held while the answer waits on its own client.
    async *readInPages(id: string) {
      const head = await s3.send(new HeadObjectCommand({ Bucket, Key: id }));
      const size = head.ContentLength ?? 0;
      for (let from = 0; from < size; from += PAGE_BYTES) {
        const to = Math.min(from + PAGE_BYTES, size) - 1;
        const page = await s3.send(new GetObjectCommand({ Bucket, Key: id, Range: `bytes=${from}-${to}` }));
        yield Buffer.from(await page.Body!.transformToByteArray());
      }
    },
    delete: remove,
    resumable,
    async newDirectUpload() {
      const blobId = newId('blob');
      await insertUnwrittenBlob(pool, blobId);
      return blobId;
    },
    presignUpload: (blobId, signedAt, expiresSeconds) =>
      getSignedUrl(s3, new PutObjectCommand({ Bucket, Key: blobId }), { expiresIn: expiresSeconds, signingDate: signedAt }),
    async uploadedSize(id: string) {
      try {
        const head = await s3.send(new HeadObjectCommand({ Bucket, Key: id }));
        return head.ContentLength ?? 0;
      } catch (error) {
        if (isMissing(error)) return undefined;
        throw error;
      }
    },
    async presignDownload(id, download, expiresSeconds) {
      const command = new GetObjectCommand({
        Bucket,
        Key: id,
        ResponseContentType: download.contentType,
        ResponseContentDisposition: `attachment; filename="${download.filename}"`,
      });
      return getSignedUrl(s3, command, { expiresIn: expiresSeconds });
    },
    close: async () => {
      writers.stop();
      s3.destroy();
      resumable.close();
    },
  };
}
