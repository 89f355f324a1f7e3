// A large build's book walked by two threads (shared/figures/book.ts): the tally thread walks its
// contract log's partitions from the first (worker/tallyThread.ts), and gives the build thread,
// idle while it waits for the figures, partitions from the last whenever it wants one
// (worker/tallyThreads.ts). The build thread walks them into a book of its own and writes their
// customers' rows into the same COPY; at the end its book comes back and the tally thread merges
// it (sums add exactly) before it makes the documents. The two talk over a MessageChannel of
// their own; the tally thread, whose walk is one synchronous call, reads the book off it with
// receiveMessageOnPort, waiting on a SharedArrayBuffer.
import type { Writable } from 'node:stream';
import { type MessagePort, receiveMessageOnPort } from 'node:worker_threads';
import { MetricsBook, type SharedBook, sharedBookBytes } from '../figures/book.ts';
import { CustomerLinesWriter } from '../figures/customerChanges.ts';
import { blankTerm, type ContractTerm, contractTermInto } from '../figures/definitions.ts';
import { collectGarbage } from '../platform/garbage.ts';
import { HeapNearLimit, HeapRoom } from '../platform/heapRoom.ts';
import { type CustomerContracts, type GatheredContracts, PARTITIONS, PartitionWalk } from './contractLog.ts';
import { currencyCode } from './currencies.ts';

/** A partition given away, with its customers' names: customer k × PARTITIONS + index's UTF-8 bytes are nameBytes[nameStarts[k], nameStarts[k + 1]). */
export type SharedPartition = GatheredContracts & { nameStarts: Int32Array; nameBytes: Uint8Array };

/** Tally thread → build thread, on the share's channel. */
type ToHelper = { type: 'partition'; part: SharedPartition } | { type: 'end' };
/** Build thread → tally thread: its book and its customers by currency number, or why it stopped. */
type FromHelper = { type: 'size'; bytes: number } | { type: 'book'; book: SharedBook; customers: [number, number][] } | { type: 'failed'; why: string };

/** The share's state, int32s of a SharedArrayBuffer: partitions the helper has walked, and whether its answer is on the channel. */
const WALKED = 0;
const ANSWERED = 1;
export const SHARE_STATE_BYTES = 8;

/** The helper's chunks of rows (64 KiB) the COPY may have unwritten before the helper waits. */
const CHUNKS_AHEAD = 32;
/** Partitions given and not yet walked: the helper has the next at hand (a 64th of the book each, 3.75 MiB at 10M rows). */
const AHEAD = 2;
/** Customers the helper walks between two turns of its thread's event loop (where the tally's rows are written). */
const TURN_CUSTOMERS = 512;
/**
 * How many customers a walk takes between two looks at the heap's room (a look costs about a
 * microsecond): few enough that customers of many months each cannot outgrow the room left between two.
 */
const ROOM_CHECK_CUSTOMERS = 64;

/**
 * The walk of customers' contracts into a book, as the tally thread and its helper each make it:
 * each customer's contracts in a currency into the book, and its rows into the lines if its MRR
 * changed; `counted` is told each customer's currency number; the heap's room is looked at every
 * ROOM_CHECK_CUSTOMERS customers (HeapNearLimit names `what` stopped).
 */
export class CustomerWalk {
  /** Scratch terms, kept from one customer to the next. */
  private readonly terms: ContractTerm[] = [];
  private walked = 0;
  private readonly book: MetricsBook;
  private readonly lines: CustomerLinesWriter;
  private readonly room: HeapRoom;
  private readonly what: string;
  private readonly counted: (currency: number) => void;

  constructor(book: MetricsBook, lines: CustomerLinesWriter, room: HeapRoom, what: string, counted: (currency: number) => void) {
    this.book = book;
    this.lines = lines;
    this.room = room;
    this.what = what;
    this.counted = counted;
  }

  /** One customer's contracts in a currency, its name as UTF-8 bytes. */
  take(group: CustomerContracts, name: Uint8Array): void {
    // The loose parts' sums are made when the book is settled: counted now, so that the walk gives up in time.
    if (++this.walked % ROOM_CHECK_CUSTOMERS === 0) this.room.check(this.what, this.book.unsettledBytes);
    this.counted(group.currency);
    const terms = this.terms;
    for (let i = 0; i < group.count; i++) contractTermInto((terms[i] ??= blankTerm()), group.startDays[i]!, group.endDays[i]!, group.cents[i]!);
    const currency = currencyCode(group.currency);
    const changes = this.book.walk(currency, terms, group.count);
    if (changes.length > 0) this.lines.add(currency, name, changes);
  }
}

/** The tally thread's side: gives partitions, then takes the helper's book. */
export class BookShare {
  private readonly port: MessagePort;
  private readonly state: Int32Array;
  /** Whether the build stopped taking the customers' rows (the tally's flow of them, tallyFeed.ts). */
  private readonly stopped: () => boolean;
  private given = 0;

  constructor(port: MessagePort, state: SharedArrayBuffer, stopped: () => boolean) {
    this.port = port;
    this.state = new Int32Array(state);
    this.stopped = stopped;
  }

  wants(): boolean {
    return this.given - Atomics.load(this.state, WALKED) < AHEAD;
  }

  give(part: SharedPartition): void {
    this.given++;
    const message: ToHelper = { type: 'partition', part };
    this.port.postMessage(message, [part.ints.buffer, part.cents.buffer, part.nameStarts.buffer, part.nameBytes.buffer] as ArrayBuffer[]);
  }

