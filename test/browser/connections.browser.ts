// A person's page of connected programs in a real browser (Debian's Chromium, playwright-core):
// they connect a program through the consent pages, then sign in to /account/connections, see it,
// and disconnect it; the program's next request is refused. Screenshots under
// test/artifacts/connections-browser/.
import { mkdir } from 'node:fs/promises';
import type { Server } from 'node:http';
import { join } from 'node:path';
import { expect } from 'chai';
import * as oauth from 'oauth4webapi';
import type { Browser, Page } from 'playwright-core';
import { launchChromium, startClientPage } from '../support/browser.ts';
import { addMember } from '../../shared/tenancy/memberships.ts';
import { startService, type TestService } from '../support/service.ts';

const ARTIFACTS = join(import.meta.dirname, '..', 'artifacts', 'connections-browser');
const insecure = { [oauth.allowInsecureRequests]: true } as const;

describe('connected programs page in a real browser', function () {
  this.timeout(60_000);
  let svc: TestService;
  let browser: Browser;
  let callback: Server;
  let redirectUri: string;
  let as: oauth.AuthorizationServer;

  before(async () => {
    await mkdir(ARTIFACTS, { recursive: true });
    svc = await startService({ worker: false });
    ({ server: callback, redirectUri } = await startClientPage());
    const issuer = new URL(svc.url);
    as = await oauth.processDiscoveryResponse(issuer, await oauth.discoveryRequest(issuer, { algorithm: 'oauth2', ...insecure }));
    browser = await launchChromium();
  });
  after(async () => {
    await browser?.close();
    callback?.close();
    await svc?.stop();
  });

  const shot = (page: Page, name: string) => page.screenshot({ path: join(ARTIFACTS, `${name}.png`), fullPage: true });

  /** The program `name` connected by the person through the consent pages (signing up the first time); its tokens. */
  async function connect(page: Page, name: string, person: { email: string; password: string; invitation?: string }) {
    const client = await oauth.processDynamicClientRegistrationResponse(
      await oauth.dynamicClientRegistrationRequest(as, { redirect_uris: [redirectUri], client_name: name, token_endpoint_auth_method: 'none' }, insecure),
    );
    const verifier = oauth.generateRandomCodeVerifier();
    const state = oauth.generateRandomState();
    const url = new URL(as.authorization_endpoint!);
    url.search = new URLSearchParams({
      client_id: client.client_id,
      redirect_uri: redirectUri,
      response_type: 'code',
      scope: 'service.read service.write',
      state,
      code_challenge: await oauth.calculatePKCECodeChallenge(verifier),
      code_challenge_method: 'S256',
    }).toString();
    await page.goto(url.href);
    if (person.invitation) {
      await page.getByRole('link', { name: 'Create an account' }).click();
      await page.getByLabel('Email').fill(person.email);
      await page.getByLabel(/^Password/).fill(person.password);
      await page.getByLabel(/^Invitation code/).fill(person.invitation);
      await page.getByRole('button', { name: 'Create account' }).click();
    } else if (await page.getByRole('heading', { name: 'Sign in to continue' }).isVisible()) {
      await page.getByLabel('Email').fill(person.email);
      await page.getByLabel('Password').fill(person.password);
      await page.getByRole('button', { name: 'Sign in' }).click();
    }
    await page.getByRole('button', { name: 'Allow' }).click();
    await page.waitForURL((u) => u.href.startsWith(redirectUri));
    const params = oauth.validateAuthResponse(as, client, new URL(page.url()), state);
    return oauth.processAuthorizationCodeResponse(as, client, await oauth.authorizationCodeGrantRequest(as, client, oauth.None(), params, redirectUri, verifier, insecure));
  }

  it('when a person signs in to their connected programs, then they see each program and disconnecting one stops it at its next request', async () => {
    const person = { email: 'rosa@harbor.example', password: 'rosa-has-a-good-password' };
    const account = await svc.account('Harbor Logistics');
    const invitation = (await addMember(svc.db, account, person.email)).invitationCode!;
    const context = await browser.newContext({ viewport: { width: 1024, height: 720 } });
    const page = await context.newPage();
    const reports = await connect(page, 'Quarterly Reports', { ...person, invitation });
    const sync = await connect(page, 'CRM Sync', person);
    expect((await svc.request('/v1/datasets', { key: reports.access_token })).status).to.equal(200);

    await page.goto(`${svc.url}/account/connections`);
    await page.getByRole('heading', { name: 'Connected programs' }).waitFor();
    const headers = await page.request.get(`${svc.url}/account/connections`);
    expect(headers.headers()['content-security-policy']).to.include("frame-ancestors 'none'");
    expect(headers.headers()['x-frame-options']).to.equal('DENY');
    await page.getByLabel('Email').fill(person.email);
    await page.getByLabel('Password').fill('wrong password');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('alert').waitFor();
    await shot(page, '01-sign-in-wrong-password');
    await page.getByLabel('Password').fill(person.password);
    await page.getByRole('button', { name: 'Sign in' }).click();

    await page.getByRole('table').waitFor();
    const rows = page.getByRole('row');
    expect(await rows.count()).to.equal(3); // the header and two programs
    expect(await page.getByRole('cell', { name: 'Quarterly Reports', exact: true }).count()).to.equal(1);
    expect(await page.getByRole('cell', { name: 'CRM Sync', exact: true }).count()).to.equal(1);
    expect(await page.getByRole('cell', { name: 'Harbor Logistics', exact: true }).count()).to.equal(2);
    expect(await page.getByText('read your datasets, create and change your datasets').count()).to.equal(2);
    await shot(page, '02-connected-programs');
    const phone = await context.newPage();
    await phone.setViewportSize({ width: 390, height: 844 });
    await phone.goto(page.url());
    await shot(phone, '03-on-a-phone');
    await phone.close();

    await page.getByRole('button', { name: 'Disconnect Quarterly Reports from Harbor Logistics' }).click();
    await page.getByRole('status').waitFor();
    expect(await page.getByRole('status').textContent()).to.equal('Disconnected Quarterly Reports.');
    expect(await page.getByRole('cell', { name: 'Quarterly Reports', exact: true }).count()).to.equal(0);
    await shot(page, '04-disconnected');
    // Revoked on the very next request; the other program goes on.
    expect((await svc.request('/v1/datasets', { key: reports.access_token })).status).to.equal(401);
    expect((await svc.request('/v1/datasets', { key: sync.access_token })).status).to.equal(200);

    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByRole('button', { name: 'Sign in' }).waitFor();
    await context.close();
  });

  it('when a disconnect form is posted from another site or without its token, then it is refused and nothing is disconnected', async () => {
    const person = { email: 'ivo@harbor.example', password: 'ivo-has-a-good-password' };
    const account = await svc.account('Harbor Imports');
    const invitation = (await addMember(svc.db, account, person.email)).invitationCode!;
    const context = await browser.newContext();
    const page = await context.newPage();
    const tokens = await connect(page, 'Ledger', { ...person, invitation });
    await page.goto(`${svc.url}/account/connections`);
    await page.getByLabel('Email').fill(person.email);
    await page.getByLabel('Password').fill(person.password);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('table').waitFor();
    const action = await page.locator('td form').first().getAttribute('action');
    // The signed-in browser posts without the token, and with another Origin.
    const noToken = await page.request.post(`${svc.url}${action}`, { form: { csrf: 'x' } });
    expect(noToken.status()).to.equal(403);
    const csrf = await page.locator('td form input[name=csrf]').first().inputValue();
    const foreign = await page.request.post(`${svc.url}${action}`, { form: { csrf }, headers: { origin: 'https://evil.example' } });
    expect(foreign.status()).to.equal(403);
    expect((await svc.request('/v1/datasets', { key: tokens.access_token })).status).to.equal(200);
    await context.close();
  });
});
