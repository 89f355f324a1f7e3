// The dashboard's pages for a person not signed in: sign in with the email and password of the
// consent pages, and sign up with an invitation code; both say the same whether an email is
// known or not (the messages are the consent pages' own).
import { escapeHtml } from '../html.ts';
import { alert, csrfField, page } from './layout.ts';
import { DASHBOARD_PATH } from './session.ts';

const described = (error: string | undefined) => (error ? ' aria-describedby="form-error" aria-invalid="true"' : '');

export function signInPage(csrf: string, options: { email?: string | undefined; error?: string | undefined; notice?: string | undefined } = {}): string {
  return page(
    'Sign in',
    `<h1>Sign in to your dashboard</h1>
<p class="muted">Your datasets' figures: revenue, movements, cohorts and uploads.</p>
${options.notice ? `<div class="notice" role="status">${escapeHtml(options.notice)}</div>` : ''}${alert(options.error)}
<form method="post" action="${DASHBOARD_PATH}/sign-in" novalidate>${csrfField(csrf)}
<label for="email">Email</label>
<input id="email" name="email" type="email" autocomplete="email" required value="${escapeHtml(options.email ?? '')}"${described(options.error)}>
<label for="password">Password</label>
<input id="password" name="password" type="password" autocomplete="current-password" required${described(options.error)}>
<button class="primary" type="submit">Sign in</button>
</form>
<p>Invited by an administrator and no password yet? <a href="${DASHBOARD_PATH}/sign-up">Sign up with your invitation code</a></p>`,
  );
}

export function signUpPage(csrf: string, minLength: number, options: { email?: string | undefined; error?: string | undefined } = {}): string {
  return page(
    'Sign up',
    `<h1>Set up your access</h1>
<p class="muted">Use the email your administrator added and the invitation code they gave you, then choose a password.</p>
${alert(options.error)}
<form method="post" action="${DASHBOARD_PATH}/sign-up" novalidate>${csrfField(csrf)}
<label for="email">Email</label>
<input id="email" name="email" type="email" autocomplete="email" required value="${escapeHtml(options.email ?? '')}"${described(options.error)}>
<label for="invitationCode">Invitation code</label>
<input id="invitationCode" name="invitationCode" type="text" autocomplete="off" spellcheck="false" required${described(options.error)}>
<label for="password">New password <span class="muted">(at least ${minLength} characters)</span></label>
<input id="password" name="password" type="password" autocomplete="new-password" minlength="${minLength}" required${described(options.error)}>
<button class="primary" type="submit">Sign up</button>
</form>
<p>Already have a password? <a href="${DASHBOARD_PATH}/sign-in">Sign in</a></p>`,
  );
}
