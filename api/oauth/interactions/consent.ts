// The consent page's forms: allow or deny for the account chosen (POST …/consent), and an
// invitation code to join another account first (POST …/invitation).
import type { Request, Response } from 'express';
import { bindGrantToAccount } from '../../../shared/oauth/grantAccounts.ts';
import { isMember, redeemInvitation } from '../../../shared/tenancy/memberships.ts';
import { Consent, Invitation } from './forms.ts';
import { finishInteraction, type InteractionDeps, interactionPaths } from './interaction.ts';
import { loadInteractionForPost } from './load.ts';
import { grantableScopes } from './scopePolicy.ts';
import { sendAccountRefused, sendConsent } from './views.ts';

type MissingScopes = { missingOIDCScope?: string[]; missingResourceScopes?: Record<string, string[]> };

/**
 * Allow: a grant of the scopes asked for (ours only), bound to the account chosen, which must be
 * one of the person's (else 403 and nothing granted). Deny: access_denied to the program.
 */
export async function decideConsent(deps: InteractionDeps, req: Request, res: Response): Promise<void> {
  const details = await loadInteractionForPost(deps, req, res, 'consent');
  if (!details) return;
  const form = Consent.safeParse(req.body);
  if (!form.success) return sendConsent(deps, res, details, { status: 400 });
  if (form.data.decision === 'deny') {
    return finishInteraction(deps.provider, req, res, { error: 'access_denied', error_description: 'The person denied access.' });
  }
  const personId = String(details.session?.accountId);
  const clientId = String(details.params['client_id']);
  const account = form.data.account ?? '';
  if (!(await isMember(deps.pool, personId, account))) return sendAccountRefused(res, details);

  const grant = new deps.provider.Grant({ accountId: personId, clientId });
  const missing = details.prompt.details as MissingScopes;
  if (missing.missingOIDCScope?.length) grant.addOIDCScope(grantableScopes(missing.missingOIDCScope));
  for (const [indicator, wanted] of Object.entries(missing.missingResourceScopes ?? {})) grant.addResourceScope(indicator, grantableScopes(wanted));
  const grantId = await grant.save();
  if (!(await bindGrantToAccount(deps.pool, grantId, personId, account))) {
    await grant.destroy();
    return sendAccountRefused(res, details);
  }
  deps.log.info({ personId, accountId: account, clientId, grantId }, 'oauth consent given');
  return finishInteraction(deps.provider, req, res, { consent: { grantId } }, true);
}

/** A signed-in person joins an account they were invited to, then chooses as before. */
export async function acceptInvitation(deps: InteractionDeps, req: Request, res: Response): Promise<void> {
  const details = await loadInteractionForPost(deps, req, res, 'consent');
  if (!details) return;
  const form = Invitation.safeParse(req.body);
  const personId = String(details.session?.accountId);
  if (!form.success || !form.data.invitationCode || !(await redeemInvitation(deps.pool, personId, form.data.invitationCode))) {
    return sendConsent(deps, res, details, { status: 400, error: 'That invitation code is not valid for you, or it has expired. Ask your administrator for a new one.' });
  }
  deps.log.info({ personId }, 'oauth invitation accepted');
  res.redirect(303, interactionPaths(details.uid).base);
}