  /**
   * The helper's book and customers once it has walked every partition given; throws if it
   * stopped, or the build did, or if its book would not fit in `room` (it says its size first).
   */
  finish(room: HeapRoom, what: string): { book: SharedBook; customers: [number, number][] } {
    const end: ToHelper = { type: 'end' };
    this.port.postMessage(end);
    try {
      for (;;) {
        const received = receiveMessageOnPort(this.port);
        if (received) {
          const answer = received.message as FromHelper;
          if (answer.type === 'failed') throw new Error(`the build thread's share of the book: ${answer.why}`);
          if (answer.type === 'book') return answer;
          if (!room.hasRoomFor(answer.bytes)) throw new HeapNearLimit(what, room);
          continue;
        }
        if (this.stopped()) throw new Error("the build stopped taking the customers' rows");
        Atomics.wait(this.state, ANSWERED, 0, 1000);
      }
    } finally {
      this.port.close();
    }
  }

  /** Lets the channel go (when finish() was not called). */
  close(): void {
    this.port.close();
  }
}

/**
 * The build thread's side: walks each partition given, a few hundred customers between turns of
 * its event loop, writing its customers' rows into the COPY (no header nor trailer: the build
 * writes the one, the tally's own rows end with the other) and waiting while it has CHUNKS_AHEAD
 * unwritten, then answers with its book.
 */
export class BookHelper {
  private readonly port: MessagePort;
  private readonly state: Int32Array;
  private readonly book = new MetricsBook();
  private readonly lines: CustomerLinesWriter;
  private readonly customers = new Map<number, number>();
  private readonly room = new HeapRoom();
  private readonly queue: SharedPartition[] = [];
  private ended = false;
  private walking = false;
  private stopped: string | undefined;
  /** Chunks of rows written to the COPY that it has not taken yet, and who waits for it to take some. */
  private unwritten = 0;
  private wake: (() => void) | undefined;

  /** `copy`: where the customers' rows go; `failed`: told when the COPY refuses a chunk. */
  constructor(port: MessagePort, state: SharedArrayBuffer, versionId: string, copy: Writable, failed: () => void) {
    this.port = port;
    this.state = new Int32Array(state);
    const write = (chunk: Buffer) => {
      this.unwritten++;
      copy.write(chunk, (error) => {
        this.unwritten--;
        if (error) failed();
        this.wake?.();
      });
    };
    this.lines = new CustomerLinesWriter(versionId, undefined, write, 'none');
    port.on('message', (message: ToHelper) => {
      if (message.type === 'partition') this.queue.push(message.part);
      else this.ended = true;
      void this.walk();
    });
  }

  /** Stops walking (the build no longer waits on the book), and answers so if the tally thread waits. */
  stop(why: string): void {
    if (this.stopped !== undefined) return;
    this.stopped = why;
    this.wake?.();
    this.answer({ type: 'failed', why });
  }

  /** Resolves once the COPY has taken all but CHUNKS_AHEAD of the chunks written, or the helper stopped. */
  private async roomToWrite(): Promise<void> {
    while (this.unwritten > CHUNKS_AHEAD && this.stopped === undefined) await new Promise<void>((resolve) => (this.wake = resolve));
    this.wake = undefined;
  }

  private async walk(): Promise<void> {
    if (this.walking || this.stopped !== undefined) return;
    this.walking = true;
    try {
      const customerWalk = new CustomerWalk(this.book, this.lines, this.room, "the build thread's share of the book", (currency) =>
        this.customers.set(currency, (this.customers.get(currency) ?? 0) + 1),
      );
      for (let part = this.queue.shift(); part !== undefined; part = this.queue.shift()) {
        const { index, nameStarts, nameBytes } = part;
        const nameOf = (customer: number) => {
          const k = (customer - index) / PARTITIONS;
          return nameBytes.subarray(nameStarts[k]!, nameStarts[k + 1]!);
        };
        const partition = new PartitionWalk(part);
        const take = (group: CustomerContracts) => customerWalk.take(group, nameOf(group.customer));
        while (!partition.walk(take, TURN_CUSTOMERS)) {
          await this.roomToWrite();
          await new Promise((resolve) => setImmediate(resolve));
          if (this.stopped !== undefined) return;
        }
        Atomics.add(this.state, WALKED, 1);
        await this.roomToWrite();
        if (this.stopped !== undefined) return;
      }
      if (this.ended) {
        this.lines.done();
        const book = this.book.shared();
        this.port.postMessage({ type: 'size', bytes: sharedBookBytes(book) } satisfies FromHelper);
        this.answer({ type: 'book', book, customers: [...this.customers] });
        // What the walk left in this thread's heap goes now, while the tally thread merges: the build's next steps reuse it rather than grow the heap.
        collectGarbage();
      }
    } catch (error) {
      this.stop((error as Error).message);
    } finally {
      this.walking = false;
    }
    if (this.stopped === undefined && (this.queue.length > 0 || (this.ended && Atomics.load(this.state, ANSWERED) === 0))) void this.walk();
  }

  private answer(message: FromHelper): void {
    if (Atomics.load(this.state, ANSWERED) !== 0) return;
    this.port.postMessage(message);
    Atomics.store(this.state, ANSWERED, 1);
    Atomics.notify(this.state, ANSWERED);
    this.port.close();
    this.lines.close();
  }
}
