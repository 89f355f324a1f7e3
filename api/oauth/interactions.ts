// The person's side of the authorization flow, at /oauth/interaction/:uid. The provider sends the
// browser here when it needs a sign-in (prompt "login") or a consent (prompt "consent"); these
// routes answer with a page, or finish the interaction and send the browser back to the provider.
//
// CSRF: the provider's interaction cookie (SameSite=Lax, scoped to this path) is required to read
// the interaction at all, so a cross-site form cannot act on someone's interaction; on top of that
// every form carries a token bound to the interaction, and a POST with a foreign Origin is refused.
import { createHmac, timingSafeEqual } from 'node:crypto';
import express, { type ErrorRequestHandler, type Request, type RequestHandler, type Response, type Router } from 'express';
import { errors, type InteractionResults } from 'oidc-provider';
import { z } from 'zod';
import type { Config } from '../../shared/platform/config.ts';
import type { Pool } from '../../shared/platform/db.ts';
import type { Logger } from '../../shared/platform/log.ts';
import { Problem } from '../../shared/platform/problems.ts';
import { endSession } from '../../shared/oauth/records.ts';
import { accountsOf, bindGrantToAccount, emailOf, isMember, redeemInvitation, SIGN_IN_LOCK, signIn, signUp } from '../../shared/tenancy/people.ts';
import { MAX_PASSWORD_LENGTH, MIN_PASSWORD_LENGTH, PasswordChecksBusy } from '../../shared/platform/passwords.ts';
import { scopes, type Scope } from '../principal.ts';
import { consentPage, messagePage, signInPage, signUpPage } from './pages.ts';
import type { AuthorizationServer } from './provider.ts';

type Interaction = Awaited<ReturnType<AuthorizationServer['interactionDetails']>>;

export type InteractionDeps = { config: Config; pool: Pool; log: Logger; provider: AuthorizationServer; csrfKey: string };

const Credentials = z.object({
  email: z.string().trim().max(254).pipe(z.email()),
  password: z.string().min(1).max(MAX_PASSWORD_LENGTH),
  csrf: z.string(),
});
const InvitationCode = z
  .string()
  .trim()
  .max(100)
  .transform((code) => code || undefined);
const NewCredentials = Credentials.extend({
  password: z.string().min(MIN_PASSWORD_LENGTH).max(MAX_PASSWORD_LENGTH),
  invitationCode: InvitationCode.optional(),
});
const Consent = z.object({ csrf: z.string(), decision: z.enum(['allow', 'deny']), account: z.string().max(100).optional() });
const Invitation = z.object({ csrf: z.string(), invitationCode: InvitationCode });

/** offline_access is the provider's own (it may pass it on); refresh tokens are issued anyway. */
const IGNORED_SCOPES = new Set(['offline_access']);

const expired = (res: Response) =>
  res
    .status(400)
    .type('html')
    .send(
      messagePage(
        'This request has expired',
        'This sign-in request has expired or was already completed. Go back to the application and connect again.',
      ),
    );

