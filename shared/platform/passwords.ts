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
// Beyond MAX_WAITING queued checks the process is overloaded: refuse rather than let every sign-in
// wait behind a flood.
const MAX_CONCURRENT = 2;
const MAX_WAITING = 32;
let running = 0;
const waiting: (() => void)[] = [];

export class PasswordChecksBusy extends Error {}

async function derive(password: string, salt: Buffer, options: ScryptOptions): Promise<Buffer> {
  if (running >= MAX_CONCURRENT) {
    if (waiting.length >= MAX_WAITING) throw new PasswordChecksBusy('too many password checks waiting');
    await new Promise<void>((resolve) => waiting.push(resolve));
  }
  running++;
  try {
    return await new Promise((resolve, reject) =>
      scrypt(password.normalize('NFC'), salt, KEY_LENGTH, { ...options, maxmem: maxmem(options) }, (error, key) => (error ? reject(error) : resolve(key))),
    );
  } finally {
    running--;
    waiting.shift()?.();
  }
}

/** `scrypt$N$r$p$salt$hash`, salt and hash in base64url. */
export async function hashPassword(password: string): Promise<string> {
  const salt = randomBytes(16);
  const key = await derive(password, salt, PARAMS);
  return ['scrypt', PARAMS.N, PARAMS.r, PARAMS.p, salt.toString('base64url'), key.toString('base64url')].join('$');
}

export async function verifyPassword(password: string, stored: string): Promise<boolean> {
  const [scheme, n, r, p, salt, hash] = stored.split('$');
  if (scheme !== 'scrypt' || !salt || !hash) return false;
  const expected = Buffer.from(hash, 'base64url');
  const key = await derive(password, Buffer.from(salt, 'base64url'), { N: Number(n), r: Number(r), p: Number(p) });
  return key.length === expected.length && timingSafeEqual(key, expected);
}

/** A hash of nothing anyone knows: verified against when the email is unknown, so that a wrong
 * email and a wrong password take the same time. */
export const decoyHash = hashPassword(randomBytes(16).toString('hex'));
