// POST /oauth/interaction/:uid/signup: a new person (email, password, and the invitation code
// when an administrator added the email to an account), signed in at once.
import type { Request, Response } from 'express';
import { MIN_PASSWORD_LENGTH } from '../../../shared/platform/passwords.ts';
import { signUp } from '../../../shared/tenancy/signUp.ts';
import { NewCredentials, typedEmail } from './forms.ts';
import { finishInteraction, type InteractionDeps } from './interaction.ts';
import { loadInteractionForPost } from './load.ts';
import { sendSignUp } from './views.ts';

/** What the sign-up page says for each refusal of signUp(). */
const refusals = {
  exists: { status: 409, error: 'An account with this email already exists. Sign in instead.' },
  invitation_required: { status: 400, error: 'An administrator has added this email to an account: enter the invitation code they gave you.' },
  invitation_invalid: { status: 400, error: 'That invitation code is not valid for this email, or it has expired. Ask your administrator for a new one.' },
} as const;

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
  const outcome = await signUp(deps.pool, form.data.email, form.data.password, invitationCode);
  if (typeof outcome === 'string') return sendSignUp(deps, res, details, { ...refusals[outcome], email, invitationCode });
  deps.log.info({ personId: outcome.personId }, 'oauth sign-up');
  return finishInteraction(deps.provider, req, res, { login: { accountId: outcome.personId, remember: false } });
}
