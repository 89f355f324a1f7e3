// The people's dashboard in a real browser (Debian's Chromium, playwright-core): an invited person
// signs up and sees their account's datasets in one mode; a dataset's page with its charts,
// tables, cohorts and versions; a failed version's errors and rejected rows; an upload through
// the form; another account's dataset; a form without its token; signing out. axe-core runs on
// every page, at 1280 px and at 400 px wide. Screenshots under test/artifacts/dashboard-browser/.
import { mkdir, readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { expect } from 'chai';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { addMember } from '../../shared/tenancy/memberships.ts';
import { signUp } from '../../shared/tenancy/signUp.ts';
import { launchChromium } from '../support/browser.ts';
import { dashboardContractsCsv } from '../support/dashboard.ts';
import { HEADER, newDataset, postCsv } from '../support/ingest.ts';
import { runScript } from '../support/processes.ts';
import { startService, type TestService } from '../support/service.ts';

const ARTIFACTS = join(import.meta.dirname, '..', 'artifacts', 'dashboard-browser');
const AXE_SOURCE = readFile(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');
const PASSWORD = 'a long enough password';
const WIDE = { width: 1280, height: 900 };
const NARROW = { width: 400, height: 860 };

type AxeResult = { passes: unknown[]; violations: { id: string; impact: string | null; help: string; nodes: { target: unknown[] }[] }[] };

describe('the people dashboard in a real browser', function () {
  this.timeout(120_000);
  let svc: TestService;
  let browser: Browser;
  let accountId: string;
  let testKey: string;
  let liveKey: string;
  /** Datasets: the account's in test mode (with figures) and in live mode, and another account's. */
  const ids = { test: '', live: '', theirs: '' };
  /** A person of the account who already has a password. */
  const reader = { email: 'reader@harbor.example', password: PASSWORD };

  before(async () => {
    await mkdir(ARTIFACTS, { recursive: true });
    svc = await startService();
    browser = await launchChromium();
    accountId = await svc.account('Harbor Logistics');
    testKey = await svc.key(accountId, 'test');
    liveKey = await svc.key(accountId, 'live');
    const created = await svc.request('/v1/datasets', { key: testKey, json: { externalRef: 'billing-2024', name: 'Subscriptions 2024' } });
    ids.test = created.json.id;
    const built = await postCsv(svc, testKey, ids.test, dashboardContractsCsv(), { wait: 60 });
    expect(built.status, built.text).to.equal(201);
    ids.live = (await svc.request('/v1/datasets', { key: liveKey, json: { externalRef: 'billing-live', name: 'Live subscriptions' } })).json.id;
    const other = await svc.tenant('test');
    ids.theirs = (await svc.request('/v1/datasets', { key: other.key, json: { externalRef: 'theirs', name: 'Another company' } })).json.id;
    const { invitationCode } = await addMember(svc.db, accountId, reader.email);
    expect(await signUp(svc.db, reader.email, reader.password, invitationCode!, 'test')).to.have.property('personId');
  });
  after(async () => {
    await browser?.close();
    await svc?.stop();
  });

  /** A page that records requests to other hosts and CSP refusals. */
  async function openPage(context: BrowserContext): Promise<{ page: Page; elsewhere: string[]; refusals: string[] }> {
    const page = await context.newPage();
    const elsewhere: string[] = [];
    const refusals: string[] = [];
    page.on('request', (request) => {
      const url = new URL(request.url());
      if (url.hostname !== '127.0.0.1' && url.protocol !== 'data:') elsewhere.push(request.url());
    });
    page.on('console', (message) => {
      if (/Content Security Policy|Refused to/.test(message.text())) refusals.push(message.text());
    });
    return { page, elsewhere, refusals };
  }

  /** axe-core in the page: no serious or critical violation, at 1280 px and 400 px wide; a screenshot of each. */
  async function checkPage(page: Page, name: string): Promise<void> {
    const source = await AXE_SOURCE;
    for (const [width, size] of [['1280', WIDE], ['400', NARROW]] as const) {
      await page.setViewportSize(size);
      await page.evaluate(source);
      const result = (await page.evaluate('axe.run(document)')) as AxeResult;
      expect(result.passes.length, 'axe-core ran its checks').to.be.greaterThan(10);
      const serious = result.violations.filter((v) => v.impact === 'serious' || v.impact === 'critical');
      expect(serious.map((v) => `${v.id} (${v.impact}): ${v.help} at ${v.nodes.map((n) => JSON.stringify(n.target)).join(', ')}`), `${name} at ${width} px`).to.deep.equal([]);
      // Usable at this width: nothing runs off the side of the page (wide tables scroll inside their own region).
      const overflow = (await page.evaluate('document.documentElement.scrollWidth - document.documentElement.clientWidth')) as number;
      expect(overflow, `${name} at ${width} px scrolls sideways`).to.be.at.most(0);
      await page.screenshot({ path: join(ARTIFACTS, `${name}-${width}.png`), fullPage: true });
    }
    await page.setViewportSize(WIDE);
  }

  async function signedIn(person = reader): Promise<{ context: BrowserContext; page: Page; elsewhere: string[]; refusals: string[] }> {
    const context = await browser.newContext({ viewport: WIDE, acceptDownloads: true });
    const opened = await openPage(context);
    await opened.page.goto(`${svc.url}/dashboard`);
    await opened.page.getByLabel('Email').fill(person.email);
    await opened.page.getByLabel('Password').fill(person.password);
    await opened.page.getByRole('button', { name: 'Sign in' }).click();
    await opened.page.getByRole('heading', { name: 'Datasets', exact: true }).waitFor();
    return { context, ...opened };
  }

  it('when a person invited with `members add` signs up, then they see only their account\'s datasets, in test mode until they switch, which is remembered', async () => {
    const email = 'rosa@harbor.example';
    const invited = await runScript('bin/operator.ts', ['members', 'add', '--account', accountId, '--email', email, '--json'], { DATABASE_URL: svc.databaseUrl });
    expect(invited.code, invited.stderr).to.equal(0);
    const { invitationCode } = JSON.parse(invited.stdout);
    const context = await browser.newContext({ viewport: WIDE });
    const { page, elsewhere, refusals } = await openPage(context);
    await page.goto(`${svc.url}/dashboard`);
    await checkPage(page, '01-sign-in');
    await page.getByRole('link', { name: 'Sign up with your invitation code' }).click();
    await page.getByLabel('Email').fill(email);
    await page.getByLabel('Invitation code').fill('inv_not_the_code');
    await page.getByLabel(/^New password/).fill(PASSWORD);
    await page.getByRole('button', { name: 'Sign up' }).click();
    await page.getByRole('alert').waitFor();
    await checkPage(page, '02-sign-up-refused');
    await page.getByLabel('Invitation code').fill(invitationCode);
    await page.getByLabel(/^New password/).fill(PASSWORD);
    await page.getByRole('button', { name: 'Sign up' }).click();

    await page.getByRole('heading', { name: 'Datasets', exact: true }).waitFor();
    expect(await page.getByText('Test mode', { exact: true }).isVisible()).to.equal(true);
    const names = await page.locator('tbody th a').allTextContents();
    expect(names).to.deep.equal(['Subscriptions 2024']);
    const cells = await page.getByRole('row', { name: /Subscriptions 2024/ }).getByRole('cell').allTextContents();
    expect(cells[0]).to.equal('billing-2024');
    await checkPage(page, '03-datasets-test-mode');

    await page.getByRole('button', { name: 'Switch to live mode' }).click();
    await page.getByText('Live mode', { exact: true }).waitFor();
    expect(await page.locator('tbody th a').allTextContents()).to.deep.equal(['Live subscriptions']);
    await checkPage(page, '04-datasets-live-mode');
    // Signed out and in again: still live.
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByLabel('Email').fill(email);
    await page.getByLabel('Password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByText('Live mode', { exact: true }).waitFor();
    expect(elsewhere).to.deep.equal([]);
    expect(refusals).to.deep.equal([]);
    await context.close();
  });

  it('when a dataset is opened, then its key figures, its charts each with its table, its cohorts and its versions show, in the API\'s figures', async () => {
    const { context, page, elsewhere, refusals } = await signedIn();
    await page.getByRole('link', { name: 'Subscriptions 2024' }).click();
    await page.getByRole('heading', { name: 'Subscriptions 2024', level: 1 }).waitFor();

    const metrics = (await svc.request(`/v1/datasets/${ids.test}/metrics`, { key: testKey })).json;
    const currencies = [...new Set(metrics.monthly.map((m: { currency: string }) => m.currency))].sort();
    expect(currencies).to.deep.equal(['EUR', 'USD']);
    for (const currency of ['EUR', 'USD']) {
      const keyFigures = page.getByRole('region', { name: new RegExp(`^${currency} at the end of`) });
      const heading = (await keyFigures.getByRole('heading').textContent())!;
      const [, monthWord, year] = /end of (\w+) (\d{4})/.exec(heading)!;
      const month = `${year}-${String(['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'].indexOf(monthWord!) + 1).padStart(2, '0')}`;
      const api = metrics.monthly.find((m: { month: string; currency: string }) => m.month === month && m.currency === currency);
      const shown = (await keyFigures.locator('dd').allTextContents()).join(' | ');
      const grouped = (s: string) => s.replace(/\B(?=(\d{3})+(?!\d))/g, ',');
      const [whole, cents] = api.mrr.split('.');
      expect(shown).to.include(`${grouped(whole)}.${cents} ${currency}`); // MRR, with thousands separators
      expect(shown).to.include(`${grouped(api.arr.split('.')[0])}.${api.arr.split('.')[1]} ${currency}`);
      expect(await page.getByRole('img', { name: new RegExp(`^MRR in ${currency} and its movements`) }).count()).to.equal(1);
      expect(await page.getByRole('img', { name: new RegExp(`^Active customers in ${currency}`) }).count()).to.equal(1);
      // Each chart's figures in a table beside it: a row per month of the API's series.
      const table = page.getByRole('table', { name: `MRR and movements in ${currency}, by month` });
      expect(await table.locator('tbody tr').count()).to.equal(metrics.monthly.filter((m: { currency: string }) => m.currency === currency).length);
      expect(await page.getByRole('table', { name: new RegExp(`^Cohorts in ${currency}`) }).count()).to.equal(1);
    }
    const versions = page.getByRole('table', { name: /^Versions of Subscriptions 2024/ });
    expect(await versions.getByText('active', { exact: true }).count()).to.equal(1);
    expect(await page.locator('svg rect').count()).to.be.greaterThan(40);
    await checkPage(page, '05-dataset');
    const download = page.waitForEvent('download');
    await page.getByRole('button', { name: 'Download CSV' }).click();
    const file = await download;
    expect(file.suggestedFilename()).to.match(/^exp_\w+\.csv$/);
    expect((await readFile((await file.path())!, 'utf8')).split('\n')[0]).to.equal(HEADER);
    expect(elsewhere).to.deep.equal([]);
    expect(refusals).to.deep.equal([]);
    await context.close();
  });

  it('when a version failed, then its page lists its first row errors and its rejected rows download', async () => {
    const datasetId = await newDataset(svc, testKey, 'corrections');
    const bad = `${HEADER}\nC-1,Acme,Pro,2024-01-01,2024-12-31,1200.00,EUR\nC-2,,Pro,2024-02-30,2024-12-31,12.00,EUR\nC-3,Globex,Pro,2024-01-01,2024-12-31,abc,EUR\n`;
    expect((await postCsv(svc, testKey, datasetId, bad, { wait: 30 })).status).to.equal(422);
    const { context, page } = await signedIn();
    await page.goto(`${svc.url}/dashboard/datasets/${datasetId}`);
    await page.getByRole('table', { name: /^Versions of/ }).getByRole('link').first().click();
    await page.getByRole('heading', { name: 'Why it failed' }).waitFor();
    const rows = await page
      .getByRole('table', { name: 'Row errors, in row order' })
      .locator('tbody tr')
      .evaluateAll((trs) => trs.map((tr) => [...(tr as unknown as { cells: Iterable<{ textContent: string }> }).cells].slice(0, 3).map((c) => c.textContent.trim()).join(' ')));
    expect(rows).to.deep.equal(['3 customer required', '3 startDate not_a_date', '4 amount not_a_number']);
    await checkPage(page, '06-failed-version');
    const download = page.waitForEvent('download');
    await page.getByRole('link', { name: /Download the rejected rows/ }).click();
    const csv = await readFile((await (await download).path())!, 'utf8');
    expect(csv.split('\r\n').filter(Boolean).map((l) => l.split(',')[0])).to.deep.equal(['rejectedRow', '3', '4']);
    await context.close();
  });

  it('when a file is uploaded through the form, then it becomes the active version', async () => {
    const datasetId = await newDataset(svc, testKey, 'uploaded-by-hand');
    const { context, page } = await signedIn();
    await page.goto(`${svc.url}/dashboard/datasets/${datasetId}`);
    await checkPage(page, '07-empty-dataset');
    await page.getByLabel('Choose a CSV file, or drag one here').setInputFiles({ name: 'contracts.csv', mimeType: 'text/csv', buffer: Buffer.from(dashboardContractsCsv()) });
    await page.getByRole('button', { name: 'Upload and build' }).click();
    await page.getByRole('status').waitFor();
    const active = (await svc.request(`/v1/datasets/${datasetId}`, { key: testKey })).json.activeVersionId;
    expect(active).to.match(/^ver_/);
    expect(await page.getByRole('status').textContent()).to.equal(`Version ${active} is now active.`);
    expect(await page.getByRole('img', { name: /^MRR in EUR/ }).count()).to.equal(1);
    await checkPage(page, '08-uploaded');
    await context.close();
  });

  it('when another account\'s dataset or one of the other mode is opened, then a 404 page answers', async () => {
    const { context, page } = await signedIn();
    for (const id of [ids.theirs, ids.live]) {
      const answer = await page.goto(`${svc.url}/dashboard/datasets/${id}`);
      expect(answer!.status()).to.equal(404);
      await page.getByRole('heading', { name: 'Not found' }).waitFor();
    }
    await checkPage(page, '09-not-found');
    await context.close();
  });

  it('when a form is posted without its token, then a 403 page answers and nothing changes', async () => {
    const { context, page } = await signedIn();
    const answer = await page.request.post(`${svc.url}/dashboard/view`, { form: { account: accountId, mode: 'live' } });
    expect(answer.status()).to.equal(403);
    await page.setContent(await answer.text());
    await checkPage(page, '10-form-refused');
    await page.goto(`${svc.url}/dashboard/datasets`);
    expect(await page.getByText('Test mode', { exact: true }).isVisible()).to.equal(true);
    await context.close();
  });

  it('when the person signs out, then the session is over: the old cookie opens nothing', async () => {
    const { context, page } = await signedIn();
    const cookies = await context.cookies();
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByRole('status').filter({ hasText: 'You are signed out.' }).waitFor();
    const stolen = await browser.newContext();
    await stolen.addCookies(cookies);
    const again = await stolen.newPage();
    await again.goto(`${svc.url}/dashboard/datasets`);
    expect(new URL(again.url()).pathname).to.equal('/dashboard/sign-in');
    await again.getByRole('button', { name: 'Sign in' }).waitFor();
    await stolen.close();
    await context.close();
  });
});
