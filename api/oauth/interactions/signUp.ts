// POST /oauth/interaction/:uid/signup: a new person (email, password, and the invitation code
// when an administrator added the email to an account), signed in at once.
import type { Request, Response } from 'express';
import { clientKeyOf } from '../../../shared/platform/addresses.ts';
import { MIN_PASSWORD_LENGTH } from '../../../shared/platform/passwords.ts';
import { signUp } from '../../../shared/tenancy/signUp.ts';
import { SIGN_UP_REFUSED } from '../pages.ts';
import { NewCredentials, typedEmail } from './forms.ts';
import { finishInteraction, type InteractionDeps } from './interaction.ts';
import { loadInteractionForPost } from './load.ts';
import { sendSignUp } from './views.ts';

export async function signUpWithPassword(deps: InteractionDeps, req: Request, res: Response): Promise<void> {
  const details = await loadInteractionForPost(deps, req, res, 'login');
  if (!details) return;
  const form = NewCredentials.safeParse(req.body);
  const email = typedEmail(req.body);
  if (!form.success) {
    const emailBad = form.error.issues.some((i) => i.path[0] === 'email');
    const error = emailBad ? 'Enter a valid email address.' : `Choose a password of at least ${MIN_PASSWORD_LENGTH} characters.`;
    return sendSignUp(deps, res, details, { status: 400, email, error });
  }
  const invitationCode = form.data.invitationCode;
  const outcome = await signUp(deps.pool, form.data.email, form.data.password, invitationCode, clientKeyOf(req.ip));
  // One answer whatever the reason (a taken email, a missing or wrong invitation code): see signUp().
  if (outcome === 'refused') return sendSignUp(deps, res, details, { status: 400, error: SIGN_UP_REFUSED, email, invitationCode });
  deps.log.info({ personId: outcome.personId }, 'oauth sign-up');
  return finishInteraction(deps.provider, req, res, { login: { accountId: outcome.personId, remember: false } });
}
