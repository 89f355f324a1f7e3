// Row errors of a build, streamed into version_errors with COPY on a connection of their own
// (outside the build's transaction, which rolls back), opened at the first error. Memory stays
// bounded however many rows are bad: while COPY is behind, `behind()` gives the reader something
// to wait for. The errors become visible when `flush()` ends the COPY, before the version fails.
import { once } from 'node:events';
import type { Writable } from 'node:stream';
import { finished } from 'node:stream/promises';
import { from as copyFrom } from 'pg-copy-streams';
import type { Client, Pool } from '../platform/db.ts';
import type { RowError } from '../contract/fields.ts';

/** Text is sent to COPY in pieces of about this size. */
const PIECE = 64 * 1024;
/** Pieces sent or waiting before the reader is asked to wait. */
const MAX_QUEUED = 2;

/** COPY's text format: backslash, tab, newline and carriage return escaped. */
const copyText = (value: string) => value.replace(/[\\\t\n\r]/g, (c) => ({ '\\': '\\\\', '\t': '\\t', '\n': '\\n', '\r': '\\r' })[c]!);

export class ErrorSpill {
  count = 0;
  private text = '';
  private queued = 0;
  private copy: Promise<{ client: Client; stream: Writable }> | undefined;
  private sending: Promise<void> = Promise.resolve();
  private failure: Error | undefined;
  private readonly pool: Pool;
  private readonly versionId: string;

  constructor(pool: Pool, versionId: string) {
    this.pool = pool;
    this.versionId = versionId;
  }

  add(error: RowError): void {
    this.text += `${this.versionId}\t${this.count}\t${error.row}\t${copyText(error.field)}\t${copyText(error.code)}\t${copyText(error.message)}\n`;
    this.count++;
    if (this.text.length >= PIECE) this.send();
  }

  /** While COPY is behind, a promise settled when it caught up (rejected if it failed). */
  behind(): Promise<void> | undefined {
    return this.queued >= MAX_QUEUED ? this.sending : undefined;
  }

  /** Ends the COPY: every error reported so far is stored. Rethrows a failed write. */
  async flush(): Promise<void> {
    this.send();
    await this.sending;
    if (!this.copy) return;
    const { client, stream } = await this.copy;
    this.copy = undefined;
    try {
      stream.end();
      await finished(stream);
      client.release();
    } catch (error) {
      client.release(error as Error);
      throw error;
    }
  }

  /** Lets the connection go without storing anything (the build failed otherwise). */
  async abandon(): Promise<void> {
    const copy = this.copy;
    this.copy = undefined;
    if (!copy) return;
    const opened = await copy.catch(() => undefined);
    if (!opened) return;
    opened.stream.on('error', () => {});
    opened.stream.destroy(new Error('build abandoned'));
    opened.client.release(new Error('build abandoned'));
  }

  private send(): void {
    if (this.text === '') return;
    const piece = this.text;
    this.text = '';
    this.copy ??= this.open();
    const copy = this.copy;
    this.queued++;
    this.sending = this.sending.then(async () => {
      const { stream } = await copy;
      if (this.failure) throw this.failure;
      if (!stream.write(piece)) await once(stream, 'drain');
      this.queued--;
    });
  }

  private async open(): Promise<{ client: Client; stream: Writable }> {
    const client = await this.pool.connect();
    const stream = client.query(copyFrom('COPY version_errors (version_id, seq, row_number, field, code, message) FROM STDIN'));
    // Kept for the next write or the flush to throw; an error nobody listens to would end the process.
    stream.on('error', (error: Error) => (this.failure ??= error));
    return { client, stream };
  }
}
