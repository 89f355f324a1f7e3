// The upload form: a file posted as multipart/form-data becomes a version exactly as POST
// …/versions makes one from the same body (the file stored in the blob store, then
// shared/domain/intake.ts's versionOfFile: the version and its build job in one transaction).
// The form's hidden fields come before the file, so its CSRF token is checked before a byte of
// the file is stored. Its idempotency is the API's: each rendering of the form carries its own
// key (kept with the API's keys, scoped to the account and mode), so a form sent twice (a double
// click, a reload that posts again) makes one version and both answers lead to it; the same key
// with another file makes nothing.
import { createHash, randomUUID } from 'node:crypto';
import type { Request, Response } from 'express';
import multer from 'multer';
import { type StoredBlob, TooLarge } from '../../shared/blobs/blobStore.ts';
import type { Tenant } from '../../shared/domain/datasets.ts';
import { versionOfFile } from '../../shared/domain/intake.ts';
import type { VersionRecord } from '../../shared/domain/versions.ts';
import { claimKey, extendLease, finishKey, type KeyScope, readKey, releaseKey } from '../../shared/tenancy/idempotency.ts';
import type { Deps } from '../defineOperation.ts';
import type { DashboardSessions, Viewer } from './session.ts';

export type UploadDeps = Pick<Deps, 'config' | 'pool' | 'boss' | 'blobs' | 'log'>;

export type UploadOutcome =
  | { kind: 'refused' }
  | { kind: 'no-file' }
  | { kind: 'malformed'; message: string }
  | { kind: 'created'; version: VersionRecord }
  /** The same form sent again with the same file: where its first answer led. */
  | { kind: 'replayed'; location: string }
  /** The same form sent again with another file: nothing ran. */
  | { kind: 'key-reused' }
  /** The same form is still being handled (or its first sending failed): nothing ran. */
  | { kind: 'busy' };

const KEY = /^[\w-]{8,100}$/;
const REPLAY_WAIT_MS = 60_000;

class FormRefused extends Error {}

/** What the file part became: stored under a key this request claimed, or only hashed (the key was taken). */
type FilePart = { noFile: true } | { blob: StoredBlob; claim: { scope: KeyScope; owner: string; stop(): void } } | { again: { scope: KeyScope; sha256: Buffer } };

/** The answer kept for the form's key: the file (its SHA-256) for this dataset. */
const fingerprintOf = (datasetId: string, sha256: Buffer) => createHash('sha256').update(`dashboard-upload\n${datasetId}\n${sha256.toString('hex')}`).digest();

async function hashOf(stream: NodeJS.ReadableStream): Promise<Buffer> {
  const hash = createHash('sha256');
  for await (const chunk of stream) hash.update(chunk as Buffer);
  return hash.digest();
}

/**
 * Receives the form: the CSRF token and the form's key (fields before the file), then the file,
 * stored when the key is new, only hashed when it was used. Creates the version when stored.
 */
