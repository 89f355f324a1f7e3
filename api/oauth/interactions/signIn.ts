// POST /oauth/interaction/:uid/login: email and password; ten failures in a row lock the email.
import type { Request, Response } from 'express';
import { SIGN_IN_LOCK, signIn } from '../../../shared/tenancy/people.ts';
import { Credentials, typedEmail } from './forms.ts';
import { finishInteraction, type InteractionDeps } from './interaction.ts';
import { loadInteractionForPost } from './load.ts';
import { sendSignIn } from './views.ts';

export async function signInWithPassword(deps: InteractionDeps, req: Request, res: Response): Promise<void> {
  const details = await loadInteractionForPost(deps, req, res, 'login');
  if (!details) return;
  const form = Credentials.safeParse(req.body);
  const email = typedEmail(req.body);
  if (!form.success) return sendSignIn(deps, res, details, { status: 400, email, error: 'Enter your email address and your password.' });
  const person = await signIn(deps.pool, form.data.email, form.data.password);
  if (person === 'locked') {
    return sendSignIn(deps, res, details, { status: 401, email, error: `Too many wrong passwords for this email. Try again in ${SIGN_IN_LOCK.minutes} minutes.` });
  }
  if (!person) return sendSignIn(deps, res, details, { status: 401, email, error: 'That email and password do not match. Check them and try again.' });
  deps.log.info({ personId: person.personId }, 'oauth sign-in');
  // remember: false: the sign-in lasts as long as the browser session, not 14 days.
  return finishInteraction(deps.provider, req, res, { login: { accountId: person.personId, remember: false } });
}
