// Signing in (the consent pages' email, password, throttle and answers), signing up with an
// invitation code, signing out (the session ends on the server), and the switch of account and
// mode, remembered for the person.
import type { Router } from 'express';
import { z } from 'zod';
import { clientKeyOf } from '../../shared/platform/addresses.ts';
import { MAX_PASSWORD_LENGTH, MIN_PASSWORD_LENGTH, PasswordChecksBusy } from '../../shared/platform/passwords.ts';
import { chooseDashboardView } from '../../shared/tenancy/dashboardSessions.ts';
import { signIn } from '../../shared/tenancy/people.ts';
import { signUp } from '../../shared/tenancy/signUp.ts';
import { SIGN_IN_LOCKED, SIGN_IN_MISMATCH, SIGN_UP_REFUSED } from '../oauth/pages.ts';
import { signInPage, signUpPage } from './accessPages.ts';
import type { DashboardContext } from './context.ts';
import { DASHBOARD_PATH } from './session.ts';

const SignInForm = z.object({ email: z.string().trim().min(1).max(254), password: z.string().min(1).max(MAX_PASSWORD_LENGTH) });
const SignUpForm = z.object({
  email: z.string().trim().max(254).pipe(z.email()),
  invitationCode: z.string().trim().min(1).max(100),
  password: z.string().min(MIN_PASSWORD_LENGTH).max(MAX_PASSWORD_LENGTH),
});
const ViewForm = z.object({ account: z.string().min(1).max(100), mode: z.enum(['test', 'live']) });

/** A field of a posted form as typed, to show again on the page that answers it. */
const field = (body: unknown, name: string) => {
  const value = (body as Record<string, unknown> | undefined)?.[name];
  return typeof value === 'string' ? value.trim() : undefined;
};

export function accessRoutes(router: Router, ctx: DashboardContext): void {
  const { sessions, html, refused, notFound, forms, postedForm } = ctx;
  const { pool, log } = ctx.deps;
  router.get('/', async (req, res) => res.redirect(303, (await sessions.viewerOf(req)) ? `${DASHBOARD_PATH}/datasets` : `${DASHBOARD_PATH}/sign-in`));
  router.get('/sign-in', async (req, res) => {
    if (await sessions.viewerOf(req)) return res.redirect(303, `${DASHBOARD_PATH}/datasets`);
    html(res, 200, signInPage(sessions.formToken(req, res), { notice: req.query['signedOut'] === '1' ? 'You are signed out.' : undefined }));
  });
  router.post('/sign-in', forms, async (req, res) => {
    if (!sessions.anonymousFormIsOurs(req, req.body)) return refused(res);
    const email = field(req.body, 'email');
    const again = (status: number, error: string) => html(res, status, signInPage(sessions.formToken(req, res), { email, error }));
    const form = SignInForm.safeParse(req.body);
    if (!form.success) return again(400, 'Enter your email address and your password.');
    let person;
    try {
      person = await signIn(pool, form.data.email, form.data.password, clientKeyOf(req.ip));
    } catch (error) {
      if (!(error instanceof PasswordChecksBusy)) throw error;
      res.set('Retry-After', '5');
      return again(503, 'Too many sign-ins from your network right now. Try again in a few seconds.');
    }
    if (person === 'locked') return again(401, SIGN_IN_LOCKED);
    if (!person) return again(401, SIGN_IN_MISMATCH);
    await sessions.signIn(req, res, person.personId);
    log.info({ personId: person.personId }, 'person signed in to the dashboard');
    res.redirect(303, `${DASHBOARD_PATH}/datasets`);
  });
  router.get('/sign-up', (req, res) => html(res, 200, signUpPage(sessions.formToken(req, res), MIN_PASSWORD_LENGTH)));
  router.post('/sign-up', forms, async (req, res) => {
    if (!sessions.anonymousFormIsOurs(req, req.body)) return refused(res);
    const email = field(req.body, 'email');
    const again = (status: number, error: string) => html(res, status, signUpPage(sessions.formToken(req, res), MIN_PASSWORD_LENGTH, { email, error }));
    const form = SignUpForm.safeParse(req.body);
    if (!form.success) {
      const issue = form.error.issues[0]?.path[0];
      return again(
        400,
        issue === 'email'
          ? 'Enter a valid email address.'
          : issue === 'invitationCode'
            ? 'Enter the invitation code your administrator gave you.'
            : `Choose a password of at least ${MIN_PASSWORD_LENGTH} characters.`,
      );
    }
    let outcome;
    try {
      outcome = await signUp(pool, form.data.email, form.data.password, form.data.invitationCode, clientKeyOf(req.ip));
    } catch (error) {
      if (!(error instanceof PasswordChecksBusy)) throw error;
      res.set('Retry-After', '5');
      return again(503, 'Too many sign-ups from your network right now. Try again in a few seconds.');
    }
    // One answer whatever the reason (a taken email, a wrong code): see signUp().
    if (outcome === 'refused') return again(400, SIGN_UP_REFUSED);
    await sessions.signIn(req, res, outcome.personId);
    log.info({ personId: outcome.personId }, 'person signed up on the dashboard');
    res.redirect(303, `${DASHBOARD_PATH}/datasets`);
  });
  router.post('/sign-out', forms, async (req, res) => {
    const viewer = await sessions.viewerOf(req);
    if (viewer && !sessions.formIsOurs(req, viewer, req.body)) return refused(res, viewer);
    await sessions.signOut(req, res);
    res.redirect(303, `${DASHBOARD_PATH}/sign-in?signedOut=1`);
  });

  // One account and one mode at a time: the switch, remembered for the person.
  router.post('/view', forms, async (req, res) => {
    const viewer = await postedForm(req, res);
    if (!viewer) return;
    const form = ViewForm.safeParse(req.body);
    if (!form.success || !viewer.accounts.some((a) => a.id === form.data.account)) return notFound(res, viewer);
    await chooseDashboardView(pool, viewer.personId, { accountId: form.data.account, mode: form.data.mode });
    res.redirect(303, `${DASHBOARD_PATH}/datasets`);
  });

}
