// JSON documents with parts streamed in: a failed version's `errors` can hold millions of
// entries, so they are written from the database as they come instead of being built in memory.
// The document is serialized with a placeholder where each array goes, so the rest of it is
// exactly what JSON.stringify writes, in the same order.
import type { Response } from 'express';

/** Writes the inside of a JSON array (elements separated by commas) to the open sink. */
export type ArrayWriter = (sink: NodeJS.WritableStream) => Promise<void>;

export class StreamedJson {
  private readonly writers: ArrayWriter[] = [];

  /** A placeholder to put where the array goes in the document. */
  array(writer: ArrayWriter): string {
    this.writers.push(writer);
    return `\u0000streamed-array:${this.writers.length - 1}\u0000`;
  }

  /**
   * Sends `document` with its placeholders replaced by the arrays, as they stream. A HEAD gets
   * the status and headers only: nothing is read for a body nobody receives.
   */
  async send(res: Response, document: unknown): Promise<void> {
    if (!res.hasHeader('content-type')) res.type('json');
    if (res.req.method === 'HEAD') return void res.end();
    const text = JSON.stringify(document);
    const parts = text.split(/"\\u0000streamed-array:(\d+)\\u0000"/);
    for (let i = 0; i < parts.length; i++) {
      if (i % 2 === 0) {
        if (!res.write(parts[i]!)) await drained(res);
      } else {
        res.write('[');
        await this.writers[Number(parts[i])]!(res);
        res.write(']');
      }
    }
    res.end();
  }
}

const drained = (res: Response) =>
  new Promise<void>((resolve, reject) => {
    const onDrain = () => {
      res.off('close', onClose);
      resolve();
    };
    const onClose = () => {
      res.off('drain', onDrain);
      reject(new Error('the client went away'));
    };
    res.once('drain', onDrain);
    res.once('close', onClose);
  });
