// CSRF: the provider's interaction cookie (SameSite=Lax, scoped to the interaction's path) is
// required to read the interaction at all, so a cross-site form cannot act on someone's
// interaction; on top of that every form carries a token bound to the interaction, and a POST
// with a foreign Origin is refused.
import { createHmac, timingSafeEqual } from 'node:crypto';
import type { Request } from 'express';

/** The token the forms of interaction `uid` carry: an HMAC of its uid. */
export function csrfTokenFor(csrfKey: string, uid: string): string {
  return createHmac('sha256', csrfKey).update(`interaction-csrf\n${uid}`).digest('base64url');
}

function csrfTokenValid(csrfKey: string, uid: string, given: string): boolean {
  const expected = Buffer.from(csrfTokenFor(csrfKey, uid));
  const actual = Buffer.from(given);
  return actual.length === expected.length && timingSafeEqual(actual, expected);
}

/** Whether a posted form comes from our page: the same origin (when the browser says) and the interaction's token. */
export function formFromOurPage(req: Request, baseUrl: string, csrfKey: string): boolean {
  const sentOrigin = req.headers.origin;
  const csrf = typeof req.body?.csrf === 'string' ? req.body.csrf : '';
  return (sentOrigin === undefined || sentOrigin === new URL(baseUrl).origin) && csrfTokenValid(csrfKey, String(req.params['uid']), csrf);
}