export async function receiveUploadForm(
  req: Request,
  res: Response,
  deps: UploadDeps,
  context: { sessions: DashboardSessions; viewer: Viewer; tenant: Tenant; datasetId: string; versionPath: (v: { id: string }) => string },
): Promise<UploadOutcome> {
  const { pool, blobs, config } = deps;
  const leaseMs = config.idempotencyLeaseMs;
  const storage: multer.StorageEngine = {
    _handleFile: (request, file, done) => {
      const fields = request.body as Record<string, unknown> | undefined;
      const handle = async (): Promise<FilePart> => {
        if (!context.sessions.formIsOurs(request, context.viewer, fields)) throw new FormRefused();
        const key = typeof fields?.['idempotencyKey'] === 'string' ? fields['idempotencyKey'] : '';
        if (!KEY.test(key)) throw new FormRefused();
        if (!file.originalname) {
          file.stream.resume();
          return { noFile: true };
        }
        const scope: KeyScope = { ...context.tenant, key: `dashboard-upload:${key}` };
        const owner = randomUUID();
        if (!(await claimKey(pool, scope, owner, leaseMs))) return { again: { scope, sha256: await hashOf(file.stream) } };
        const heartbeat = setInterval(() => extendLease(pool, scope, owner, leaseMs).catch(() => {}), leaseMs / 3);
        heartbeat.unref();
        const stop = () => clearInterval(heartbeat);
        try {
          return { blob: await blobs.write(file.stream, config.maxUploadBytes), claim: { scope, owner, stop } };
        } catch (error) {
          stop();
          await releaseKey(pool, scope, owner);
          throw error;
        }
      };
      handle().then(
        (part) => done(null, part as Partial<Express.Multer.File>),
        (error: unknown) => {
          file.stream.resume();
          done(error as Error);
        },
      );
    },
    _removeFile: (_request, file, done) => {
      const part = file as unknown as Partial<{ blob: StoredBlob; claim: { scope: KeyScope; owner: string; stop(): void } }>;
      part.claim?.stop();
      Promise.all([part.blob ? blobs.delete(part.blob.id) : undefined, part.claim ? releaseKey(pool, part.claim.scope, part.claim.owner) : undefined]).then(
        () => done(null),
        done,
      );
    },
  };
  const upload = multer({ storage, limits: { files: 1, fields: 5, fieldSize: 1024, fileSize: config.maxUploadBytes } }).single('file');

  let part: FilePart | undefined;
  try {
    await new Promise<void>((resolve, reject) => upload(req, res, (error: unknown) => (error ? reject(error) : resolve())));
    part = req.file as unknown as FilePart | undefined;
  } catch (error) {
    if (error instanceof FormRefused) return { kind: 'refused' };
    if (error instanceof multer.MulterError) {
      if (error.code === 'LIMIT_FILE_SIZE') throw new TooLarge(config.maxUploadBytes);
      return { kind: 'malformed', message: error.message };
    }
    if (error instanceof TooLarge || !(error instanceof Error) || !/multipart|boundary|unexpected end/i.test(error.message)) throw error;
    return { kind: 'malformed', message: error.message };
  }
  // No file part at all: the token was never checked, so nothing may run.
  if (!part) return context.sessions.formIsOurs(req, context.viewer, req.body) ? { kind: 'no-file' } : { kind: 'refused' };
  if ('noFile' in part) return { kind: 'no-file' };

  if ('again' in part) return replayOf(deps, part.again, context.datasetId);

  const { blob, claim } = part;
  try {
    // The version reads as one the API made: its path is the API's operation, whichever door the file came through.
    const version = await versionOfFile(deps, { kind: 'blob', blob }, { datasetId: context.datasetId, requestPath: `/v1/datasets/${context.datasetId}/versions` });
    await finishKey(pool, claim.scope, claim.owner, {
      fingerprint: fingerprintOf(context.datasetId, blob.sha256),
      response: { status: 303, headers: { location: context.versionPath(version) }, body: Buffer.alloc(0) },
    });
    return { kind: 'created', version };
  } catch (error) {
    await releaseKey(pool, claim.scope, claim.owner).catch(() => {});
    throw error;
  } finally {
    claim.stop();
  }
}

/** The form's key was used: wait while its first sending runs, then lead where it led (the same file) or refuse (another file). */
async function replayOf(deps: UploadDeps, again: { scope: KeyScope; sha256: Buffer }, datasetId: string): Promise<UploadOutcome> {
  const deadline = Date.now() + REPLAY_WAIT_MS;
  for (let pause = 20; Date.now() < deadline; pause = Math.min(pause * 2, 500)) {
    const record = await readKey(deps.pool, again.scope);
    if (!record) return { kind: 'busy' };
    if (record.state === 'done') {
      if (!record.fingerprint.equals(fingerprintOf(datasetId, again.sha256))) return { kind: 'key-reused' };
      return { kind: 'replayed', location: record.response.headers['location'] ?? '' };
    }
    await new Promise((resolve) => setTimeout(resolve, pause));
  }
  return { kind: 'busy' };
}
