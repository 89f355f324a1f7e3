// The people's dashboard over HTTP (../shared/spec/contract.md, "The people's dashboard"): its
// access (sign-up with an invitation code, sessions that signing out ends on the server, CSRF
// tokens), its borders (another account or mode is a 404 page), its headers, and the upload
// form's idempotency. The browser tests (test/browser/dashboard.browser.ts) look at the pages.
import { expect } from 'chai';
import { addMember } from '../shared/tenancy/memberships.ts';
import { decimal, percent } from '../api/dashboard/format.ts';
import { DashboardSessions } from '../api/dashboard/session.ts';
import { DashboardClient } from './support/dashboard.ts';
import { HEADER, newDataset, postCsv } from './support/ingest.ts';
import { useService } from './support/service.ts';

const PASSWORD = 'a long enough password';
const CSV = `${HEADER}\nC-1,Acme,Pro,2024-01-01,2024-12-31,1200.00,EUR\nC-2,Globex,Pro,2024-03-01,2025-02-28,2400.00,EUR\n`;

describe('the people dashboard over HTTP', () => {
  const svc = useService();
  let people = 0;

  /** A person invited to a new account who signed up on the dashboard, with the account's test and live keys. */
  async function member(name = 'Harbor Ltd') {
    const accountId = await svc.account(name);
    const email = `person${++people}@harbor.example`;
    const { invitationCode } = await addMember(svc.db, accountId, email);
    const client = new DashboardClient(svc.url);
    const signedUp = await client.signUp(email, invitationCode!, PASSWORD);
    expect(signedUp.status, signedUp.text).to.equal(303);
    return { client, email, accountId, testKey: await svc.key(accountId, 'test'), liveKey: await svc.key(accountId, 'live') };
  }

  const versionCount = async (datasetId: string) => Number((await svc.db.query('SELECT count(*) FROM versions WHERE dataset_id = $1', [datasetId])).rows[0].count);

  it('when the API\'s figures are written for people, then amounts get thousands separators and ratios become percentages, digit for digit', () => {
    expect(decimal('1234567.50')).to.equal('1,234,567.50');
    expect(decimal('-50.01')).to.equal('−50.01');
    expect(decimal('999.00')).to.equal('999.00');
    expect(decimal(12345)).to.equal('12,345');
    expect(decimal(null)).to.equal('—');
    expect(percent('1.0667')).to.equal('106.67 %');
    expect(percent('0.05')).to.equal('5.00 %');
    expect(percent('0.0000')).to.equal('0.00 %');
    expect(percent('12.3456')).to.equal('1,234.56 %');
    expect(percent(null)).to.equal('—');
  });

  it('when a page is asked for, then it carries the security headers and is not cached, and the session cookie is HttpOnly, SameSite=Lax and scoped to /dashboard', async () => {
    const client = new DashboardClient(svc.url);
    const signIn = await client.request('/dashboard/sign-in');
    expect(signIn.status).to.equal(200);
    expect(signIn.headers.get('content-type')).to.match(/^text\/html/);
    const csp = signIn.headers.get('content-security-policy')!;
    expect(csp).to.include("script-src 'none'").and.include("frame-ancestors 'none'").and.include("default-src 'none'");
    expect(signIn.headers.get('x-frame-options')).to.equal('DENY');
    expect(signIn.headers.get('x-content-type-options')).to.equal('nosniff');
    expect(signIn.headers.get('cache-control')).to.equal('no-store');

    const accountId = await svc.account();
    const { invitationCode } = await addMember(svc.db, accountId, 'cookie@harbor.example');
    const form = await client.request('/dashboard/sign-up');
    const signedUp = await client.request('/dashboard/sign-up', {
      form: { csrf: DashboardClient.hidden(form.text, 'csrf'), email: 'cookie@harbor.example', invitationCode: invitationCode!, password: PASSWORD },
    });
    expect(signedUp.status).to.equal(303);
    const session = signedUp.headers.getSetCookie().find((c) => c.startsWith('svc_dashboard='))!;
    expect(session).to.match(/; Path=\/dashboard; HttpOnly; SameSite=Lax; Max-Age=\d+$/); // no Secure over http
    const datasets = await client.request('/dashboard/datasets');
    expect(datasets.status).to.equal(200);
    expect(datasets.headers.get('x-frame-options')).to.equal('DENY');
    expect(datasets.text).not.to.match(/<script|https?:\/\/(?!127\.0\.0\.1)[a-z]/i); // nothing from another host, no script
  });

  it('when the service is served over https, then the session cookie is also Secure', async () => {
    const { client } = await member();
    const personId = (await svc.db.query('SELECT person_id FROM dashboard_sessions LIMIT 1')).rows[0].person_id;
    const set: string[] = [];
    const res = { append: (name: string, value: string) => name === 'Set-Cookie' && set.push(value) };
    const sessions = new DashboardSessions(svc.db, 'a key', 'https://dashboard.example');
    await sessions.signIn({ headers: {} } as never, res as never, personId);
    expect(set.find((c) => c.startsWith('svc_dashboard='))).to.match(/; HttpOnly; SameSite=Lax; Max-Age=\d+; Secure$/);
    expect(client.cookies.has('svc_dashboard')).to.equal(true);
  });

  it('when a wrong invitation code or an unknown email signs up, then both get the same refusal and nobody is signed in', async () => {
    const accountId = await svc.account();
    await addMember(svc.db, accountId, 'known@harbor.example');
    const wrongCode = await new DashboardClient(svc.url).signUp('known@harbor.example', 'inv_wrong', PASSWORD);
    const unknown = await new DashboardClient(svc.url).signUp('nobody@harbor.example', 'inv_wrong', PASSWORD);
    expect(wrongCode.status).to.equal(400);
    expect(unknown.status).to.equal(400);
    const alertOf = (html: string) => /role="alert"[^>]*>([^<]*)</.exec(html)?.[1];
    expect(alertOf(wrongCode.text)).to.be.a('string').and.equal(alertOf(unknown.text));
    expect(wrongCode.headers.getSetCookie().some((c) => c.startsWith('svc_dashboard='))).to.equal(false);
  });

  it('when a wrong password or an unknown email signs in, then both get the same answer', async () => {
    const { email } = await member();
    const wrong = await new DashboardClient(svc.url).signIn(email, 'not the password');
    const unknown = await new DashboardClient(svc.url).signIn('stranger@harbor.example', 'not the password');
    expect(wrong.status).to.equal(401);
    expect(unknown.status).to.equal(401);
    expect(wrong.text.replace(/value="[^"]*"/g, '')).to.equal(unknown.text.replace(/value="[^"]*"/g, ''));
    expect((await new DashboardClient(svc.url).signIn(email, PASSWORD)).status).to.equal(303);
  });

  it('when a dataset of another account or of the other mode is asked for, then it is a 404 page, as a missing one', async () => {
    const { client, liveKey } = await member();
    const other = await svc.tenant('test');
    const theirs = await newDataset(svc, other.key);
    const ownLive = await newDataset(svc, liveKey);
    for (const id of [theirs, ownLive, 'ds_missing']) {
      const page = await client.request(`/dashboard/datasets/${id}`);
      expect(page.status, id).to.equal(404);
      expect(page.headers.get('content-type')).to.match(/^text\/html/);
      expect(page.text).to.include('Not found');
    }
    expect((await client.request(`/dashboard/datasets/${theirs}/versions/ver_x`)).status).to.equal(404);
    expect((await client.request('/dashboard/no-such-page')).status).to.equal(404);
  });

  it('when a form is posted without its token or from another origin, then a 403 page answers and nothing changes', async () => {
    const { client, testKey } = await member();
    const datasetId = await newDataset(svc, testKey);
    const page = await client.request(`/dashboard/datasets/${datasetId}`);
    const csrf = DashboardClient.hidden(page.text, 'csrf');
    const accountId = DashboardClient.hidden(page.text.slice(page.text.indexOf('name="account"') - 200), 'account');

    const noToken = await client.request('/dashboard/view', { form: { account: accountId, mode: 'live' } });
    expect(noToken.status).to.equal(403);
    const foreign = await client.request('/dashboard/view', { form: { csrf, account: accountId, mode: 'live' }, headers: { origin: 'https://evil.example' } });
    expect(foreign.status).to.equal(403);
    expect((await client.request('/dashboard/datasets')).text).to.include('Test mode');

    const upload = new FormData();
    upload.set('idempotencyKey', 'a-key-of-this-form');
    upload.set('file', new Blob([CSV], { type: 'text/csv' }), 'contracts.csv');
    const refused = await client.request(`/dashboard/datasets/${datasetId}/versions`, { body: upload });
    expect(refused.status).to.equal(403);
    expect(await versionCount(datasetId)).to.equal(0);

    const signOut = await client.request('/dashboard/sign-out', { form: { csrf: 'not-the-token' } });
    expect(signOut.status).to.equal(403);
    expect((await client.request('/dashboard/datasets')).status).to.equal(200);
  });

  it('when a person switches to live mode, then they see live datasets only, and the dashboard remembers it at their next sign-in', async () => {
    const { client, email, testKey, liveKey } = await member();
    await svc.request('/v1/datasets', { key: testKey, json: { externalRef: 'test-book', name: 'Test book' } });
    await svc.request('/v1/datasets', { key: liveKey, json: { externalRef: 'live-book', name: 'Live book' } });
    const first = await client.request('/dashboard/datasets');
    expect(first.text).to.include('Test book').and.not.include('Live book');
    const csrf = DashboardClient.hidden(first.text, 'csrf');
    const accountId = /name="account" value="([^"]+)"/.exec(first.text)![1]!;
    expect((await client.request('/dashboard/view', { form: { csrf, account: accountId, mode: 'live' } })).status).to.equal(303);
    const live = await client.request('/dashboard/datasets');
    expect(live.text).to.include('Live book').and.not.include('Test book');

    const again = new DashboardClient(svc.url);
    await again.signIn(email, PASSWORD);
    expect((await again.request('/dashboard/datasets')).text).to.include('Live book').and.include('Live mode');
    // An account they are not linked to cannot be chosen.
    const stranger = await svc.account('Not theirs');
    expect((await client.request('/dashboard/view', { form: { csrf, account: stranger, mode: 'test' } })).status).to.equal(404);
  });

  it('when a person signs out, then the session ends on the server: the old cookie opens nothing', async () => {
    const { client } = await member();
    const page = await client.request('/dashboard/datasets');
    expect(page.status).to.equal(200);
    const oldCookies = new Map(client.cookies);
    const out = await client.request('/dashboard/sign-out', { form: { csrf: DashboardClient.hidden(page.text, 'csrf') } });
    expect(out.status).to.equal(303);
    const replayed = new DashboardClient(svc.url);
    for (const [k, v] of oldCookies) replayed.cookies.set(k, v);
    const after = await replayed.request('/dashboard/datasets');
    expect(after.status).to.equal(303);
    expect(after.location).to.equal('/dashboard/sign-in');
  });

  it('when the upload form is sent twice with the same file, then one version is made and both lead to it; with another file, nothing runs', async () => {
    const { client, testKey } = await member();
    const datasetId = await newDataset(svc, testKey);
    const page = await client.request(`/dashboard/datasets/${datasetId}`);
    const csrf = DashboardClient.hidden(page.text, 'csrf');
    const key = DashboardClient.hidden(page.text, 'idempotencyKey');
    const send = (csv: string) => {
      const form = new FormData();
      form.set('csrf', csrf);
      form.set('idempotencyKey', key);
      form.set('file', new Blob([csv], { type: 'text/csv' }), 'contracts.csv');
      return client.request(`/dashboard/datasets/${datasetId}/versions`, { body: form });
    };
    const first = await send(CSV);
    expect(first.status, first.text).to.equal(303);
    const dataset = await svc.request(`/v1/datasets/${datasetId}`, { key: testKey });
    const versionId = dataset.json.activeVersionId;
    expect(versionId).to.match(/^ver_/);
    expect(first.location).to.equal(`/dashboard/datasets/${datasetId}?uploaded=${versionId}`);
    // The version is the API's: the same as POST …/versions makes.
    const version = await svc.request(`/v1/datasets/${datasetId}/versions/${versionId}`, { key: testKey });
    expect(version.json).to.include({ status: 'active', rowCount: 2, contributingRowCount: 2 });

    const second = await send(CSV);
    expect(second.status).to.equal(303);
    expect(second.location).to.equal(`/dashboard/datasets/${datasetId}/versions/${versionId}`);
    const reused = await send(CSV.replace('1200.00', '1300.00'));
    expect(reused.status).to.equal(422);
    expect(await versionCount(datasetId)).to.equal(1);
  });

  it('when a file with bad rows is uploaded through the form, then the version fails and its page lists the row errors and offers the rejected rows', async () => {
    const { client, testKey } = await member();
    const datasetId = await newDataset(svc, testKey);
    const page = await client.request(`/dashboard/datasets/${datasetId}`);
    const form = new FormData();
    form.set('csrf', DashboardClient.hidden(page.text, 'csrf'));
    form.set('idempotencyKey', DashboardClient.hidden(page.text, 'idempotencyKey'));
    form.set('file', new Blob([`${HEADER}\nC-1,,Pro,2024-13-01,2024-12-31,12.00,EUR\n`], { type: 'text/csv' }), 'bad.csv');
    const sent = await client.request(`/dashboard/datasets/${datasetId}/versions`, { body: form });
    expect(sent.status).to.equal(303);
    expect(sent.location).to.match(new RegExp(`^/dashboard/datasets/${datasetId}/versions/ver_`));
    const versionPage = await client.request(sent.location!);
    expect(versionPage.text).to.include('failed').and.include('not_a_date').and.include('required');
    const rejected = await client.request(`${sent.location}/rejected-rows.csv`);
    expect(rejected.status).to.equal(200);
    expect(rejected.headers.get('content-disposition')).to.match(/attachment/);
    expect(rejected.text.split('\r\n')[0]).to.match(/^rejectedRow,problems,contractId,customer/);
    // Nothing else of the dataset changed.
    expect((await svc.request(`/v1/datasets/${datasetId}`, { key: testKey })).json.activeVersionId).to.equal(null);
  });

  it('when an export is asked for on a dataset page, then its file downloads in the contract columns', async () => {
    const { client, testKey } = await member();
    const datasetId = await newDataset(svc, testKey);
    expect((await postCsv(svc, testKey, datasetId, CSV, { wait: 30 })).status).to.equal(201);
    const page = await client.request(`/dashboard/datasets/${datasetId}`);
    expect(page.text).to.include('Download CSV');
    const asked = await client.request(`/dashboard/datasets/${datasetId}/exports`, { form: { csrf: DashboardClient.hidden(page.text, 'csrf'), format: 'csv' } });
    expect(asked.status).to.equal(303);
    expect(asked.location).to.match(/\/exports\/exp_\w+\/download$/);
    const file = await client.request(asked.location!);
    expect(file.status).to.equal(200);
    expect(file.text.split('\n')[0]).to.equal(HEADER);
    expect(file.text).to.include('Globex');
  });
});
