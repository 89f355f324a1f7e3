// Locks on resumable uploads across processes (@tus/server's Locker): a lease per upload in
// `upload_locks` (sql/018), taken with one statement, renewed every few seconds (one statement for
// every lock this process holds) for as long as the tus request works on the upload, and deleted
// when it is done. No connection is held meanwhile, however slowly the client sends (contract,
// "Sharing the service fairly"); a process that dies stops renewing, and its leases run out. A
// request that finds the lock taken asks its holder, wherever it runs, to let go (NOTIFY; every
// web process LISTENs), as @tus/server's in-memory locker does within one process: the holder's
// request ends after draining what it received, so a client that reconnects (maybe to another
// process) resumes at once instead of waiting for the server to notice that its old connection
// died. A holder whose lease was lost (its renewals failed until another request took it) is told
// to let go too; the store's writes check the offset they expect, so two writers can never both append.
import { randomUUID } from 'node:crypto';
import pg from 'pg';
import type { Lock, Locker, RequestRelease } from '@tus/utils';
import type { Pool } from '../../shared/platform/db.ts';
import type { Logger } from '../../shared/platform/log.ts';

const RELEASE_CHANNEL = 'upload_lock_release';
/** How long a request waits for an upload's lock before answering 423 (tus clients retry it). */
const ACQUIRE_TIMEOUT_MS = 20_000;
/** A holder is asked again this often while the lock stays taken. */
const ASK_AGAIN_MS = 1_000;

/** The answer when the lock cannot be had in time: 423 Locked, which tus clients retry. */
const locked = { status_code: 423, body: 'Another request is writing this upload; retry shortly.' };

/** How long a lease lasts without renewal: a holder that died frees its uploads after this. */
const LEASE_MS = 15_000;
/** How often a process renews the leases it holds. */
const RENEW_MS = 5_000;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export class UploadLocks implements Locker {
  private readonly pool: Pool;
  private readonly url: string;
  private readonly log: Logger;
  private readonly holders = new Map<string, Set<RequestRelease>>();
  /** The leases this process holds: holder id → upload id and how its request is told to let go. */
  private readonly leases = new Map<string, { uploadId: string; release: RequestRelease }>();
  private renewal: NodeJS.Timeout | undefined;
  private listener: Promise<pg.Client | undefined> | undefined;
  private stopped = false;

  /** `pool`: the process's pool; each statement takes a connection for its own length only. */
  constructor(pool: Pool, databaseUrl: string, log: Logger) {
    this.url = databaseUrl;
    this.log = log;
    this.pool = pool;
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

  /** Takes the upload's lease for `holder` if it is free or ran out; whether it did. */
  async tryLease(uploadId: string, holder: string): Promise<boolean> {
    const { rowCount } = await this.pool.query(
      `INSERT INTO upload_locks AS l (upload_id, holder, expires_at) VALUES ($1, $2, clock_timestamp() + make_interval(secs => $3))
       ON CONFLICT (upload_id) DO UPDATE SET holder = EXCLUDED.holder, expires_at = EXCLUDED.expires_at WHERE l.expires_at < clock_timestamp()`,
      [uploadId, holder, LEASE_MS / 1000],
    );
    return rowCount === 1;
  }

  /** Renewed with this process's other leases until given up. */
  keep(holder: string, uploadId: string, release: RequestRelease): void {
    this.leases.set(holder, { uploadId, release });
    this.renewal ??= setInterval(() => void this.renew(), RENEW_MS).unref();
  }

  async giveUp(uploadId: string, holder: string): Promise<void> {
    this.leases.delete(holder);
    if (this.leases.size === 0) {
      clearInterval(this.renewal);
      this.renewal = undefined;
    }
    await this.pool.query('DELETE FROM upload_locks WHERE upload_id = $1 AND holder = $2', [uploadId, holder]);
  }

  /** One statement for every lease held here; a request whose lease was lost is told to let go. */
  private async renew(): Promise<void> {
    const holders = [...this.leases.keys()];
    if (holders.length === 0) return;
    try {
      const { rows } = await this.pool.query<{ holder: string }>(
        `UPDATE upload_locks SET expires_at = clock_timestamp() + make_interval(secs => $2) WHERE holder = ANY($1) RETURNING holder`,
        [holders, LEASE_MS / 1000],
      );
      const kept = new Set(rows.map((r) => r.holder));
      for (const holder of holders) {
        const lease = this.leases.get(holder);
        if (lease && !kept.has(holder)) {
          this.log.warn({ uploadId: lease.uploadId }, 'upload lock lost; its request lets go');
          void lease.release();
        }
      }
    } catch (error) {
      this.log.warn({ err: error }, 'upload locks not renewed; trying again shortly');
    }
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
    clearInterval(this.renewal);
    const client = await this.listener;
    await client?.end().catch(() => {});
  }
}

class UploadLock implements Lock {
  private readonly locks: UploadLocks;
  private readonly id: string;
  /** This lock's own name in `upload_locks` while it holds the lease. */
  private holder: string | undefined;
  private release: RequestRelease | undefined;

  constructor(locks: UploadLocks, id: string) {
    this.locks = locks;
    this.id = id;
  }

  async lock(signal: AbortSignal, requestRelease: RequestRelease): Promise<void> {
    this.locks.listen();
    const holder = randomUUID();
    const deadline = Date.now() + ACQUIRE_TIMEOUT_MS;
    let askedAt = 0;
    for (let attempt = 0; ; attempt++) {
      if (await this.locks.tryLease(this.id, holder)) break;
      if (signal.aborted || Date.now() > deadline) throw locked;
      if (Date.now() - askedAt > ASK_AGAIN_MS) {
        askedAt = Date.now();
        await this.locks.askRelease(this.id);
      }
      await sleep(Math.min(100, 5 * 2 ** attempt));
    }
    this.holder = holder;
    this.release = requestRelease;
    this.locks.keep(holder, this.id, requestRelease);
    this.locks.hold(this.id, requestRelease);
  }

  async unlock(): Promise<void> {
    const holder = this.holder;
    if (!holder) throw new Error('Releasing an unlocked lock!');
    this.holder = undefined;
    this.locks.letGo(this.id, this.release!);
    // If the database is away, the lease runs out by itself.
    await this.locks.giveUp(this.id, holder).catch(() => {});
  }
}
