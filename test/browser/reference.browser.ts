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
});
