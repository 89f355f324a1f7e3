// The person's pages of the OAuth flow: sign in, sign up, consent with account choice, and the
// messages (expired request, refused account, protocol errors). Small, server-rendered, styled
// for a phone first, with labels, autocomplete hints and alerts screen readers announce.
import type { ErrorOut } from 'oidc-provider';
import { escapeHtml } from '../html.ts';
import type { Scope } from '../principal.ts';
import { SIGN_IN_LOCK } from '../../shared/tenancy/people.ts';

const STYLE = `
*{box-sizing:border-box}
body{margin:0;min-height:100vh;display:flex;align-items:flex-start;justify-content:center;background:#f3f4f6;color:#111827;
font:16px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;padding:1rem}
main{width:100%;max-width:26rem;margin-top:min(10vh,4rem);background:#fff;border-radius:12px;padding:1.75rem 1.5rem;
box-shadow:0 1px 3px rgba(0,0,0,.08),0 8px 24px rgba(0,0,0,.06)}
.brand{margin:0 0 1rem;font-weight:600;font-size:.875rem;letter-spacing:.02em;color:#4f46e5}
h1{font-size:1.375rem;line-height:1.3;margin:0 0 .5rem}
p{margin:.5rem 0}
.muted{color:#4b5563;font-size:.9375rem}
label{display:block;font-weight:600;margin:1rem 0 .25rem}
input[type=email],input[type=password],input[type=text]{width:100%;font:inherit;padding:.625rem .75rem;border:1px solid #9ca3af;border-radius:8px}
input:focus-visible,button:focus-visible,a:focus-visible{outline:3px solid #818cf8;outline-offset:2px}
button{font:inherit;font-weight:600;border-radius:8px;padding:.7rem 1rem;border:1px solid transparent;cursor:pointer;width:100%}
.primary{background:#4f46e5;color:#fff}.primary:hover{background:#4338ca}
.secondary{background:#fff;color:#111827;border-color:#9ca3af}.secondary:hover{background:#f9fafb}
.actions{display:grid;gap:.75rem;margin-top:1.5rem}
@media (min-width:30rem){.actions.two{grid-template-columns:1fr 1fr}}
.alert{background:#fef2f2;border:1px solid #fca5a5;color:#991b1b;border-radius:8px;padding:.625rem .75rem;margin:1rem 0}
ul.scopes{padding-left:1.25rem;margin:.5rem 0}ul.scopes li{margin:.25rem 0}
fieldset{border:0;padding:0;margin:1.25rem 0 0}legend{font-weight:600;margin-bottom:.25rem;padding:0}
.choice{display:flex;gap:.625rem;align-items:center;border:1px solid #d1d5db;border-radius:8px;padding:.625rem .75rem;margin:.5rem 0;font-weight:400}
.choice input{width:1.125rem;height:1.125rem;margin:0}
.choice small{display:block;color:#6b7280;font-size:.8125rem}
code{font-size:.875em;background:#f3f4f6;padding:.1em .3em;border-radius:4px;overflow-wrap:anywhere}
.foot{margin-top:1.25rem;font-size:.9375rem}
.hint{margin:.25rem 0 0;color:#6b7280;font-size:.8125rem}
label .muted{font-weight:400}
details{margin-top:1.25rem;font-size:.9375rem}summary{cursor:pointer;color:#4338ca}
.inline{display:flex;gap:.5rem;margin-top:.5rem}.inline input{flex:1;min-width:0}.inline button{width:auto}
.link{background:none;border:0;padding:0;width:auto;font-weight:400;color:#4338ca;text-decoration:underline}
a{color:#4338ca}
main.wide{max-width:44rem}
table{width:100%;border-collapse:collapse;margin-top:1rem;font-size:.9375rem}
th,td{text-align:left;padding:.6rem .5rem;border-bottom:1px solid #e5e7eb;vertical-align:top}
th{font-size:.8125rem;color:#4b5563;font-weight:600}
td form{margin:0}td button{width:auto;padding:.45rem .8rem}td time{white-space:nowrap}
.danger{background:#fff;color:#b91c1c;border-color:#fca5a5}.danger:hover{background:#fef2f2}
.notice{background:#ecfdf5;border:1px solid #6ee7b7;color:#065f46;border-radius:8px;padding:.625rem .75rem;margin:1rem 0}
.bar{display:flex;justify-content:space-between;align-items:center;gap:1rem}.bar form{margin:0}.bar button{width:auto;white-space:nowrap}
@media (max-width:36rem){thead{display:none}tr{display:block;border-bottom:1px solid #e5e7eb;padding:.5rem 0}td{display:block;border:0;padding:.2rem 0}
td[data-label]::before{content:attr(data-label) ": ";color:#6b7280;font-size:.8125rem}}`;

