// Who is looking at the dashboard. The session is a random token in a cookie (HttpOnly,
// SameSite=Lax, scoped to /dashboard, Secure when the service is served over https) whose
// digest is kept on the server (shared/tenancy/dashboardSessions.ts), so signing out ends it
// there. Every form carries a CSRF token: bound to the session once signed in, and before that
// to a random cookie of the sign-in and sign-up forms; a POST with a foreign Origin is refused.
import { createHmac, randomBytes } from 'node:crypto';
import type { Request, Response } from 'express';
import { cookieOf, sameToken, setPageCookie } from '../cookies.ts';
import type { Pool } from '../../shared/platform/db.ts';
import type { Mode } from '../../shared/tenancy/apiKeys.ts';
import {
  DASHBOARD_SESSION_HOURS,
  dashboardChoiceOf,
  endDashboardSession,
  personOfDashboardSession,
  startDashboardSession,
} from '../../shared/tenancy/dashboardSessions.ts';
import { accountsOf, type LinkedAccount } from '../../shared/tenancy/memberships.ts';
import { emailOf } from '../../shared/tenancy/people.ts';

export const DASHBOARD_PATH = '/dashboard';
const SESSION_COOKIE = 'svc_dashboard';
const FORM_COOKIE = 'svc_dashboard_form';
const TOKEN = /^[\w-]{22,64}$/;

/** The signed-in person and what they look at: one of their accounts, in one mode. */
export type Viewer = {
  personId: string;
  email: string;
  sessionToken: string;
  /** The CSRF token of their forms. */
  csrf: string;
  accounts: LinkedAccount[];
  /** Undefined when the person is linked to no account yet. */
  account: LinkedAccount | undefined;
  mode: Mode;
};



export class DashboardSessions {
  private readonly pool: Pool;
  private readonly key: string;
  private readonly secure: boolean;
  private readonly origin: string;

  constructor(pool: Pool, key: string, baseUrl: string) {
    this.pool = pool;
    this.key = key;
    this.secure = baseUrl.startsWith('https:');
    this.origin = new URL(baseUrl).origin;
  }

  private mac(label: string, value: string): string {
    return createHmac('sha256', this.key).update(`dashboard-${label}\n${value}`).digest('base64url');
  }

  private setCookie(res: Response, name: string, value: string, maxAgeSeconds: number): void {
    setPageCookie(res, { path: DASHBOARD_PATH, secure: this.secure }, name, value, maxAgeSeconds);
  }

  private sessionTokenOf(req: Request): string | undefined {
    const token = cookieOf(req, SESSION_COOKIE);
    return token && TOKEN.test(token) ? token : undefined;
  }

  /** The signed-in person with the account and mode they look at; undefined without an open session. */
  async viewerOf(req: Request): Promise<Viewer | undefined> {
    const sessionToken = this.sessionTokenOf(req);
    if (!sessionToken) return undefined;
    const personId = await personOfDashboardSession(this.pool, sessionToken);
    if (!personId) return undefined;
    const [email, accounts, choice] = await Promise.all([emailOf(this.pool, personId), accountsOf(this.pool, personId), dashboardChoiceOf(this.pool, personId)]);
    // A choice of an account they are no longer linked to falls back to the first, in test mode.
    const chosen = choice && accounts.find((a) => a.id === choice.accountId);
    return {
      personId,
      email: email ?? '',
      sessionToken,
      csrf: this.mac('csrf', sessionToken),
      accounts,
      account: chosen ?? accounts[0],
      mode: chosen ? choice.mode : 'test',
    };
  }

  /** A new session for the person (a session this browser had before is ended: a fresh token at every sign-in). */
  async signIn(req: Request, res: Response, personId: string): Promise<void> {
    const previous = this.sessionTokenOf(req);
    if (previous) await endDashboardSession(this.pool, previous);
    const token = await startDashboardSession(this.pool, personId);
    this.setCookie(res, SESSION_COOKIE, token, DASHBOARD_SESSION_HOURS * 3600);
    this.setCookie(res, FORM_COOKIE, '', 0);
  }

  async signOut(req: Request, res: Response): Promise<void> {
    const token = this.sessionTokenOf(req);
    if (token) await endDashboardSession(this.pool, token);
    this.setCookie(res, SESSION_COOKIE, '', 0);
  }

  /** The token of the sign-in and sign-up forms: a random cookie, and its MAC in the form. */
  formToken(req: Request, res: Response): string {
    let nonce = cookieOf(req, FORM_COOKIE);
    if (!nonce || !TOKEN.test(nonce)) {
      nonce = randomBytes(16).toString('base64url');
      this.setCookie(res, FORM_COOKIE, nonce, 3600);
    }
    return this.mac('form', nonce);
  }

  /** Whether a form posted before sign-in comes from our page. */
  anonymousFormIsOurs(req: Request, fields: Record<string, unknown> | undefined): boolean {
    const nonce = cookieOf(req, FORM_COOKIE);
    return this.originIsOurs(req) && nonce !== undefined && this.tokenMatches(fields, this.mac('form', nonce));
  }

  /** Whether a signed-in person's form comes from our page: our origin (when the browser says) and their session's token. */
  formIsOurs(req: Request, viewer: Viewer, fields: Record<string, unknown> | undefined): boolean {
    return this.originIsOurs(req) && this.tokenMatches(fields, viewer.csrf);
  }

  private originIsOurs(req: Request): boolean {
    const origin = req.headers.origin;
    return origin === undefined || origin === this.origin;
  }

  private tokenMatches(fields: Record<string, unknown> | undefined, expected: string): boolean {
    const given = typeof fields?.['csrf'] === 'string' ? fields['csrf'] : '';
    return given !== '' && sameToken(given, expected);
  }
}
