// The cookies of the people's pages (/account and /dashboard, each with a session of its own):
// reading one from a request, setting one (HttpOnly, SameSite=Lax, scoped to the pages' path,
// Secure when the service is served over https), and comparing a token in constant time.
import { timingSafeEqual } from 'node:crypto';
import type { Request, Response } from 'express';

/** A cookie's value in the request, if it has it. */
export function cookieOf(req: Request, name: string): string | undefined {
  for (const part of (req.headers.cookie ?? '').split(';')) {
    const at = part.indexOf('=');
    if (at > 0 && part.slice(0, at).trim() === name) return part.slice(at + 1).trim();
  }
  return undefined;
}

/** Sets a cookie of the pages under `path` (maxAgeSeconds 0 removes it). */
export function setPageCookie(res: Response, scope: { path: string; secure: boolean }, name: string, value: string, maxAgeSeconds: number): void {
  res.append('Set-Cookie', `${name}=${value}; Path=${scope.path}; HttpOnly; SameSite=Lax; Max-Age=${maxAgeSeconds}${scope.secure ? '; Secure' : ''}`);
}

/** Whether two tokens are equal, in time that does not tell where they differ. */
export const sameToken = (a: string, b: string): boolean => a.length === b.length && timingSafeEqual(Buffer.from(a), Buffer.from(b));
