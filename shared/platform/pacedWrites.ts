// Writing an answer to a client that reads at its own pace: each piece waits for the socket to
// take the one before, holding nothing shared meanwhile (the caller reads the next piece only
// then, on a connection of its own pool that it has already given back), and a client that takes
// nothing for `stallMs` is cut off (contract, "Sharing the service fairly": a slow reader costs
// only its own request).

/** A client took nothing of its answer for the time allowed: its connection was closed. */
export class ClientStalled extends Error {
  constructor(stallMs: number) {
    super(`the client read nothing of its answer for ${stallMs} ms; its connection was closed`);
    this.name = 'ClientStalled';
  }
}

type Sink = NodeJS.WritableStream & { destroy?(error?: Error): void; writableEnded?: boolean; destroyed?: boolean };

/** Writes `piece`; when the sink is full, waits until it drains, at most `stallMs` (then the sink is destroyed). */
export async function writePaced(sink: Sink, piece: string | Buffer, stallMs: number): Promise<void> {
  if (sink.destroyed) throw new Error('the client went away');
  if (sink.write(piece)) return;
  await drainedWithin(sink, stallMs);
}

/** Resolves when the sink drains; rejects when it closes first, or when `stallMs` pass (and destroys it). */
export function drainedWithin(sink: Sink, stallMs: number): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    const done = () => {
      clearTimeout(timer);
      sink.removeListener('drain', onDrain);
      sink.removeListener('close', onClose);
    };
    const onDrain = () => {
      done();
      resolve();
    };
    const onClose = () => {
      done();
      reject(new Error('the client went away'));
    };
    const timer = setTimeout(() => {
      done();
      const stalled = new ClientStalled(stallMs);
      sink.destroy?.(stalled);
      reject(stalled);
    }, stallMs);
    sink.once('drain', onDrain);
    sink.once('close', onClose);
  });
}

/** Writes every piece of `pieces` at the client's pace (writePaced), then ends the sink. */
export async function sendPaced(sink: Sink, pieces: AsyncIterable<string | Buffer>, stallMs: number): Promise<void> {
  for await (const piece of pieces) await writePaced(sink, piece, stallMs);
  sink.end();
}
