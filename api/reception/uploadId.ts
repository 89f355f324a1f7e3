// A file put earlier through an upload URL, named by a JSON body {"uploadId": …}: nothing to
// store now; shared/domain/intake.ts uses the upload (and first learns of a file put straight
// into an object store).
import type { Request } from 'express';
import type { z } from 'zod';
import { parseOrThrow, readJsonBody } from '../body.ts';

/** The upload id of the JSON body, read with the operation's schema (400 when it does not fit). */
export async function receiveUploadId(req: Request, schema: z.ZodType<{ uploadId: string }>): Promise<string> {
  const { uploadId } = parseOrThrow(schema, await readJsonBody(req), 'request body');
  return uploadId;
}
