// GET /oauth/interaction/:uid: the page for the provider's prompt: sign in (or sign up, with
// ?signup=1) for "login", the consent page for "consent".
import type { Request, Response } from 'express';
import type { InteractionDeps } from './interaction.ts';
import { loadInteraction } from './load.ts';
import { sendConsent, sendSignIn, sendSignUp } from './views.ts';

export async function showInteraction(deps: InteractionDeps, req: Request, res: Response): Promise<void> {
  const details = await loadInteraction(deps.provider, req, res);
  if (!details) return;
  if (details.prompt.name === 'login') {
    return req.query['signup'] === '1' ? sendSignUp(deps, res, details) : sendSignIn(deps, res, details);
  }
  return sendConsent(deps, res, details);
}
