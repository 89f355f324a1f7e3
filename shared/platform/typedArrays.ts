// Typed arrays grown, reserved and let go: the ingest's (the tally: tally.ts, nameTable.ts,
// numberSet.ts, tallyBatch.ts; the CSV reader's cells, csvRecords.ts) and the figures' scratch
// arrays (book.ts's Changes).

type Grown = Int32Array<ArrayBuffer> | Uint8Array<ArrayBuffer> | Float64Array<ArrayBuffer>;

/**
 * The array, or a copy half as long again (at least `atLeast`, at most `most` unless `atLeast` is
 * more): doubling would waste up to half of tens of MiB.
 */
export function grown<T extends Grown>(array: T, atLeast: number, most = Infinity): T {
  if (atLeast <= array.length) return array;
  let length = Math.max(Math.ceil(array.length * 1.5), 16);
  while (length < atLeast) length = Math.ceil(length * 1.5);
  const bigger = new (array.constructor as new (length: number) => T)(Math.max(atLeast, Math.min(length, most)));
  bigger.set(array);
  return bigger;
}

/**
 * Lets the arrays' memory go now rather than at the heap's next full collection: a tally thread's
 * heap is small and rarely collected, and each build's tally left megabytes outside it (a worker
 * 70 MiB larger after 250 small builds). The arrays are empty afterwards.
 */
export function freeNow(...arrays: (ArrayBufferView<ArrayBufferLike> | undefined)[]): void {
  for (const array of arrays) {
    const buffer = array?.buffer;
    // A part of a larger buffer goes with it; a reservation's arrays go with the reservation (one
    // array may be all of a small one).
    if (buffer instanceof ArrayBuffer && !buffer.detached && array!.byteLength === buffer.byteLength && !RESERVED.has(buffer)) buffer.transfer(0);
  }
}

/** The buffers of reservations, which only Reservation.free() lets go. */
const RESERVED = new WeakSet<ArrayBuffer>();

/**
 * glibc's malloc maps an allocation at least this large on its own (mmap), whatever its dynamic
 * threshold has grown to (DEFAULT_MMAP_THRESHOLD_MAX, 32 MiB on 64-bit): such memory is zero
 * without being written, takes room only where it is written, and goes back to the system at
 * once when freed.
 */
const ALWAYS_MAPPED_BYTES = 32 * 1024 * 1024 + 4096;
/** A reservation this small is made as it is (zeroed by the allocator, a few microseconds), not mapped. */
const SMALL_BYTES = 1024 * 1024;

/**
 * Arrays of a fixed, largest length, carved from one buffer reserved at once and mapped on its
 * own: an array that grows as a tally fills it (a number per name, per customer, per contractId)
 * takes its longest length up front, costs memory only as far as it is written, and is never
 * copied. (Arrays grown by copies left their freed copies resident in the allocator: reserving
 * them took a worker's peak through a 10M-row build from 257 to 249 MiB.) The arrays are zero at
 * first; free() lets them all go. One of a few hundred KiB (a small file's tally) is not mapped:
 * V8 counts a buffer's whole length as external memory until its heap is next collected, and
 * 32 MiB a build had it collect the heap every few small builds.
 */
export class Reservation {
  private readonly buffer: ArrayBuffer;
  private at = 0;

  /** Room for arrays of `bytes` in all (each rounded up to 8 bytes). */
  constructor(bytes: number) {
    this.buffer = new ArrayBuffer(bytes <= SMALL_BYTES ? bytes : Math.max(bytes, ALWAYS_MAPPED_BYTES));
    RESERVED.add(this.buffer);
  }

  /** The bytes `Reservation` needs for arrays of these byte lengths. */
  static bytes(...lengths: number[]): number {
    return lengths.reduce((sum, bytes) => sum + roundUp(bytes), 0);
  }

  int32(length: number): Int32Array<ArrayBuffer> {
    return new Int32Array(this.buffer, this.take(length * 4), length);
  }

  float64(length: number): Float64Array<ArrayBuffer> {
    return new Float64Array(this.buffer, this.take(length * 8), length);
  }

  /** Lets every array go now; they are empty afterwards. */
  free(): void {
    if (!this.buffer.detached) this.buffer.transfer(0);
  }

  private take(bytes: number): number {
    const at = this.at;
    if (at + bytes > this.buffer.byteLength) throw new Error('the reservation has no room left');
    this.at = at + roundUp(bytes);
    return at;
  }
}

const roundUp = (bytes: number) => Math.ceil(bytes / 8) * 8;
