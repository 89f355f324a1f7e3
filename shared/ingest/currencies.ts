// Currency codes as small numbers: three letters A–Z in base 32, to index an array by them.

/** A currency code as a number. */
export function currencyIndex(code: string): number {
  return ((code.charCodeAt(0) & 31) << 10) | ((code.charCodeAt(1) & 31) << 5) | (code.charCodeAt(2) & 31);
}

/** The code currencyIndex made `index` of. */
export function currencyCode(index: number): string {
  return String.fromCharCode(64 + ((index >> 10) & 31), 64 + ((index >> 5) & 31), 64 + (index & 31));
}
