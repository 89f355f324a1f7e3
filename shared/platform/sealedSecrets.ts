// Secrets the service must use again (webhook signing secrets), kept sealed: AES-256-GCM with the
// key in WEBHOOK_SECRETS_KEY (base64 of 32 bytes), or, when that is not set (development), with an
// installation key made by migration 010 and kept in `service_secrets`. The first byte of a sealed
// value says which key sealed it, so values sealed before the environment key was set still open.
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import type { Queryable } from './db.ts';

const INSTALLATION = 0;
const ENVIRONMENT = 1;

export class SecretBox {
  private readonly environmentKey: Buffer | undefined;
  private readonly db: Queryable;
  private installationKey: Promise<Buffer> | undefined;

  constructor(environmentKey: Buffer | undefined, db: Queryable) {
    this.environmentKey = environmentKey;
    this.db = db;
  }

  private async key(which: number): Promise<Buffer> {
    if (which === ENVIRONMENT) {
      if (!this.environmentKey) throw new Error('a secret was sealed with WEBHOOK_SECRETS_KEY, which is not set');
      return this.environmentKey;
    }
    this.installationKey ??= this.db
      .query<{ value: Buffer }>(`SELECT value FROM service_secrets WHERE name = 'webhook_secrets'`)
      .then((r) => r.rows[0]!.value);
    this.installationKey.catch(() => (this.installationKey = undefined));
    return this.installationKey;
  }

  async seal(plain: string): Promise<Buffer> {
    const which = this.environmentKey ? ENVIRONMENT : INSTALLATION;
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', await this.key(which), iv);
    const sealed = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final()]);
    return Buffer.concat([Buffer.from([which]), iv, cipher.getAuthTag(), sealed]);
  }

  async open(sealed: Buffer): Promise<string> {
    const decipher = createDecipheriv('aes-256-gcm', await this.key(sealed[0]!), sealed.subarray(1, 13));
    decipher.setAuthTag(sealed.subarray(13, 29));
    return Buffer.concat([decipher.update(sealed.subarray(29)), decipher.final()]).toString('utf8');
  }
}
