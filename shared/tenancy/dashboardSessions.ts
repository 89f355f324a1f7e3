// The people's dashboard: its sessions (ended on the server when the person signs out) and what
// each person chose to look at (one account and one mode). The only writer of
// `dashboard_sessions` and `dashboard_choices`.
import { randomBytes } from 'node:crypto';
import type { Queryable } from '../platform/db.ts';
import { sha256 } from '../platform/ids.ts';
import type { Mode } from './apiKeys.ts';

export const DASHBOARD_SESSION_HOURS = 12;

/** A new session of the person: the token for their cookie (only its digest is kept). Expired sessions are forgotten on the way. */
export async function startDashboardSession(db: Queryable, personId: string): Promise<string> {
  const token = randomBytes(32).toString('base64url');
  await db.query('DELETE FROM dashboard_sessions WHERE expires_at < now()');
  await db.query(`INSERT INTO dashboard_sessions (token_sha256, person_id, expires_at) VALUES ($1, $2, now() + make_interval(hours => $3))`, [
    sha256(token),
    personId,
    DASHBOARD_SESSION_HOURS,
  ]);
  return token;
}

/** The person of a session still open (not signed out, not expired). */
export async function personOfDashboardSession(db: Queryable, token: string): Promise<string | undefined> {
  const { rows } = await db.query<{ person_id: string }>('SELECT person_id FROM dashboard_sessions WHERE token_sha256 = $1 AND expires_at > now()', [
    sha256(token),
  ]);
  return rows[0]?.person_id;
}

/** Ends a session: its cookie opens nothing from now on. */
export async function endDashboardSession(db: Queryable, token: string): Promise<void> {
  await db.query('DELETE FROM dashboard_sessions WHERE token_sha256 = $1', [sha256(token)]);
}

export type DashboardChoice = { accountId: string; mode: Mode };

/** What the person last chose to look at, if they ever switched. */
export async function dashboardChoiceOf(db: Queryable, personId: string): Promise<DashboardChoice | undefined> {
  const { rows } = await db.query<{ account_id: string; mode: Mode }>('SELECT account_id, mode FROM dashboard_choices WHERE person_id = $1', [personId]);
  return rows[0] && { accountId: rows[0].account_id, mode: rows[0].mode };
}

/** Remembers the account and mode the person switched to (the caller checked they are linked to it). */
export async function chooseDashboardView(db: Queryable, personId: string, choice: DashboardChoice): Promise<void> {
  await db.query(
    `INSERT INTO dashboard_choices (person_id, account_id, mode) VALUES ($1, $2, $3)
     ON CONFLICT (person_id) DO UPDATE SET account_id = EXCLUDED.account_id, mode = EXCLUDED.mode, chosen_at = now()`,
    [personId, choice.accountId, choice.mode],
  );
}