export function layout(title: string, body: string, options: { wide?: boolean } = {}): string {
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="same-origin"><title>${escapeHtml(title)} · Dataset Service</title><style>${STYLE}</style></head>
<body><main${options.wide ? ' class="wide"' : ''}><p class="brand">Dataset Service</p>
${body}
</main></body></html>`;
}

export const alert = (message: string | undefined) => (message ? `<div class="alert" role="alert" id="form-error">${escapeHtml(message)}</div>` : '');
export const described = (message: string | undefined) => (message ? ' aria-describedby="form-error" aria-invalid="true"' : '');
export const csrfField = (csrf: string) => `<input type="hidden" name="csrf" value="${escapeHtml(csrf)}">`;

/**
 * What a refused sign-in or sign-up says. Each reads the same whether the email is known or not
 * (contract, "Sharing the service fairly"); sign-in's lock applies to any email typed.
 */
export const SIGN_IN_MISMATCH = 'That email and password do not match. Check them and try again.';
export const SIGN_IN_LOCKED = `Too many failed sign-ins for this email from your network. Try again in ${SIGN_IN_LOCK.minutes} minutes, or from another network.`;
export const SIGN_UP_REFUSED =
  'We could not create an account with these details. If you already have an account, sign in instead. ' +
  'If an administrator added you to their account, enter the invitation code they gave you, exactly as written (an expired code needs a new one).';

export type SignInView = { action: string; signUpHref: string; csrf: string; clientName: string; email?: string; error?: string };

export function signInPage(v: SignInView): string {
  return layout(
    'Sign in',
    `<h1>Sign in to continue</h1>
<p class="muted"><strong>${escapeHtml(v.clientName)}</strong> wants to connect to your Dataset Service account.</p>
${alert(v.error)}
<form method="post" action="${escapeHtml(v.action)}" novalidate>${csrfField(v.csrf)}
<label for="email">Email</label>
<input id="email" name="email" type="email" autocomplete="email" required value="${escapeHtml(v.email ?? '')}"${described(v.error)} autofocus>
<label for="password">Password</label>
<input id="password" name="password" type="password" autocomplete="current-password" required${described(v.error)}>
<div class="actions"><button class="primary" type="submit">Sign in</button></div>
</form>
<p class="foot">New here? <a href="${escapeHtml(v.signUpHref)}">Create an account</a></p>`,
  );
}

export type SignUpView = {
  action: string;
  signInHref: string;
  csrf: string;
  clientName: string;
  email?: string;
  invitationCode?: string;
  error?: string;
  minLength: number;
};

export function signUpPage(v: SignUpView): string {
  return layout(
    'Create an account',
    `<h1>Create your account</h1>
<p class="muted">Then you can let <strong>${escapeHtml(v.clientName)}</strong> work with your data. If your team already uses the service, use the email and the invitation code your administrator gave you.</p>
${alert(v.error)}
<form method="post" action="${escapeHtml(v.action)}" novalidate>${csrfField(v.csrf)}
<label for="email">Email</label>
<input id="email" name="email" type="email" autocomplete="email" required value="${escapeHtml(v.email ?? '')}"${described(v.error)} autofocus>
<label for="password">Password <span class="muted">(at least ${v.minLength} characters)</span></label>
<input id="password" name="password" type="password" autocomplete="new-password" minlength="${v.minLength}" required${described(v.error)}>
<label for="invitationCode">Invitation code <span class="muted">(if an administrator added you)</span></label>
<input id="invitationCode" name="invitationCode" type="text" autocomplete="off" spellcheck="false" value="${escapeHtml(v.invitationCode ?? '')}" aria-describedby="invitation-hint">
<p class="hint" id="invitation-hint">Leave it empty to get an account of your own.</p>
<div class="actions"><button class="primary" type="submit">Create account</button></div>
</form>
<p class="foot">Already have an account? <a href="${escapeHtml(v.signInHref)}">Sign in</a></p>`,
  );
}

const scopeText: Record<Scope, string> = {
  'service.read': 'Read your datasets, versions, metrics, catalogs and exports',
  'service.write': 'Create datasets, upload contract files and request exports',
};

export type ConsentView = {
  action: string;
  invitationAction: string;
  switchAction: string;
  error?: string;
  csrf: string;
  clientName: string;
  redirectHost: string;
  email: string;
  scopes: Scope[];
  accounts: { id: string; name: string }[];
};

export function consentPage(v: ConsentView): string {
  const single = v.accounts.length === 1;
  const choices = v.accounts
    .map(
      (a) => `<label class="choice"><input type="radio" name="account" value="${escapeHtml(a.id)}" required${single ? ' checked' : ''}><span>${escapeHtml(
        a.name,
      )}<small>${escapeHtml(a.id)}</small></span></label>`,
    )
    .join('\n');
  const accountChoice =
    v.accounts.length === 0
      ? `<p>You are not linked to any account yet. If an administrator invited you, enter their invitation code below.</p>`
      : `<fieldset><legend>${single ? 'For the account' : 'Choose the account it acts for'}</legend>\n${choices}\n</fieldset>`;
  return layout(
    'Allow access',
    `<h1>Allow ${escapeHtml(v.clientName)} to use your data?</h1>
<p class="muted">Signed in as ${escapeHtml(v.email)}. Afterwards you will be sent back to <code>${escapeHtml(v.redirectHost)}</code>.</p>
${alert(v.error)}
<p>It will be able to:</p>
<ul class="scopes">${v.scopes.map((s) => `<li>${escapeHtml(scopeText[s])} <small class="muted">(${s})</small></li>`).join('')}</ul>
<form method="post" action="${escapeHtml(v.action)}">${csrfField(v.csrf)}
${accountChoice}
<div class="actions two"><button class="secondary" type="submit" name="decision" value="deny" formnovalidate>Deny</button>
<button class="primary" type="submit" name="decision" value="allow"${v.accounts.length === 0 ? ' disabled' : ''}>Allow</button></div>
</form>
<details${v.error ? ' open' : ''}><summary>Invited to another account?</summary>
<form method="post" action="${escapeHtml(v.invitationAction)}">${csrfField(v.csrf)}
<label for="invitationCode">Invitation code</label>
<div class="inline"><input id="invitationCode" name="invitationCode" type="text" autocomplete="off" spellcheck="false" required${described(v.error)}>
<button class="secondary" type="submit">Add</button></div>
</form></details>
<form method="post" action="${escapeHtml(v.switchAction)}" class="foot">${csrfField(v.csrf)}
Not ${escapeHtml(v.email)}? <button class="link" type="submit">Sign in as someone else</button></form>`,
  );
}

export function messagePage(title: string, message: string, next?: { href: string; label: string }): string {
  return layout(title, `<h1>${escapeHtml(title)}</h1><p>${escapeHtml(message)}</p>${next ? `<p class="foot"><a href="${escapeHtml(next.href)}">${escapeHtml(next.label)}</a></p>` : ''}`);
}

/** The provider's error page (bad client, redirect URI, request): what happened, never a stack. */
export function renderOAuthError(out: ErrorOut): string {
  return messagePage(
    'This connection cannot continue',
    `${out.error_description ?? 'The authorization request is not valid.'} (${out.error}). Return to the application and try connecting again.`,
  );
}
