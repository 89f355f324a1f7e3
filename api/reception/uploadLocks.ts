// Locks on resumable uploads across processes (@tus/server's Locker): a PostgreSQL session
// advisory lock per upload, held on a connection of a small pool of its own for as long as the tus
// request works on the upload. A request that finds the lock taken asks its holder, wherever it
// runs, to let go (NOTIFY; every web process LISTENs), as @tus/server's in-memory locker does
// within one process: the holder's request ends after draining what it received, so a client
// that reconnects (maybe to another process) resumes at once instead of waiting for the server to
// notice that its old connection died.
import pg from 'pg';
import type { Lock, Locker, RequestRelease } from '@tus/utils';
import { createPool, type Client, type Pool } from '../../shared/platform/db.ts';
import type { Logger } from '../../shared/platform/log.ts';

const RELEASE_CHANNEL = 'upload_lock_release';
/** How long a request waits for an upload's lock before answering 423 (tus clients retry it). */
const ACQUIRE_TIMEOUT_MS = 20_000;
/** A holder is asked again this often while the lock stays taken. */
const ASK_AGAIN_MS = 1_000;

/** The answer when the lock cannot be had in time: 423 Locked, which tus clients retry. */
const locked = { status_code: 423, body: 'Another request is writing this upload; retry shortly.' };

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export class UploadLocks implements Locker {
  private readonly pool: Pool;
  private readonly url: string;
  private readonly log: Logger;
  private readonly holders = new Map<string, Set<RequestRelease>>();
  private listener: Promise<pg.Client | undefined> | undefined;
  private stopped = false;

  constructor(databaseUrl: string, log: Logger, maxConcurrent = 50) {
    this.url = databaseUrl;
    this.log = log;
    this.pool = createPool(databaseUrl, maxConcurrent, 'dataset-service-web-upload-locks');
  }

  newLock(id: string): Lock {
    return new UploadLock(this, id);
  }

  /** Connects the listener for release requests if it is not (first use, or after losing it). */
  listen(): void {
    if (this.listener || this.stopped) return;
    const client = new pg.Client({ connectionString: this.url, application_name: 'dataset-service-web-upload-locks', connectionTimeoutMillis: 5_000 });
    client.on('notification', (message) => {
      for (const release of this.holders.get(message.payload ?? '') ?? []) void release();
    });
    client.on('error', (error) => {
      this.log.warn({ err: error }, 'upload lock listener lost; it reconnects with the next lock');
      this.listener = undefined;
      client.end().catch(() => {});
    });
    this.listener = client
      .connect()
      .then(() => client.query(`LISTEN ${RELEASE_CHANNEL}`))
      .then(() => client)
      .catch((error: unknown) => {
        // Release requests are a courtesy: without them a request waits for the holder to finish.
        this.log.warn({ err: error }, 'upload lock listener could not connect');
        this.listener = undefined;
        client.end().catch(() => {});
        return undefined;
      });
  }

  connect(): Promise<Client> {
    return this.pool.connect();
  }

  async askRelease(id: string): Promise<void> {
    await this.pool.query('SELECT pg_notify($1, $2)', [RELEASE_CHANNEL, id]);
  }

  hold(id: string, release: RequestRelease): void {
    const set = this.holders.get(id) ?? new Set();
    set.add(release);
    this.holders.set(id, set);
  }

  letGo(id: string, release: RequestRelease): void {
    const set = this.holders.get(id);
    set?.delete(release);
    if (set?.size === 0) this.holders.delete(id);
  }

  async stop(): Promise<void> {
    this.stopped = true;
    const client = await this.listener;
    await client?.end().catch(() => {});
    await this.pool.end();
  }
}

class UploadLock implements Lock {
  private readonly locks: UploadLocks;
  private readonly id: string;
  private client: Client | undefined;
  private release: RequestRelease | undefined;

  constructor(locks: UploadLocks, id: string) {
    this.locks = locks;
    this.id = id;
  }

  async lock(signal: AbortSignal, requestRelease: RequestRelease): Promise<void> {
    this.locks.listen();
    const client = await this.locks.connect();
    const deadline = Date.now() + ACQUIRE_TIMEOUT_MS;
    let askedAt = 0;
    try {
      for (let attempt = 0; ; attempt++) {
        const { rows } = await client.query<{ held: boolean }>(`SELECT pg_try_advisory_lock(hashtextextended('upload:' || $1, 0)) AS held`, [this.id]);
        if (rows[0]!.held) break;
        if (signal.aborted || Date.now() > deadline) throw locked;
        if (Date.now() - askedAt > ASK_AGAIN_MS) {
          askedAt = Date.now();
          await this.locks.askRelease(this.id);
        }
        await sleep(Math.min(100, 5 * 2 ** attempt));
      }
    } catch (error) {
      client.release();
      throw error;
    }
    this.client = client;
    this.release = requestRelease;
    this.locks.hold(this.id, requestRelease);
  }

  async unlock(): Promise<void> {
    const client = this.client;
    if (!client) throw new Error('Releasing an unlocked lock!');
    this.client = undefined;
    this.locks.letGo(this.id, this.release!);
    try {
      await client.query(`SELECT pg_advisory_unlock(hashtextextended('upload:' || $1, 0))`, [this.id]);
      client.release();
    } catch (error) {
      // The connection is gone, and its session's locks with it: it is not put back in the pool.
      client.release(error as Error);
    }
  }
}
