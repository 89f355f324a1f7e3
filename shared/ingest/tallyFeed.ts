// How a build hands its rows to the tally: a TallyFeed takes them row by row (the validator's
// calls), in batches (tallyBatch.ts), and answers at the end. LocalTallyFeed counts each batch at
// once, in the build's own thread; the worker's build threads hand theirs to a tally thread
// (worker/tallyThread.ts), which counts while the build reads on.
import type { Writable } from 'node:stream';
import { type GuardedTally, type TallyEnd, type TallyResult } from './tally.ts';
import { type TalliedRow, TallyBatchWriter } from './tallyBatch.ts';

/** The flow of the customers' rows from a tally thread, in a SharedArrayBuffer of two int32: how many chunks the build has written, and whether it stopped taking them. */
export const LINES_WRITTEN = 0;
export const LINES_STOPPED = 1;

export interface TallyFeed {
  /** A stored row's contractId, valid or not (for the duplicate check): its UTF-8 bytes `text[start, end)`. */
  addContractId(text: Uint8Array, start: number, end: number): void;
  /** A valid row. */
  add(row: TalliedRow): void;
  /** Hands over the rows added so far; a promise to wait for while the tally is behind, else undefined. */
  flush(): Promise<void> | undefined;
  /** Every row is in: what the build needs to know (once). */
  end(): Promise<TallyEnd>;
  /**
   * The figures (after end(), when it said complete); undefined if they could not be had after all
   * (SQL computes them). With `lines`, a tally on a thread of its own writes the customers' rows
   * there as the book makes them (the result's customers say `streamed`); another holds them.
   * With `share` too, the build's own thread helps walk the book (shared/ingest/bookShare.ts).
   */
  result(distinctContractIds: number, versionId: string, lines?: Writable, share?: boolean): Promise<TallyResult | undefined>;
  /** Whether result() would stream the customers' rows to `lines` (the rows are counted on a thread of their own). */
  readonly streamsLines?: boolean;
  /** Lets go of what the tally holds. */
  close(): void;
  /** Why the figures could not be had after the end said complete (the tally's thread ended, or its heap was near its limit), if so. */
  whyLost?(): string | undefined;
}

export class LocalTallyFeed implements TallyFeed {
  private readonly tally: GuardedTally;
  private readonly writer = new TallyBatchWriter();

  constructor(tally: GuardedTally) {
    this.tally = tally;
  }

  addContractId(text: Uint8Array, start: number, end: number): void {
    this.writer.addContractId(text, start, end);
  }

  add(row: TalliedRow): void {
    this.writer.add(row);
  }

  flush(): undefined {
    if (this.writer.size === 0) return;
    const batch = this.writer.batch;
    this.tally.addBatch(batch);
    this.writer.take(batch);
  }

  end(): Promise<TallyEnd> {
    this.flush();
    return Promise.resolve(this.tally.end());
  }

  result(distinctContractIds: number, versionId: string): Promise<TallyResult | undefined> {
    return Promise.resolve(this.tally.result(distinctContractIds, versionId));
  }

  close(): void {
    this.tally.close();
  }

  whyLost(): string | undefined {
    return this.tally.stoppedBy;
  }
}
