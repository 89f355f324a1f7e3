// Passwords of people who sign in on the OAuth pages: scrypt with a random salt, the parameters
// stored beside the hash so they can be raised later without invalidating old hashes.
import { randomBytes, scrypt, timingSafeEqual, type ScryptOptions } from 'node:crypto';

const PARAMS = { N: 2 ** 15, r: 8, p: 1 } as const;
const KEY_LENGTH = 32;
// N=2^15, r=8 needs 32 MiB; Node's default cap is exactly 32 MiB, so give it room.
const maxmem = (o: ScryptOptions) => 256 * (o.N ?? 0) * (o.r ?? 0) + 1024 * 1024;

export const MIN_PASSWORD_LENGTH = 8;
export const MAX_PASSWORD_LENGTH = 1024;

// Each derivation holds 32 MiB and a libuv thread for ~50 ms: at most two at a time per process,
// so a burst of sign-ins queues here instead of taking the process's memory and thread pool.
// The queue is fair between client addresses (contract, "Sharing the service fairly"): each
// address waits in a line of its own, and a free slot goes to the next address in turn (round
// robin), so a flood from one address waits behind itself and never in front of anyone else.
// An address with MAX_WAITING_PER_CLIENT checks already waiting is asked to retry
// (PasswordChecksBusy: a 503 with Retry-After, never a 429); nobody else is. MAX_WAITING bounds
// the memory of the lines when a great many addresses flood at once.
const MAX_CONCURRENT = 2;
const MAX_WAITING_PER_CLIENT = 16;
const MAX_WAITING = 10_000;
let running = 0;
let waitingCount = 0;
/** Each client's line, in the order of their turns (a Map keeps insertion order). */
const lines = new Map<string, (() => void)[]>();

export class PasswordChecksBusy extends Error {}

/** A slot for one derivation: at once when one is free and nobody waits, else in the client's line. */
function slotFor(client: string): Promise<void> {
  if (running < MAX_CONCURRENT && lines.size === 0) {
    running++;
    return Promise.resolve();
  }
  const line = lines.get(client) ?? [];
  if (line.length >= MAX_WAITING_PER_CLIENT || waitingCount >= MAX_WAITING) throw new PasswordChecksBusy('too many password checks waiting from this client');
  if (line.length === 0) lines.set(client, line);
  waitingCount++;
  return new Promise<void>((resolve) => line.push(resolve));
}

/** Hands the slot to the first waiting check of the next client in turn; that client goes to the back of the round. */
function releaseSlot(): void {
  const first = lines.entries().next();
  if (first.done) {
    running--;
    return;
  }
  const [client, line] = first.value;
  const next = line.shift()!;
  lines.delete(client);
  if (line.length > 0) lines.set(client, line);
  waitingCount--;
  next();
}

async function derive(password: string, salt: Buffer, options: ScryptOptions, client: string): Promise<Buffer> {
  await slotFor(client);
  try {
    return await new Promise((resolve, reject) =>
      scrypt(password.normalize('NFC'), salt, KEY_LENGTH, { ...options, maxmem: maxmem(options) }, (error, key) => (error ? reject(error) : resolve(key))),
    );
  } finally {
    releaseSlot();
  }
}

/** `scrypt$N$r$p$salt$hash`, salt and hash in base64url. `client`: who asks (their address), for the fair queue. */
export async function hashPassword(password: string, client: string): Promise<string> {
  const salt = randomBytes(16);
  const key = await derive(password, salt, PARAMS, client);
  return ['scrypt', PARAMS.N, PARAMS.r, PARAMS.p, salt.toString('base64url'), key.toString('base64url')].join('$');
}

export async function verifyPassword(password: string, stored: string, client: string): Promise<boolean> {
  const [scheme, n, r, p, salt, hash] = stored.split('$');
  if (scheme !== 'scrypt' || !salt || !hash) return false;
  const expected = Buffer.from(hash, 'base64url');
  const key = await derive(password, Buffer.from(salt, 'base64url'), { N: Number(n), r: Number(r), p: Number(p) }, client);
  return key.length === expected.length && timingSafeEqual(key, expected);
}

/** A hash of nothing anyone knows: verified against when the email is unknown, so that a wrong
 * email and a wrong password take the same time. */
export const decoyHash = hashPassword(randomBytes(16).toString('hex'), 'service');
