import { createHash, randomBytes } from 'node:crypto';

// Crockford base32, lower case: 32 symbols, so each random byte maps to one without bias.
const ALPHABET = '0123456789abcdefghjkmnpqrstvwxyz';

export type IdPrefix = 'acc' | 'key' | 'ds' | 'ver' | 'upl' | 'exp' | 'per' | 'blob' | 'inv' | 'evt' | 'we' | 'fx';

/** An opaque id with a type prefix, e.g. `ds_1k3v…` (20 symbols, 100 random bits). */
export function newId(prefix: IdPrefix): string {
  const bytes = randomBytes(20);
  let out = `${prefix}_`;
  for (const b of bytes) out += ALPHABET[b & 31];
  return out;
}

/**
 * An id of ours, checked before it is inlined into SQL that takes no parameters (COPY):
 * the prefix and 20 symbols of our alphabet, nothing else.
 */
export function checkedId(prefix: IdPrefix, value: string): string {
  if (!new RegExp(`^${prefix}_[${ALPHABET}]{20}$`).test(value)) throw new Error(`not a ${prefix} id: ${value}`);
  return value;
}

export function sha256(data: string | Buffer): Buffer {
  return createHash('sha256').update(data).digest();
}