export function interactionRoutes({ config, pool, log, provider, csrfKey }: InteractionDeps): Router {
  const router = express.Router({ mergeParams: true });
  const origin = new URL(config.baseUrl).origin;
  const csrfFor = (uid: string) => createHmac('sha256', csrfKey).update(`interaction-csrf\n${uid}`).digest('base64url');
  const csrfValid = (uid: string, given: string) => {
    const expected = Buffer.from(csrfFor(uid));
    const actual = Buffer.from(given);
    return actual.length === expected.length && timingSafeEqual(actual, expected);
  };
  const paths = (uid: string) => {
    const base = `/oauth/interaction/${encodeURIComponent(uid)}`;
    return {
      base,
      login: `${base}/login`,
      signup: `${base}/signup`,
      signupPage: `${base}?signup=1`,
      consent: `${base}/consent`,
      invitation: `${base}/invitation`,
      switchPerson: `${base}/switch`,
    };
  };

  // CSP, X-Frame-Options and nosniff are set for every page of the service (api/html.ts).
  router.use((_req, res, next) => {
    res.set({ 'Cache-Control': 'no-store', Pragma: 'no-cache' });
    next();
  });
  // Our forms are small UTF-8 forms of a few fields; anything else is refused (interactionErrorPage).
  router.use(express.urlencoded({ extended: false, limit: '16kb', parameterLimit: 20, inflate: false }));

  const finish = (req: Request, res: Response, result: InteractionResults, merge = false) =>
    provider.interactionFinished(req, res, result, { mergeWithLastSubmission: merge });

  /**
   * The interaction this browser is in, when it is the one in the path; else the expired page.
   * The provider lets scopes it does not know pass silently; we refuse them (invalid_scope), and
   * every authorization comes through here before a code can be issued.
   */
  const load = async (req: Request, res: Response): Promise<Interaction | undefined> => {
    let details: Interaction | undefined;
    try {
      details = await provider.interactionDetails(req, res);
    } catch (error) {
      if (!(error instanceof errors.SessionNotFound)) throw error;
    }
    if (!details || details.uid !== req.params['uid']) {
      expired(res);
      return undefined;
    }
    const requested = String(details.params['scope'] ?? '')
      .split(' ')
      .filter((s) => s !== '' && !IGNORED_SCOPES.has(s));
    const unknown = requested.filter((s) => !(scopes as readonly string[]).includes(s));
    if (unknown.length > 0 || requested.length === 0) {
      const description = unknown.length > 0 ? `Unknown scope: ${unknown.join(' ')}.` : 'No scope was asked for.';
      await finish(req, res, { error: 'invalid_scope', error_description: `${description} Ask for ${scopes.join(', ')} or both.` });
      return undefined;
    }
    return details;
  };

  /** POSTs: same origin (when the browser says), the interaction's token, the expected prompt. */
  const loadForPost = async (req: Request, res: Response, prompt: 'login' | 'consent'): Promise<Interaction | undefined> => {
    const sentOrigin = req.headers.origin;
    const csrf = typeof req.body?.csrf === 'string' ? req.body.csrf : '';
    if ((sentOrigin !== undefined && sentOrigin !== origin) || !csrfValid(String(req.params['uid']), csrf)) {
      res.status(403).type('html').send(messagePage('Request refused', 'This form was not sent from this site. Go back to the application and connect again.'));
      return undefined;
    }
    const details = await load(req, res);
    if (details && details.prompt.name !== prompt) {
      res.redirect(303, paths(details.uid).base);
      return undefined;
    }
    return details;
  };

  const clientName = async (details: Interaction) => {
    const client = await provider.Client.find(String(details.params['client_id']));
    return client?.clientName ?? String(details.params['client_id']);
  };

  const renderSignIn = async (res: Response, details: Interaction, status = 200, email?: string, error?: string) => {
    const p = paths(details.uid);
    res
      .status(status)
      .type('html')
      .send(signInPage({ action: p.login, signUpHref: p.signupPage, csrf: csrfFor(details.uid), clientName: await clientName(details), email, error }));
  };
  const renderSignUp = async (res: Response, details: Interaction, status = 200, email?: string, error?: string, invitationCode?: string) => {
    const p = paths(details.uid);
    res.status(status).type('html').send(
      signUpPage({
        action: p.signup,
        signInHref: p.base,
        csrf: csrfFor(details.uid),
        clientName: await clientName(details),
        email,
        invitationCode,
        error,
        minLength: MIN_PASSWORD_LENGTH,
      }),
    );
  };
  const renderConsent = async (res: Response, details: Interaction, status = 200, error?: string) => {
    const personId = String(details.session?.accountId);
    const [accounts, email] = await Promise.all([accountsOf(pool, personId), emailOf(pool, personId)]);
    const requested = String(details.params['scope'] ?? '').split(' ');
    const p = paths(details.uid);
    res.status(status).type('html').send(
      consentPage({
        action: p.consent,
        invitationAction: p.invitation,
        switchAction: p.switchPerson,
        error,
        csrf: csrfFor(details.uid),
        clientName: await clientName(details),
        redirectHost: new URL(String(details.params['redirect_uri'])).host,
        email: email ?? '',
        scopes: scopes.filter((s) => requested.includes(s)),
        accounts,
      }),
    );
  };

  const page: RequestHandler = async (req, res) => {
    const details = await load(req, res);
    if (!details) return;
    if (details.prompt.name === 'login') {
      return req.query['signup'] === '1' ? renderSignUp(res, details) : renderSignIn(res, details);
    }
    return renderConsent(res, details);
  };

  const login: RequestHandler = async (req, res) => {
    const details = await loadForPost(req, res, 'login');
    if (!details) return;
    const form = Credentials.safeParse(req.body);
    const email = typeof req.body?.email === 'string' ? req.body.email.trim() : undefined;
    if (!form.success) return renderSignIn(res, details, 400, email, 'Enter your email address and your password.');
    const person = await signIn(pool, form.data.email, form.data.password);
    if (person === 'locked') {
      return renderSignIn(res, details, 401, email, `Too many wrong passwords for this email. Try again in ${SIGN_IN_LOCK.minutes} minutes.`);
    }
    if (!person) return renderSignIn(res, details, 401, email, 'That email and password do not match. Check them and try again.');
    log.info({ personId: person.personId }, 'oauth sign-in');
    // remember: false: the sign-in lasts as long as the browser session, not 14 days.
    return finish(req, res, { login: { accountId: person.personId, remember: false } });
  };

  const signup: RequestHandler = async (req, res) => {
    const details = await loadForPost(req, res, 'login');
    if (!details) return;
    const form = NewCredentials.safeParse(req.body);
    const email = typeof req.body?.email === 'string' ? req.body.email.trim() : undefined;
    if (!form.success) {
      const emailBad = form.error.issues.some((i) => i.path[0] === 'email');
      return renderSignUp(res, details, 400, email, emailBad ? 'Enter a valid email address.' : `Choose a password of at least ${MIN_PASSWORD_LENGTH} characters.`);
    }
    const code = form.data.invitationCode;
    const outcome = await signUp(pool, form.data.email, form.data.password, code);
    if (outcome === 'exists') return renderSignUp(res, details, 409, email, 'An account with this email already exists. Sign in instead.', code);
    if (outcome === 'invitation_required') {
      return renderSignUp(res, details, 400, email, 'An administrator has added this email to an account: enter the invitation code they gave you.', code);
    }
    if (outcome === 'invitation_invalid') {
      return renderSignUp(res, details, 400, email, 'That invitation code is not valid for this email, or it has expired. Ask your administrator for a new one.', code);
    }
    log.info({ personId: outcome.personId }, 'oauth sign-up');
    return finish(req, res, { login: { accountId: outcome.personId, remember: false } });
  };

  /** A signed-in person joins an account they were invited to, then chooses as before. */
  const invitation: RequestHandler = async (req, res) => {
    const details = await loadForPost(req, res, 'consent');
    if (!details) return;
    const form = Invitation.safeParse(req.body);
    const personId = String(details.session?.accountId);
    if (!form.success || !form.data.invitationCode || !(await redeemInvitation(pool, personId, form.data.invitationCode))) {
      return renderConsent(res, details, 400, 'That invitation code is not valid for you, or it has expired. Ask your administrator for a new one.');
    }
    log.info({ personId }, 'oauth invitation accepted');
    res.redirect(303, paths(details.uid).base);
  };

  /** "Not you?": ends the sign-in and starts the same authorization request again. */
  const switchPerson: RequestHandler = async (req, res) => {
    const details = await loadForPost(req, res, 'consent');
    if (!details) return;
    if (details.session?.uid) await endSession(pool, details.session.uid);
    const again = new URLSearchParams();
    for (const [name, value] of Object.entries(details.params)) if (typeof value === 'string') again.set(name, value);
    res.redirect(303, `/oauth/authorize?${again}`);
  };

  const consent: RequestHandler = async (req, res) => {
    const details = await loadForPost(req, res, 'consent');
    if (!details) return;
    const form = Consent.safeParse(req.body);
    if (!form.success) return renderConsent(res, details, 400);
    if (form.data.decision === 'deny') {
      return finish(req, res, { error: 'access_denied', error_description: 'The person denied access.' });
    }
    const personId = String(details.session?.accountId);
    const clientId = String(details.params['client_id']);
    const account = form.data.account ?? '';
    const refuse = () =>
      res
        .status(403)
        .type('html')
        .send(
          messagePage('You cannot connect this account', 'You are not linked to the account you chose, so nothing was granted. Choose one of your own accounts.', {
            href: paths(details.uid).base,
            label: 'Back to the choice of account',
          }),
        );
    if (!(await isMember(pool, personId, account))) return refuse();

    const grant = new provider.Grant({ accountId: personId, clientId });
    const missing = details.prompt.details as { missingOIDCScope?: string[]; missingResourceScopes?: Record<string, string[]> };
    const allowed = (list: string[]) => list.filter((s): s is Scope => (scopes as readonly string[]).includes(s)).join(' ');
    if (missing.missingOIDCScope?.length) grant.addOIDCScope(allowed(missing.missingOIDCScope));
    for (const [indicator, wanted] of Object.entries(missing.missingResourceScopes ?? {})) grant.addResourceScope(indicator, allowed(wanted));
    const grantId = await grant.save();
    if (!(await bindGrantToAccount(pool, grantId, personId, account))) {
      await grant.destroy();
      return refuse();
    }
    log.info({ personId, accountId: account, clientId, grantId }, 'oauth consent given');
    return finish(req, res, { consent: { grantId } }, true);
  };

  /** Sign-in and sign-up check passwords; when too many checks wait, the person is asked to retry. */
  const checkingPasswords =
    (handler: RequestHandler): RequestHandler =>
    async (req, res, next) => {
      try {
        await handler(req, res, next);
      } catch (error) {
        if (!(error instanceof PasswordChecksBusy)) throw error;
        res.status(503).set('Retry-After', '5').type('html').send(messagePage('Busy', 'Too many people are signing in right now. Go back and try again in a few seconds.'));
      }
    };

  router.get('/', page);
  router.post('/login', checkingPasswords(login));
  router.post('/signup', checkingPasswords(signup));
  router.post('/consent', consent);
  router.post('/invitation', invitation);
  router.post('/switch', switchPerson);
  return router;
}

