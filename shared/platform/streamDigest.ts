// A stream's SHA-256, hashed once as its bytes are read, whoever reads them. The idempotency
// filter fingerprints a request's body this way, and a blob store keeps the SHA-256 of the file it
// stores: for a file posted as the request body itself (text/csv) those are the same bytes, and
// hashing them twice cost the web process 0.12 s of CPU per 100 MB. (The PUT to an upload URL has
// no idempotency key: its store hashes the body alone.)
import { createHash } from 'node:crypto';
import type { Readable } from 'node:stream';

export type StreamDigest = {
  /** The SHA-256 of the bytes read so far: call it once the stream has ended (the digest is then fixed). */
  sha256(): Buffer;
};

const digests = new WeakMap<object, StreamDigest>();

/**
 * Hashes every byte `stream` gives out from now on, as whoever reads it reads; call it before
 * anything is read. The stream is paused if nothing reads it yet, so the hashing does not start
 * its flow: its reader does.
 */
export function digestStream(stream: Readable): StreamDigest {
  const existing = digests.get(stream);
  if (existing) return existing;
  const hash = createHash('sha256');
  let sum: Buffer | undefined;
  if (stream.readableFlowing === null) stream.pause();
  stream.on('data', (chunk: Buffer) => hash.update(chunk));
  const digest: StreamDigest = { sha256: () => (sum ??= hash.digest()) };
  digests.set(stream, digest);
  return digest;
}

/**
 * The SHA-256 of what a reader takes from `source`, chunk by chunk: the digest digestStream already
 * takes of it (then `update` does nothing: the same bytes are not hashed twice), or its own.
 */
export function readerDigest(source: unknown): { update(chunk: Buffer): void; sha256(): Buffer } {
  const tapped = typeof source === 'object' && source !== null ? digests.get(source) : undefined;
  if (tapped) return { update: () => {}, sha256: tapped.sha256 };
  const hash = createHash('sha256');
  return { update: (chunk) => hash.update(chunk), sha256: () => hash.digest() };
}
