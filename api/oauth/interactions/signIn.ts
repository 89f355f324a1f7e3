// POST /oauth/interaction/:uid/login: email and password; ten failures in a row from one client
// address lock that email for that address a while (shared/tenancy/people.ts).
import type { Request, Response } from 'express';
import { clientKeyOf } from '../../../shared/platform/addresses.ts';
import { signIn } from '../../../shared/tenancy/people.ts';
import { SIGN_IN_LOCKED, SIGN_IN_MISMATCH } from '../pages.ts';
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
  const person = await signIn(deps.pool, form.data.email, form.data.password, clientKeyOf(req.ip));
  if (person === 'locked') return sendSignIn(deps, res, details, { status: 401, email, error: SIGN_IN_LOCKED });
  if (!person) return sendSignIn(deps, res, details, { status: 401, email, error: SIGN_IN_MISMATCH });
  deps.log.info({ personId: person.personId }, 'oauth sign-in');
  // remember: false: the sign-in lasts as long as the browser session, not 14 days.
  return finishInteraction(deps.provider, req, res, { login: { accountId: person.personId, remember: false } });
}
