// Every handler starts here: the interaction this browser is in, when it is the one in the path,
// with the scope policy applied (every authorization comes through here before a code can be
// issued); for a POST, also the form's origin and token, and the prompt the form belongs to.
import type { Request, Response } from 'express';
import { errors } from 'oidc-provider';
import type { AuthorizationServer } from '../provider.ts';
import { formFromOurPage } from './csrf.ts';
import { finishInteraction, type Interaction, type InteractionDeps, interactionPaths } from './interaction.ts';
import { scopeRefusal } from './scopePolicy.ts';
import { sendExpired, sendFormRefused } from './views.ts';

/** The interaction, or undefined once the answer is sent (the expired page, or invalid_scope to the program). */
export async function loadInteraction(provider: AuthorizationServer, req: Request, res: Response): Promise<Interaction | undefined> {
  let details: Interaction | undefined;
  try {
    details = await provider.interactionDetails(req, res);
  } catch (error) {
    if (!(error instanceof errors.SessionNotFound)) throw error;
  }
  if (!details || details.uid !== req.params['uid']) {
    sendExpired(res);
    return undefined;
  }
  const refusal = scopeRefusal(details.params['scope']);
  if (refusal !== undefined) {
    await finishInteraction(provider, req, res, { error: 'invalid_scope', error_description: refusal });
    return undefined;
  }
  return details;
}

/** A POST's interaction: from our page (else 403), at the form's prompt (else back to the page). */
export async function loadInteractionForPost(deps: InteractionDeps, req: Request, res: Response, prompt: 'login' | 'consent'): Promise<Interaction | undefined> {
  if (!formFromOurPage(req, deps.config.baseUrl, deps.csrfKey)) {
    sendFormRefused(res);
    return undefined;
  }
  const details = await loadInteraction(deps.provider, req, res);
  if (details && details.prompt.name !== prompt) {
    res.redirect(303, interactionPaths(details.uid).base);
    return undefined;
  }
  return details;
}
