// A file sent as multipart/form-data in the field `file`: multer reads the body and hands the
// file's part to a storage engine of ours, which streams it into the blob store.
import type { Request, Response } from 'express';
import multer from 'multer';
import { type BlobStore, type StoredBlob, TooLarge } from '../../shared/blobs/blobStore.ts';
import { badRequest } from '../../shared/platform/problems.ts';

/**
 * The file of a multipart/form-data body, stored as it arrives. What the multipart reader refuses
 * (no boundary, a truncated body, a part header over its limit) is the body's fault: 400. What
 * the store fails with while the part itself was fine (its database gone) stays the service's.
 * When multer gives up after storing the file (another part fails), the file is deleted again.
 */
export function receiveMultipartFile(req: Request, res: Response, blobs: BlobStore, maxBytes: number): Promise<StoredBlob> {
  const storeFailures = new WeakSet<object>();
  const storage: multer.StorageEngine = {
    _handleFile: (_req, file, done) => {
      blobs.write(file.stream, maxBytes).then(
        (blob) => done(null, { blob } as Partial<Express.Multer.File>),
        (error: unknown) => {
          if (!file.stream.errored && error instanceof Object) storeFailures.add(error);
          done(error);
        },
      );
    },
    _removeFile: (_req, file, done) => {
      const blob = (file as unknown as { blob?: StoredBlob }).blob;
      (blob ? blobs.delete(blob.id) : Promise.resolve()).then(() => done(null), done);
    },
  };
  const upload = multer({ storage, limits: { files: 1, fields: 20, fileSize: maxBytes } }).single('file');
  return new Promise((resolve, reject) => {
    upload(req, res, (error: unknown) => {
      if (error instanceof multer.MulterError) {
        if (error.code === 'LIMIT_FILE_SIZE') return reject(new TooLarge(maxBytes));
        return reject(badRequest('The multipart body is not valid.', [{ field: error.field ?? 'file', code: 'invalid', message: error.message }]));
      }
      if (error instanceof TooLarge || (error instanceof Object && storeFailures.has(error))) return reject(error);
      if (error) {
        return reject(badRequest('The multipart body is not valid.', [{ field: '', code: 'malformed_multipart', message: (error as Error).message }]));
      }
      const blob = (req.file as unknown as { blob?: StoredBlob } | undefined)?.blob;
      if (!blob) return reject(badRequest('The multipart body has no file.', [{ field: 'file', code: 'required', message: 'Send the CSV file in the form field "file".' }]));
      resolve(blob);
    });
  });
}
