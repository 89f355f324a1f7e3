// The idempotency filter (../shared/spec/service-spec.md §7 "Idempotency" and
// ../shared/spec/contract.md "Idempotency beyond the spec").
//
// The first request with a key claims it and runs; its answer is captured on the way out and kept
// for 24 hours with the request's fingerprint (method, path, content type, SHA-256 of the raw body,
// hashed as the body streams through whatever reads it). A later request with the key waits while
// the first runs, then drains its own body to fingerprint it: the same fingerprint replays the
// kept answer byte for byte, another one is refused with 422 `idempotency-key-reused`. A 5xx, or
// an answer given before the body was read, is not kept: the key is released and the next
// request (a waiter included) runs afresh. An answer too large to hold (a 422 with every row error
// of a huge file) is kept by reference before it streams out (keepStreamedAnswer) and rendered
// again from the same stored rows on replay. No kept answer holds a live capability: an upload's
// signed URL is left out (keepAnswerWithout) and signed again on replay, the same bytes.
import { createHash, randomUUID } from 'node:crypto';
import { digestStream } from '../../shared/platform/streamDigest.ts';
import type { Request, RequestHandler, Response } from 'express';
import { claimKey, extendLease, finishKey, type KeyScope, readKey, releaseKey, type AnswerReference, type StoredResponse } from '../../shared/tenancy/idempotency.ts';
import { Problem } from '../../shared/platform/problems.ts';
import type { Deps, KeptAnswerRenderer } from '../defineOperation.ts';
import { isMutating } from '../defineOperation.ts';
import { principalOf } from '../principal.ts';
import { requestPath, sendProblem } from '../problemResponses.ts';

const KEY_PATTERN = /^[\x20-\x7e]{1,255}$/;
const KEPT_HEADERS = ['content-type', 'location', 'preference-applied', 'retry-after', 'allow'];
const POLL_MIN_MS = 10;
const POLL_MAX_MS = 250;

/** Hashes the raw body as it is read, by whoever reads it (a blob store storing it takes the same digest). */
function tapBody(req: Request) {
  const hash = digestStream(req);
  let digest: string | undefined;
  req.once('end', () => (digest = hash.sha256().toString('hex')));
  return {
    /** The digest once the whole body has been read, else undefined. */
    digest: () => digest,
    /** Reads (and discards) whatever nobody read, then gives the digest. */
    drain: async (): Promise<string> => {
      if (digest === undefined) {
        await new Promise<void>((resolve, reject) => {
          req.once('end', resolve);
          req.once('error', reject);
          req.resume();
        });
      }
      return digest!;
    },
  };
}

function fingerprintOf(req: Request, bodyDigest: string): Buffer {
  const contentType = (req.get('content-type') ?? '').trim().toLowerCase();
  // originalUrl: req.path changes while Express routes (mount-relative inside a router).
  return createHash('sha256').update(`${req.method}\n${requestPath(req)}\n${contentType}\n${bodyDigest}`).digest();
}

/**
 * Holds back the response until `record` has stored it, then sends the same bytes. Mutating
 * endpoints answer small JSON documents, so the body is collected whole; the one that may be
 * large is kept by reference instead (`release` ends the capture before it streams).
 */
function captureResponse(res: Response, record: (response: StoredResponse) => Promise<void>): { release(): void; keepInstead(body: Buffer, reference: AnswerReference): void } {
  let instead: { body: Buffer; reference: AnswerReference } | undefined;
  const chunks: Buffer[] = [];
  const write = res.write;
  const end = res.end;
  const toBuffer = (chunk: unknown, encoding?: unknown) =>
    Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk as string, typeof encoding === 'string' ? (encoding as BufferEncoding) : 'utf8');

  res.write = function (chunk: unknown, encoding?: unknown, callback?: unknown) {
    chunks.push(toBuffer(chunk, encoding));
    const cb = typeof encoding === 'function' ? encoding : callback;
    if (typeof cb === 'function') process.nextTick(cb as () => void);
    return true;
  } as Response['write'];

  res.end = function (chunk?: unknown, encoding?: unknown, callback?: unknown) {
    if (typeof chunk === 'function') callback = chunk;
    else if (chunk !== undefined && chunk !== null) chunks.push(toBuffer(chunk, encoding));
    if (typeof encoding === 'function') callback = encoding;
    const body = Buffer.concat(chunks);
    const kept = instead ? { body: instead.body, streamed: instead.reference } : { body };
    void record({ status: res.statusCode, headers: keptHeaders(res), ...kept }).finally(() => {
      res.write = write;
      res.end = end;
      (end as (body: Buffer, cb?: () => void) => Response).call(res, body, callback as (() => void) | undefined);
    });
    return res;
  } as Response['end'];

  return {
    release: () => {
      res.write = write;
      res.end = end;
    },
    keepInstead: (body, reference) => (instead = { body, reference }),
  };
}

