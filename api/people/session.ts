// A person's session on their own pages (/account): a cookie holding their id and an expiry,
// signed with an HMAC (no server state), HttpOnly, SameSite=Lax, scoped to /account, Secure when
// the service is served over https; 12 hours. The forms carry a CSRF token bound to the session
// (or, before sign-in, to a random cookie of the sign-in form), and a POST with a foreign Origin
// is refused.
import { createHmac, randomBytes } from 'node:crypto';
import type { Request, Response } from 'express';
import { cookieOf, sameToken, setPageCookie } from '../cookies.ts';

const SESSION_COOKIE = 'svc_person';
const FORM_COOKIE = 'svc_person_form';
const SESSION_HOURS = 12;
export const PEOPLE_PATH = '/account';



export class PeopleSessions {
  private readonly key: string;
  private readonly secure: boolean;
  private readonly origin: string;

  constructor(key: string, baseUrl: string) {
    this.key = key;
    this.secure = baseUrl.startsWith('https:');
    this.origin = new URL(baseUrl).origin;
  }

  private mac(label: string, value: string): string {
    return createHmac('sha256', this.key).update(`people-${label}\n${value}`).digest('base64url');
  }

  private set(res: Response, name: string, value: string, maxAgeSeconds: number): void {
    setPageCookie(res, { path: PEOPLE_PATH, secure: this.secure }, name, value, maxAgeSeconds);
  }

  /** The signed-in person, if the session cookie is ours and unexpired. */
  personOf(req: Request): string | undefined {
    const value = cookieOf(req, SESSION_COOKIE);
    if (!value) return undefined;
    const [payload = '', mac = ''] = value.split('.');
    if (!sameToken(mac, this.mac('session', payload))) return undefined;
    const [personId, expires] = Buffer.from(payload, 'base64url').toString('utf8').split('\n');
    return personId && Number(expires) * 1000 > Date.now() ? personId : undefined;
  }

  signIn(res: Response, personId: string): void {
    const payload = Buffer.from(`${personId}\n${Math.floor(Date.now() / 1000) + SESSION_HOURS * 3600}`).toString('base64url');
    this.set(res, SESSION_COOKIE, `${payload}.${this.mac('session', payload)}`, SESSION_HOURS * 3600);
    this.set(res, FORM_COOKIE, '', 0);
  }

  signOut(res: Response): void {
    this.set(res, SESSION_COOKIE, '', 0);
  }

  /** The CSRF token of the signed-in person's forms (bound to their session cookie). */
  sessionToken(req: Request): string {
    return this.mac('csrf', cookieOf(req, SESSION_COOKIE) ?? '');
  }

  /** The sign-in form's token: a random cookie, and its MAC in the form. */
  signInToken(req: Request, res: Response): string {
    let nonce = cookieOf(req, FORM_COOKIE);
    if (!nonce || !/^[\w-]{22}$/.test(nonce)) {
      nonce = randomBytes(16).toString('base64url');
      this.set(res, FORM_COOKIE, nonce, 3600);
    }
    return this.mac('sign-in', nonce);
  }

  /** Whether a posted form comes from our page: our origin (when the browser says) and a token that matches. */
  formIsOurs(req: Request, signedIn: boolean): boolean {
    const origin = req.headers.origin;
    if (origin !== undefined && origin !== this.origin) return false;
    const given = typeof req.body?.csrf === 'string' ? (req.body.csrf as string) : '';
    const expected = signedIn ? this.sessionToken(req) : this.mac('sign-in', cookieOf(req, FORM_COOKIE) ?? '');
    return given !== '' && sameToken(given, expected);
  }
}
