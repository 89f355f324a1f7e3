// The pages of the flow as answers: each builds its view model (the form's paths, its token, the
// program's name, what the person typed) from the interaction and sends the page of ../pages.ts.
import type { Response } from 'express';
import { MIN_PASSWORD_LENGTH } from '../../../shared/platform/passwords.ts';
import { accountsOf } from '../../../shared/tenancy/memberships.ts';
import { emailOf } from '../../../shared/tenancy/people.ts';
import { consentPage, messagePage, signInPage, signUpPage } from '../pages.ts';
import { csrfTokenFor } from './csrf.ts';
import { type Interaction, type InteractionDeps, interactionPaths } from './interaction.ts';
import { scopesAskedFor } from './scopePolicy.ts';

type Answer = { status?: number; error?: string | undefined };

function sendHtml(res: Response, status: number, html: string): void {
  res.status(status).type('html').send(html);
}

/** What every form of the flow shows: its token and the name the program registered with (else its client id). */
async function formOf(deps: Pick<InteractionDeps, 'provider' | 'csrfKey'>, details: Interaction): Promise<{ csrf: string; clientName: string }> {
  const client = await deps.provider.Client.find(String(details.params['client_id']));
  return { csrf: csrfTokenFor(deps.csrfKey, details.uid), clientName: client?.clientName ?? String(details.params['client_id']) };
}

export async function sendSignIn(deps: InteractionDeps, res: Response, details: Interaction, answer: Answer & { email?: string | undefined } = {}): Promise<void> {
  const p = interactionPaths(details.uid);
  const view = { action: p.login, signUpHref: p.signupPage, ...(await formOf(deps, details)), email: answer.email, error: answer.error };
  sendHtml(res, answer.status ?? 200, signInPage(view));
}

export async function sendSignUp(
  deps: InteractionDeps,
  res: Response,
  details: Interaction,
  answer: Answer & { email?: string | undefined; invitationCode?: string | undefined } = {},
): Promise<void> {
  const p = interactionPaths(details.uid);
  const form = await formOf(deps, details);
  const view = { action: p.signup, signInHref: p.base, ...form, email: answer.email, invitationCode: answer.invitationCode, error: answer.error, minLength: MIN_PASSWORD_LENGTH };
  sendHtml(res, answer.status ?? 200, signUpPage(view));
}

/** The consent page: the program, the scopes asked for, and the accounts the person may choose. */
export async function sendConsent(deps: InteractionDeps, res: Response, details: Interaction, answer: Answer = {}): Promise<void> {
  const personId = String(details.session?.accountId);
  const [accounts, email] = await Promise.all([accountsOf(deps.pool, personId), emailOf(deps.pool, personId)]);
  const p = interactionPaths(details.uid);
  const view = {
    action: p.consent,
    invitationAction: p.invitation,
    switchAction: p.switchPerson,
    error: answer.error,
    ...(await formOf(deps, details)),
    redirectHost: new URL(String(details.params['redirect_uri'])).host,
    email: email ?? '',
    scopes: scopesAskedFor(details.params['scope']),
    accounts,
  };
  sendHtml(res, answer.status ?? 200, consentPage(view));
}

/** No interaction, or another one than the path's: gone, or never this browser's. */
export function sendExpired(res: Response): void {
  sendHtml(res, 400, messagePage('This request has expired', 'This sign-in request has expired or was already completed. Go back to the application and connect again.'));
}

/** A form that was not sent from our page (csrf.ts). */
export function sendFormRefused(res: Response): void {
  sendHtml(res, 403, messagePage('Request refused', 'This form was not sent from this site. Go back to the application and connect again.'));
}

/** The person chose an account they are not linked to: nothing is granted. */
export function sendAccountRefused(res: Response, details: Interaction): void {
  const back = { href: interactionPaths(details.uid).base, label: 'Back to the choice of account' };
  sendHtml(res, 403, messagePage('You cannot connect this account', 'You are not linked to the account you chose, so nothing was granted. Choose one of your own accounts.', back));
}

/** Too many password checks wait from this client's address (only theirs: the queue is fair per address): asked to retry. */
export function sendPasswordChecksBusy(res: Response): void {
  res.status(503).set('Retry-After', '5').type('html').send(messagePage('Busy', 'Too many sign-ins from your network right now. Go back and try again in a few seconds.'));
}
