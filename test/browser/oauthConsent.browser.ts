// A real browser (Debian's Chromium driven by playwright-core) goes through the person's pages:
// a wrong password, sign-up with an invitation, a second invitation on the consent page, account
// choice, consent, and the client receiving its code. A
// screenshot of every page is kept under test/artifacts/oauth-browser/ (on a phone-sized screen
// too) so that someone can look at them.
import { mkdir } from 'node:fs/promises';
import type { Server } from 'node:http';
import { join } from 'node:path';
import { expect } from 'chai';
import * as oauth from 'oauth4webapi';
import type { Browser, Page } from 'playwright-core';
import { launchChromium, startClientPage } from '../support/browser.ts';
import { addMember } from '../../shared/tenancy/memberships.ts';
import { startService, type TestService } from '../support/service.ts';

const ARTIFACTS = join(import.meta.dirname, '..', 'artifacts', 'oauth-browser');
const insecure = { [oauth.allowInsecureRequests]: true } as const;

describe('OAuth pages in a real browser', function () {
  this.timeout(60_000);
  let svc: TestService;
  let browser: Browser;
  let callback: Server;
  let redirectUri: string;
  let as: oauth.AuthorizationServer;
  let client: oauth.Client;

  before(async () => {
    await mkdir(ARTIFACTS, { recursive: true });
    svc = await startService({ worker: false });
    ({ server: callback, redirectUri } = await startClientPage());
    const issuer = new URL(svc.url);
    as = await oauth.processDiscoveryResponse(issuer, await oauth.discoveryRequest(issuer, { algorithm: 'oauth2', ...insecure }));
    client = await oauth.processDynamicClientRegistrationResponse(
      await oauth.dynamicClientRegistrationRequest(as, { redirect_uris: [redirectUri], client_name: 'Quarterly Reports', token_endpoint_auth_method: 'none' }, insecure),
    );
    browser = await launchChromium();
  });
  after(async () => {
    await browser?.close();
    callback?.close();
    await svc?.stop();
  });

  async function start(page: Page) {
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
    return { verifier, state };
  }

  const shot = (page: Page, name: string) => page.screenshot({ path: join(ARTIFACTS, `${name}.png`), fullPage: true });

  it('when a person the operator invited to two accounts signs up with one code, adds the other, picks it and allows, then the client gets a token for that account', async () => {
    const email = 'dana@northwind.example';
    const sales = await svc.account('Northwind Sales');
    const finance = await svc.account('Northwind Finance');
    const salesInvitation = await addMember(svc.db, sales, email);
    const financeInvitation = await addMember(svc.db, finance, email);

    const context = await browser.newContext({ viewport: { width: 1024, height: 720 } });
    const page = await context.newPage();
    const flow = await start(page);

    await page.getByRole('heading', { name: 'Sign in to continue' }).waitFor();
    await shot(page, '01-sign-in');
    await page.getByLabel('Email').fill(email);
    await page.getByLabel('Password').fill('not the password');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('alert').waitFor();
    expect(await page.getByRole('alert').textContent()).to.include('do not match');
    await shot(page, '02-wrong-password');

    await page.getByRole('link', { name: 'Create an account' }).click();
    await page.getByRole('heading', { name: 'Create your account' }).waitFor();
    await page.getByLabel('Email').fill(email);
    await page.getByLabel(/^Password/).fill('dana-has-a-good-password');
    await page.getByLabel(/^Invitation code/).fill(salesInvitation.invitationCode!);
    await shot(page, '03-sign-up');
    await page.getByRole('button', { name: 'Create account' }).click();

    await page.getByRole('heading', { name: /Allow Quarterly Reports/ }).waitFor();
    expect(await page.getByRole('radio').count()).to.equal(1);
    await page.getByText('Invited to another account?').click();
    await page.getByLabel('Invitation code').fill(financeInvitation.invitationCode!);
    await shot(page, '04-consent-invitation-code');
    await page.getByRole('button', { name: 'Add' }).click();
    await page.getByRole('radio', { name: /Northwind Finance/ }).waitFor();
    expect(await page.getByRole('radio').count()).to.equal(2);
    await page.getByRole('radio', { name: /Northwind Finance/ }).check();
    await shot(page, '05-consent-account-choice');

    // The same page on a phone.
    const phone = await context.newPage();
    await phone.setViewportSize({ width: 390, height: 844 });
    await phone.goto(page.url());
    await shot(phone, '06-consent-on-a-phone');
    await phone.close();

    await page.getByRole('button', { name: 'Allow' }).click();
    await page.waitForURL((url) => url.href.startsWith(redirectUri));
    await shot(page, '07-back-at-the-client');
    const params = oauth.validateAuthResponse(as, client, new URL(page.url()), flow.state);
    const tokens = await oauth.processAuthorizationCodeResponse(
      as,
      client,
      await oauth.authorizationCodeGrantRequest(as, client, oauth.None(), params, redirectUri, flow.verifier, insecure),
    );
    const created = await svc.request('/v1/datasets', { key: tokens.access_token, json: { externalRef: 'from-the-browser' } });
    expect(created.status).to.equal(201);
    const { rows } = await svc.db.query('SELECT account_id FROM datasets WHERE id = $1', [created.json.id]);
    expect(rows[0].account_id).to.equal(finance);
    await context.close();
  });

  it('when the form names an account the person is not linked to, then the browser shows the 403 page', async () => {
    const context = await browser.newContext();
    const page = await context.newPage();
    await start(page);
    await page.getByRole('link', { name: 'Create an account' }).click();
    await page.getByLabel('Email').fill('eve@elsewhere.example');
    await page.getByLabel(/^Password/).fill('eve-has-a-password');
    await page.getByRole('button', { name: 'Create account' }).click();
    await page.getByRole('heading', { name: /Allow Quarterly Reports/ }).waitFor();
    const stranger = await svc.account('Someone else');
    await page.getByRole('radio').evaluate((radio, value) => ((radio as unknown as { value: string }).value = value), stranger);
    const response = page.waitForResponse((r) => r.url().endsWith('/consent'));
    await page.getByRole('button', { name: 'Allow' }).click();
    expect((await response).status()).to.equal(403);
    await page.getByRole('heading', { name: 'You cannot connect this account' }).waitFor();
    await shot(page, '08-account-not-linked-403');
    await context.close();
  });
});
