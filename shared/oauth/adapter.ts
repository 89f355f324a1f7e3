// oidc-provider's storage in PostgreSQL: one table for every model (see sql/004_oauth.sql).
// Ids are stored as SHA-256 digests and never inside the payload (nor the session cookie an
// interaction copies in), so the table holds no usable code, token or session id. `consume` is a
// conditional update: of two concurrent exchanges of one code or refresh token, exactly one wins
// and the other gets `invalid_grant`. A consumed code stays findable for as long as the tokens it
// gave can live, so that presenting it again at any time revokes them, not only within its 60
// seconds (../shared/spec/service-spec.md §3). The SQL is records.ts's.
import { errors, type Adapter, type AdapterPayload } from 'oidc-provider';
import type { Queryable } from '../platform/db.ts';
import { unbindGrants } from './grantAccounts.ts';
import {
  consumeRecord,
  deleteGrants,
  deleteRecord,
  deleteRecordsOfGrant,
  findRecord,
  findRecordByUid,
  grantOfUsedCode,
  noteClientUsed,
  type OAuthRecord,
  tokensSaved,
  upsertRecord,
} from './records.ts';

/** How long the loser of a concurrent code exchange waits for the winner's tokens before revoking them. */
const WINNER_WAIT_MS = 2_000;

/** Waits, within WINNER_WAIT_MS, until the grant's access and refresh tokens are saved. */
async function winnerSaved(db: Queryable, grantId: string): Promise<void> {
  for (const deadline = Date.now() + WINNER_WAIT_MS; Date.now() < deadline; ) {
    if (await tokensSaved(db, grantId)) return;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

const epoch = (date: Date) => Math.floor(date.getTime() / 1000);

export function postgresAdapter(db: Queryable): new (model: string) => Adapter {
  return class PostgresAdapter implements Adapter {
    readonly model: string;

    constructor(model: string) {
      this.model = model;
    }

    async upsert(id: string, payload: AdapterPayload, expiresIn: number | undefined): Promise<void> {
      const { jti: _id, ...stored } = payload;
      // An interaction carries the session's id ("cookie"), which nothing reads back.
      if (stored.session && typeof stored.session === 'object') {
        const { cookie: _cookie, ...session } = stored.session as Record<string, unknown>;
        stored.session = session as AdapterPayload['session'];
      }
      await upsertRecord(db, { model: this.model, id, payload: stored, grantId: payload.grantId, uid: payload.uid, expiresIn });
      // An authorization granted to a client keeps its registration (records.ts, UNUSED_CLIENT_DAYS).
      if (this.model === 'Grant' && typeof payload.clientId === 'string') await noteClientUsed(db, payload.clientId);
    }

    async find(id: string): Promise<AdapterPayload | undefined> {
      const record = await findRecord(db, this.model, id);
      return record && this.restore(record, id);
    }

    async findByUid(uid: string): Promise<AdapterPayload | undefined> {
      const record = await findRecordByUid(db, this.model, uid);
      // Only the digest of the id is kept; callers of findByUid read the record, never save it back.
      return record && this.restore(record, undefined);
    }

    async findByUserCode(): Promise<undefined> {
      return undefined; // the device flow is not offered
    }

    async consume(id: string): Promise<void> {
      if (await consumeRecord(db, this.model, id)) return;
      if (this.model === 'AuthorizationCode') {
        // The loser of a race is a second exchange of the code all the same: what the code gave (or
        // is about to give) is revoked. Dropping the grant's account binding also stops tokens the
        // winner saves after this.
        // Only when it was used: a code that merely expired meanwhile is not a replay.
        const grantId = await grantOfUsedCode(db, this.model, id);
        if (grantId) {
          // Let the winner finish first (its access and refresh tokens saved), within a bound: revoked under
          // it, the winner's own exchange would fail too, and neither would get tokens.
          await winnerSaved(db, grantId);
          await deleteGrants(db, [grantId]);
        }
      }
      throw new errors.InvalidGrant('already consumed by a concurrent request');
    }

    async destroy(id: string): Promise<void> {
      await deleteRecord(db, this.model, id);
      // A revoked grant acts for nobody, whatever token of it is still being saved.
      if (this.model === 'Grant') await unbindGrants(db, [id]);
    }

    async revokeByGrantId(grantId: string): Promise<void> {
      await deleteRecordsOfGrant(db, this.model, grantId);
    }

    private restore(row: OAuthRecord, id: string | undefined): AdapterPayload {
      // The provider checks a code's expiry before whether it was used; a used code reads as
      // unexpired so that its replay is recognised as one (and revokes) rather than as "expired".
      const replayable = row.consumed_at && this.model === 'AuthorizationCode';
      return {
        ...(row.payload as AdapterPayload),
        ...(id !== undefined && this.model !== 'Client' && { jti: id }),
        ...(row.consumed_at && { consumed: epoch(row.consumed_at) }),
        ...(replayable && { exp: epoch(new Date()) + 60 }),
      };
    }
  };
}