/** Why a request to a page of the flow was refused, by status: what the person reads. */
const refusals: Record<number, { title: string; message: string }> = {
  400: { title: 'This request cannot be read', message: 'The address or the form sent is not valid. Go back to the application and connect again.' },
  413: { title: 'This form is too large', message: 'The form sent is larger than this page accepts. Go back, check what you entered and send it again.' },
  415: { title: 'This form cannot be read', message: 'The form was sent in a format this page does not take (it takes a plain UTF-8 form). Go back and send it again.' },
};

/**
 * A request to a page of the flow that cannot be understood (a malformed address, a form too
 * large, with too many fields, compressed or in another charset) gets a page of the flow with
 * its 4xx, as every other answer there; anything else goes on to the service's error handler.
 */
export function interactionErrorPage(log: Logger): ErrorRequestHandler {
  return (error, _req, res, next) => {
    const status = error instanceof Problem ? error.status : (error as { status?: unknown; expose?: unknown }).expose === true ? Number((error as { status: unknown }).status) : NaN;
    if (res.headersSent || !(status >= 400 && status < 500)) return next(error);
    log.info({ status, type: (error as { type?: string }).type ?? (error as Problem).type }, 'oauth page request refused');
    const refusal = refusals[status] ?? refusals[400]!;
    res.status(status).set({ 'Cache-Control': 'no-store' }).type('html').send(messagePage(refusal.title, refusal.message));
  };
}
