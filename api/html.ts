import type { RequestHandler } from 'express';

/** Escapes text for HTML element content and quoted attribute values. */
export const escapeHtml = (s: string) =>
  s.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);

/**
 * Our pages (the reference, problem pages, the OAuth flow) are plain server-rendered HTML with an
 * inline <style> and no script of ours, never framed. `script-src` is named (as 'none') so that
 * oidc-provider can add the hash of the one inline script it renders itself (response_mode
 * form_post). No `form-action`: browsers apply it to the redirects that follow a form, and the
 * consent form ends at the client's redirect_uri.
 */
export const CONTENT_SECURITY_POLICY = "default-src 'none'; script-src 'none'; style-src 'unsafe-inline'; frame-ancestors 'none'; base-uri 'none'";

/**
 * Set on every answer before anything else runs, so that no HTML page (ours, Express's or the
 * provider's) can go out without them; on JSON and files they cost nothing and stop sniffing.
 */
export const securityHeaders = (): RequestHandler => (_req, res, next) => {
  // setHeader rather than Express's res.set, which looks at each name for a Content-Type first.
  res.setHeader('Content-Security-Policy', CONTENT_SECURITY_POLICY);
  res.setHeader('X-Frame-Options', 'DENY');
  res.setHeader('X-Content-Type-Options', 'nosniff');
  next();
};
