// oidc-provider's storage in PostgreSQL: one table for every model (see sql/004_oauth.sql).
// Ids are stored as SHA-256 digests and never inside the payload (nor the session cookie an
// interaction copies in), so the table holds no usable code, token or session id. `consume` is a
// conditional update: of two concurrent exchanges of one code or refresh token, exactly one wins
// and the other gets `invalid_grant`. A consumed code stays findable for as long as the tokens it
// gave can live, so that presenting it again at any time revokes them (spec §3), not only within
// its 60 seconds.
import { errors, type Adapter, type AdapterPayload } from 'oidc-provider';
import type { Queryable } from '../platform/db.ts';
import { sha256 } from '../platform/ids.ts';
import { deleteGrants } from './records.ts';

/** How long the loser of a concurrent code exchange waits for the winner's tokens before revoking them. */
const WINNER_WAIT_MS = 2_000;

/** Waits, within WINNER_WAIT_MS, until the grant's access and refresh tokens are saved. */
async function winnerSaved(db: Queryable, grantId: string): Promise<void> {
  for (const deadline = Date.now() + WINNER_WAIT_MS; Date.now() < deadline; ) {
    const { rows } = await db.query<{ n: number }>(
      `SELECT count(DISTINCT model)::int AS n FROM oauth_records WHERE model IN ('AccessToken', 'RefreshToken') AND grant_id = $1`,
      [grantId],
    );
    if (rows[0]!.n === 2) return;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

type Row = { payload: AdapterPayload; consumed_at: Date | null };

const epoch = (date: Date) => Math.floor(date.getTime() / 1000);

/** How long a used authorization code is kept to recognise a replay: as long as its grant (and so
 * any token it led to, refreshes included) can live. */
const USED_CODE_KEPT = '365 days';

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
      await db.query(
        `INSERT INTO oauth_records (model, id_sha256, payload, grant_id, uid, expires_at)
         VALUES ($1, $2, $3, $4, $5, CASE WHEN $6::int IS NULL THEN NULL ELSE now() + make_interval(secs => $6::int) END)
         ON CONFLICT (model, id_sha256) DO UPDATE
           SET payload = EXCLUDED.payload, grant_id = EXCLUDED.grant_id, uid = EXCLUDED.uid, expires_at = EXCLUDED.expires_at`,
        [this.model, sha256(id), stored, payload.grantId ?? null, payload.uid ?? null, expiresIn ?? null],
      );
    }

    async find(id: string): Promise<AdapterPayload | undefined> {
      const { rows } = await db.query<Row>(
        `SELECT payload, consumed_at FROM oauth_records
          WHERE model = $1 AND id_sha256 = $2 AND (expires_at IS NULL OR expires_at > now())`,
        [this.model, sha256(id)],
      );
      return rows[0] && this.restore(rows[0], id);
    }

    async findByUid(uid: string): Promise<AdapterPayload | undefined> {
      const { rows } = await db.query<Row>(
        `SELECT payload, consumed_at FROM oauth_records
          WHERE model = $1 AND uid = $2 AND (expires_at IS NULL OR expires_at > now())`,
        [this.model, uid],
      );
      // Only the digest of the id is kept; callers of findByUid read the record, never save it back.
      return rows[0] && this.restore(rows[0], undefined);
    }

    async findByUserCode(): Promise<undefined> {
      return undefined; // the device flow is not offered
    }

    async consume(id: string): Promise<void> {
      const { rowCount } = await db.query(
        `UPDATE oauth_records
            SET consumed_at = now(),
                expires_at = CASE WHEN model = 'AuthorizationCode' THEN now() + interval '${USED_CODE_KEPT}' ELSE expires_at END
          WHERE model = $1 AND id_sha256 = $2 AND consumed_at IS NULL AND (expires_at IS NULL OR expires_at > now())`,
        [this.model, sha256(id)],
      );
      if (rowCount === 1) return;
      if (this.model === 'AuthorizationCode') {
        // The loser of a race is a second exchange of the code all the same: what the code gave (or
        // is about to give) is revoked. Dropping the grant's account binding also stops tokens the
        // winner saves after this.
        // Only when it was used: a code that merely expired meanwhile is not a replay.
        const { rows } = await db.query<{ grant_id: string | null }>(
          'SELECT grant_id FROM oauth_records WHERE model = $1 AND id_sha256 = $2 AND consumed_at IS NOT NULL',
          [this.model, sha256(id)],
        );
        const grantId = rows[0]?.grant_id;
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
      await db.query('DELETE FROM oauth_records WHERE model = $1 AND id_sha256 = $2', [this.model, sha256(id)]);
      // A revoked grant acts for nobody, whatever token of it is still being saved.
      if (this.model === 'Grant') await db.query('DELETE FROM oauth_grant_accounts WHERE grant_id = $1', [id]);
    }

    async revokeByGrantId(grantId: string): Promise<void> {
      await db.query('DELETE FROM oauth_records WHERE model = $1 AND grant_id = $2', [this.model, grantId]);
    }

    private restore(row: Row, id: string | undefined): AdapterPayload {
      // The provider checks a code's expiry before whether it was used; a used code reads as
      // unexpired so that its replay is recognised as one (and revokes) rather than as "expired".
      const replayable = row.consumed_at && this.model === 'AuthorizationCode';
      return {
        ...row.payload,
        ...(id !== undefined && this.model !== 'Client' && { jti: id }),
        ...(row.consumed_at && { consumed: epoch(row.consumed_at) }),
        ...(replayable && { exp: epoch(new Date()) + 60 }),
      };
    }
  };
}