function keptHeaders(res: Response): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const name of KEPT_HEADERS) {
    const value = res.getHeader(name);
    if (value !== undefined) headers[name] = String(value);
  }
  return headers;
}

async function replay(res: Response, response: StoredResponse, deps: Deps, renderers: Map<string, KeptAnswerRenderer>): Promise<void> {
  res.status(response.status).set(response.headers).set('Idempotent-Replayed', 'true');
  if (!response.streamed) return void res.end(response.body);
  const [name, payload] = Object.entries(response.streamed)[0] ?? [];
  const render = name === undefined ? undefined : renderers.get(name);
  if (!render) throw new Error(`no operation renders a kept answer named "${name}"`);
  await render({ res, deps, keptBody: response.body }, payload as never);
}

/**
 * Keeps `kept` (the answer without its live capabilities) and `reference` (what makes them again)
 * instead of the bytes about to be sent. Outside the idempotency filter (no key), it does nothing.
 */
export function keepAnswerWithout(res: Response, kept: Buffer, reference: AnswerReference): void {
  const keepInstead = res.locals['keepAnswerInstead'] as ((body: Buffer, reference: AnswerReference) => void) | undefined;
  keepInstead?.(kept, reference);
}

/**
 * Keeps the answer about to be streamed (status and headers set) by reference instead of by its
 * bytes, and stops capturing it. Outside the idempotency filter (no key), it does nothing.
 */
export async function keepStreamedAnswer(res: Response, answer: AnswerReference): Promise<void> {
  const keep = res.locals['keepStreamedAnswer'] as ((answer: AnswerReference) => Promise<void>) | undefined;
  await keep?.(answer);
}

/** `renderers`: how each answer kept by reference is rendered again (keptAnswerRenderers). */
export function idempotency(deps: Deps, renderers: Map<string, KeptAnswerRenderer>): RequestHandler {
  const { config, pool, log } = deps;
  const leaseMs = config.idempotencyLeaseMs;

  const runAndKeep = (req: Request, res: Response, scope: KeyScope, owner: string, body: ReturnType<typeof tapBody>) => {
    const heartbeat = setInterval(() => {
      extendLease(pool, scope, owner, leaseMs).catch((error) => log.warn({ err: error }, 'idempotency lease not extended'));
    }, leaseMs / 3);
    heartbeat.unref();
    const keep = async (response: StoredResponse) => {
      clearInterval(heartbeat);
      const digest = body.digest();
      try {
        if (response.status >= 500 || digest === undefined) await releaseKey(pool, scope, owner);
        else await finishKey(pool, scope, owner, { fingerprint: fingerprintOf(req, digest), response });
      } catch (error) {
        // The answer still goes out; the key's lease runs out and a retry runs afresh.
        log.error({ err: error }, 'idempotency record not stored');
      }
    };
    const capture = captureResponse(res, keep);
    res.locals['keepAnswerInstead'] = capture.keepInstead;
    res.locals['keepStreamedAnswer'] = async (streamed: AnswerReference) => {
      capture.release();
      await keep({ status: res.statusCode, headers: keptHeaders(res), body: Buffer.alloc(0), streamed });
    };
  };

  return async (req, res, next) => {
    if (!isMutating(req.method)) return next();
    const key = req.get('idempotency-key');
    if (key === undefined || key === '') {
      return sendProblem(
        res,
        new Problem(
          'idempotency-key-required',
          'This call changes data, so it needs an Idempotency-Key header: a unique string such as a UUID, best derived from the operation. Nothing ran.',
        ),
        config.errorsBase,
      );
    }
    if (!KEY_PATTERN.test(key)) {
      return sendProblem(
        res,
        new Problem('bad-request', 'The Idempotency-Key header is not valid. Nothing ran.', {
          extensions: {
            errors: [{ field: 'Idempotency-Key', code: 'invalid', message: 'At most 255 printable ASCII characters.' }],
          },
        }),
        config.errorsBase,
      );
    }

    const { accountId, mode } = principalOf(res);
    const scope: KeyScope = { accountId, mode, key };
    const owner = randomUUID();
    const body = tapBody(req);
    let closed = false;
    res.once('close', () => (closed = true));

    for (let pause = POLL_MIN_MS; !closed; pause = Math.min(pause * 2, POLL_MAX_MS)) {
      if (await claimKey(pool, scope, owner, leaseMs)) {
        runAndKeep(req, res, scope, owner, body);
        return next();
      }
      const record = await readKey(pool, scope);
      if (record?.state === 'done') {
        const fingerprint = fingerprintOf(req, await body.drain());
        if (fingerprint.equals(record.fingerprint)) return replay(res, record.response, deps, renderers);
        return sendProblem(
          res,
          new Problem(
            'idempotency-key-reused',
            'This Idempotency-Key was already used with a different request in the last 24 hours. Nothing ran; use a new key for a new request.',
          ),
          config.errorsBase,
        );
      }
      // Still running elsewhere (or just released): wait, then look again.
      await new Promise((resolve) => setTimeout(resolve, pause));
    }
  };
}
