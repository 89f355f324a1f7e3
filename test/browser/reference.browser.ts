// The API reference at /docs in a real browser (Debian's Chromium): Scalar's page of the service's
// OpenAPI document, everything loaded from the service itself (no CDN), with navigation, search
// and curl samples. A screenshot is kept under test/artifacts/reference/.
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { expect } from 'chai';
import type { Browser } from 'playwright-core';
import { launchChromium } from '../support/browser.ts';
import { startService, type TestService } from '../support/service.ts';

const ARTIFACTS = join(import.meta.dirname, '..', 'artifacts', 'reference');

describe('the API reference in a real browser', function () {
  this.timeout(60_000);
  let svc: TestService;
  let browser: Browser;

  before(async () => {
    await mkdir(ARTIFACTS, { recursive: true });
    svc = await startService({ worker: false });
    browser = await launchChromium();
  });
  after(async () => {
    await browser?.close();
    await svc?.stop();
  });

  it('when /docs is opened, then the reference renders from this host alone, with navigation, search and curl samples', async () => {
    const context = await browser.newContext({ viewport: { width: 1440, height: 900 } });
    const page = await context.newPage();
    const elsewhere: string[] = [];
    const violations: string[] = [];
    page.on('request', (request) => {
      const url = new URL(request.url());
      if (!['127.0.0.1', 'localhost'].includes(url.hostname) && !['data:', 'blob:'].includes(url.protocol)) elsewhere.push(request.url());
    });
    page.on('console', (message) => {
      if (/Content Security Policy|Refused to/.test(message.text())) violations.push(message.text());
    });
    await page.goto(`${svc.url}/docs`);
    // Navigation: the sections and the operations.
    await page.getByRole('link', { name: 'Create a dataset' }).first().waitFor({ timeout: 30_000 });
    expect(await page.getByText('Webhooks', { exact: true }).count()).to.be.above(0);
    // A request sample in curl, with the operation's path.
    await page.getByRole('link', { name: 'Create a dataset' }).first().click();
    await page.getByText(/curl/).first().waitFor();
    await page.screenshot({ path: join(ARTIFACTS, 'docs.png') });
    // Search.
    await page.keyboard.press('Control+k');
    await page.keyboard.type('webhook endpoint');
    await page.getByText('Create a webhook endpoint').first().waitFor();
    await page.screenshot({ path: join(ARTIFACTS, 'docs-search.png') });
    expect(await page.getByText('Ask AI').count()).to.equal(0);
    expect(await page.getByText('Generate MCP').count()).to.equal(0);
    expect(elsewhere).to.deep.equal([]);
    expect(violations).to.deep.equal([]);
    await context.close();
  });

  it('when /docs is opened on this host, then it starts with what one can do in three steps, shows no Scalar developer bar, and uploads a CSV with --data-binary @file', async () => {
    const context = await browser.newContext({ viewport: { width: 1440, height: 900 } });
    const page = await context.newPage();
    // A loopback address, where Scalar shows its developer bar unless told not to.
    await page.goto(`${svc.url}/docs`);
    await page.getByRole('link', { name: 'Create a dataset' }).first().waitFor({ timeout: 30_000 });
    // The introduction: what the service does, then three numbered steps.
    const intro = page.locator('.introduction-description, .markdown').first();
    await intro.waitFor();
    const steps = await page.locator('ol').first().locator('li').allInnerTexts();
    expect(steps).to.have.length(3);
    expect(steps[0]).to.match(/^Create a dataset/);
    expect(steps[1]).to.match(/^Upload its contract file/);
    expect(steps[2]).to.match(/^Read the figures/);
    expect(await page.getByText(/turns files of contracts into the figures a finance team reads/).count()).to.be.above(0);
    await page.screenshot({ path: join(ARTIFACTS, 'docs-introduction.png') });
    // No "Developer Tools / Configure / Share / Deploy" bar.
    expect(await page.locator('[aria-label="Developer Tools"]').count()).to.equal(0);
    for (const word of ['Developer Tools', 'Configure', 'Share', 'Deploy']) expect(await page.getByRole('button', { name: word, exact: true }).count(), word).to.equal(0);
    // The version's CSV upload: the file sent as it is.
    await page.getByText('Versions', { exact: true }).first().click();
    await page.getByRole('link', { name: 'Create a version from a contract file' }).first().click();
    const sample = page.locator('pre, code').filter({ hasText: '/versions' }).filter({ hasText: 'curl' }).first();
    await sample.waitFor();
    const text = await sample.innerText();
    expect(text).to.include('--data-binary @contracts.csv').and.include("Content-Type: text/csv").and.include(`${svc.url}/v1/datasets/`);
    expect(text).not.to.match(/--data '/);
    await page.screenshot({ path: join(ARTIFACTS, 'docs-create-version.png') });
    await context.close();
  });
});
