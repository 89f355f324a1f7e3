// Currency codes as small numbers: three letters A–Z in base 32, to index an array by them.

/** A currency code as a number: its three letters `bytes[at, at + 3)`. */
export function currencyIndex(bytes: Uint8Array, at: number): number {
  return ((bytes[at]! & 31) << 10) | ((bytes[at + 1]! & 31) << 5) | (bytes[at + 2]! & 31);
}

/** The code currencyIndex made `index` of. */
export function currencyCode(index: number): string {
  return String.fromCharCode(64 + ((index >> 10) & 31), 64 + ((index >> 5) & 31), 64 + (index & 31));
}
