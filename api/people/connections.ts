// "Connected programs" (/account/connections): a person signs in with the same email and password
// as on the consent pages, sees each program they connected through OAuth (its name, the account
// it acts for, what it may do, when they allowed it and when it last called the API), and
// disconnects one: its grant and every token issued under it are deleted, so its next request is
// refused. Server-rendered like the consent pages, with the same security headers.
import express, { type Request, type Response, type Router } from 'express';
import type { Config } from '../../shared/platform/config.ts';
import type { Pool } from '../../shared/platform/db.ts';
import type { Logger } from '../../shared/platform/log.ts';
import { PasswordChecksBusy } from '../../shared/platform/passwords.ts';
import { connectionsOfPerson, type Connection } from '../../shared/oauth/grantAccounts.ts';
import { deleteGrants } from '../../shared/oauth/records.ts';
import { clientKeyOf } from '../../shared/platform/addresses.ts';
import { signIn } from '../../shared/tenancy/people.ts';
import { escapeHtml } from '../html.ts';
import { alert, csrfField, described, layout, SIGN_IN_LOCKED, SIGN_IN_MISMATCH } from '../oauth/pages.ts';
import { PEOPLE_PATH, PeopleSessions } from './session.ts';

const PAGE = `${PEOPLE_PATH}/connections`;
const SCOPE_WORDS: Record<string, string> = { 'service.read': 'read your datasets', 'service.write': 'create and change your datasets' };

const when = (date: Date | null) =>
  date ? `<time datetime="${date.toISOString()}">${escapeHtml(date.toISOString().slice(0, 16).replace('T', ' '))}</time>` : 'never';

function signInPage(csrf: string, options: { email?: string; error?: string } = {}): string {
  return layout(
    'Connected programs',
    `<h1>Connected programs</h1>
<p class="muted">Sign in to see the programs you allowed to use your Dataset Service accounts, and to disconnect them.</p>
${alert(options.error)}
<form method="post" action="${PEOPLE_PATH}/sign-in" novalidate>${csrfField(csrf)}
<label for="email">Email</label>
<input id="email" name="email" type="email" autocomplete="email" required value="${escapeHtml(options.email ?? '')}"${described(options.error)} autofocus>
<label for="password">Password</label>
<input id="password" name="password" type="password" autocomplete="current-password" required${described(options.error)}>
<div class="actions"><button class="primary" type="submit">Sign in</button></div>
</form>`,
  );
}

function connectionsPage(connections: Connection[], csrf: string, notice?: string): string {
  const rows = connections
    .map(
      (c) => `<tr>
<td><strong>${escapeHtml(c.programName)}</strong></td>
<td data-label="Account">${escapeHtml(c.accountName)}</td>
<td data-label="May">${c.scopes.map((s) => escapeHtml(SCOPE_WORDS[s] ?? s)).join(', ') || '-'}</td>
<td data-label="Allowed">${when(c.grantedAt)}</td>
<td data-label="Last used">${when(c.lastUsedAt)}</td>
<td><form method="post" action="${PAGE}/${encodeURIComponent(c.grantId)}/disconnect">${csrfField(csrf)}
<button class="danger" type="submit" aria-label="Disconnect ${escapeHtml(c.programName)} from ${escapeHtml(c.accountName)}">Disconnect</button></form></td>
</tr>`,
    )
    .join('\n');
  return layout(
    'Connected programs',
    `<div class="bar"><h1>Connected programs</h1>
<form method="post" action="${PEOPLE_PATH}/sign-out">${csrfField(csrf)}<button class="secondary" type="submit">Sign out</button></form></div>
<p class="muted">Programs you allowed to act for you. Disconnecting one stops it at its next request; it would have to ask you again.</p>
${notice ? `<div class="notice" role="status">${escapeHtml(notice)}</div>` : ''}
${
  connections.length === 0
    ? '<p>You have not connected any program.</p>'
    : `<table><thead><tr><th scope="col">Program</th><th scope="col">Account</th><th scope="col">May</th><th scope="col">Allowed (UTC)</th><th scope="col">Last used (UTC)</th><th scope="col">Action</th></tr></thead>
<tbody>${rows}</tbody></table>`
}`,
    { wide: true },
  );
}

const refusedPage = () =>
  layout('Refused', `<h1>This form has expired</h1><p class="muted">Go back to <a href="${PAGE}">your connected programs</a> and try again.</p>`);

export function peopleRoutes(deps: { config: Config; pool: Pool; log: Logger; sessionKey: string }): Router {
  const sessions = new PeopleSessions(deps.sessionKey, deps.config.baseUrl);
  const router = express.Router();
  router.use((_req, res, next) => {
    res.set({ 'Cache-Control': 'no-store', Pragma: 'no-cache' });
    next();
  });
  router.use(express.urlencoded({ extended: false, limit: '16kb', parameterLimit: 20, inflate: false }));
  const html = (res: Response, status: number, page: string) => void res.status(status).type('html').send(page);

  const show = async (req: Request, res: Response, notice?: string) => {
    const personId = sessions.personOf(req);
    if (!personId) return html(res, 200, signInPage(sessions.signInToken(req, res)));
    html(res, 200, connectionsPage(await connectionsOfPerson(deps.pool, personId), sessions.sessionToken(req), notice));
  };

  router.get('/connections', (req, res) => show(req, res, typeof req.query['disconnected'] === 'string' ? `Disconnected ${req.query['disconnected']}.` : undefined));
  router.get('/', (_req, res) => res.redirect(303, PAGE));

  router.post('/sign-in', async (req, res) => {
    if (!sessions.formIsOurs(req, false)) return html(res, 403, refusedPage());
    const email = typeof req.body?.email === 'string' ? (req.body.email as string) : '';
    const password = typeof req.body?.password === 'string' ? (req.body.password as string) : '';
    const again = (status: number, error: string) => html(res, status, signInPage(sessions.signInToken(req, res), { email, error }));
    if (!email || !password) return again(400, 'Enter your email address and your password.');
    let person;
    try {
      person = await signIn(deps.pool, email, password, clientKeyOf(req.ip));
    } catch (error) {
      if (error instanceof PasswordChecksBusy) {
        res.set('Retry-After', '5');
        return again(503, 'Too many sign-ins from your network right now. Try again in a few seconds.');
      }
      throw error;
    }
    if (person === 'locked') return again(401, SIGN_IN_LOCKED);
    if (!person) return again(401, SIGN_IN_MISMATCH);
    sessions.signIn(res, person.personId);
    deps.log.info({ personId: person.personId }, 'person signed in to their connected programs');
    res.redirect(303, PAGE);
  });

  router.post('/connections/:grantId/disconnect', async (req, res) => {
    const personId = sessions.personOf(req);
    if (!personId || !sessions.formIsOurs(req, true)) return html(res, 403, refusedPage());
    const grantId = req.params['grantId']!;
    // Only one of the person's own grants: another person's is not in their list.
    const connection = (await connectionsOfPerson(deps.pool, personId)).find((c) => c.grantId === grantId);
    if (!connection) return show(req, res, 'That program was already disconnected.');
    await deleteGrants(deps.pool, [grantId]);
    deps.log.info({ personId, grantId, clientId: connection.clientId, accountId: connection.accountId }, 'program disconnected by its person');
    res.redirect(303, `${PAGE}?disconnected=${encodeURIComponent(connection.programName)}`);
  });

  router.post('/sign-out', (req, res) => {
    if (sessions.personOf(req) && !sessions.formIsOurs(req, true)) return html(res, 403, refusedPage());
    sessions.signOut(res);
    res.redirect(303, PAGE);
  });
  return router;
}
