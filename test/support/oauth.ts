// Drives the person's side of the OAuth flow over plain HTTP, as a browser would: follows
// redirects, keeps cookies, reads the forms of the sign-in and consent pages and submits them.
import { expect } from 'chai';
import { request } from 'node:http';

export type Page = { status: number; url: string; html: string };

export type Person = { email: string; password: string; signUp?: boolean; invitationCode?: string };

export type Approval = {
  person: Person;
  /** The account to choose (its id); the first one offered when omitted. */
  account?: string;
  decision?: 'allow' | 'deny';
};

type Answer = { status: number; location: string | null; setCookies: string[]; text: string };

/** One HTTP exchange from a given local address (the loopback has all of 127.0.0.0/8), as fetch cannot. */
function sendFrom(localAddress: string, url: string, method: string, headers: Record<string, string>, body: string | undefined): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = request(url, { method, headers: { ...headers, ...(body !== undefined && { 'content-length': String(Buffer.byteLength(body)) }) }, localAddress }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () =>
        resolve({ status: res.statusCode ?? 0, location: res.headers.location ?? null, setCookies: res.headers['set-cookie'] ?? [], text: Buffer.concat(chunks).toString('utf8') }),
      );
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(body);
  });
}

async function send(url: string, method: string, headers: Record<string, string>, body: string | undefined): Promise<Answer> {
  const res = await fetch(url, { method, headers, redirect: 'manual', ...(body !== undefined && { body }) });
  return { status: res.status, location: res.headers.get('location'), setCookies: res.headers.getSetCookie(), text: await res.text() };
}

export class PageBrowser {
  private readonly cookies = new Map<string, string>();
  private readonly origin: string;
  private readonly localAddress: string | undefined;

  /** localAddress: the address the browser's requests come from (e.g. 127.0.0.2), else the system's choice. */
  constructor(origin: string, options: { localAddress?: string } = {}) {
    this.origin = origin;
    this.localAddress = options.localAddress;
  }

  /** Requests `url`, following redirects while they stay on the service; stops at the first page
   * of the service or the first redirect that leaves it (the client's redirect_uri). */
  async go(url: string, init: { method?: string; form?: Record<string, string> } = {}): Promise<Page> {
    let target = new URL(url, this.origin).href;
    let method = init.method ?? 'GET';
    let body: string | undefined = init.form ? new URLSearchParams(init.form).toString() : undefined;
    for (let hops = 0; hops < 10; hops++) {
      if (!target.startsWith(this.origin)) return { status: 303, url: target, html: '' };
      const headers: Record<string, string> = { cookie: [...this.cookies].map(([k, v]) => `${k}=${v}`).join('; ') };
      if (body !== undefined) {
        headers['content-type'] = 'application/x-www-form-urlencoded';
        headers['origin'] = this.origin;
      }
      const res = this.localAddress ? await sendFrom(this.localAddress, target, method, headers, body) : await send(target, method, headers, body);
      for (const cookie of res.setCookies) {
        const [pair] = cookie.split(';');
        const eq = pair!.indexOf('=');
        const name = pair!.slice(0, eq);
        const value = pair!.slice(eq + 1);
        if (/expires=Thu, 01 Jan 1970/i.test(cookie) || value === '') this.cookies.delete(name);
        else this.cookies.set(name, value);
      }
      const location = res.location;
      if (res.status >= 300 && res.status < 400 && location) {
        target = new URL(location, target).href;
        method = 'GET';
        body = undefined;
        continue;
      }
      return { status: res.status, url: target, html: res.text };
    }
    throw new Error('too many redirects');
  }

  /** A cookie's value, as this browser holds it. */
  cookie(name: string): string | undefined {
    return this.cookies.get(name);
  }

  /** Submits the page's form (the one posting to `action` ending), with the page's CSRF token. */
  submit(page: Page, actionEnd: string, fields: Record<string, string>): Promise<Page> {
    const action = [...page.html.matchAll(/<form method="post" action="([^"]+)"/g)].map((m) => decode(m[1]!)).find((a) => a.endsWith(actionEnd));
    if (!action) throw new Error(`no form posting to …${actionEnd} on ${page.url}:\n${page.html}`);
    const csrf = decode(/name="csrf" value="([^"]+)"/.exec(page.html)?.[1] ?? '');
    return this.go(action, { method: 'POST', form: { csrf, ...fields } });
  }

  /** Signs in or up, chooses the account and decides; returns where the browser was sent. */
  async approve(authorizationUrl: string, { person, account, decision = 'allow' }: Approval): Promise<Page> {
    let page = await this.go(authorizationUrl);
    if (page.html.includes('Sign in to continue')) {
      if (person.signUp) {
        page = await this.go(decode(/href="([^"]+signup=1)"/.exec(page.html)![1]!));
        page = await this.submit(page, '/signup', { email: person.email, password: person.password, invitationCode: person.invitationCode ?? '' });
      } else {
        page = await this.submit(page, '/login', { email: person.email, password: person.password });
      }
    }
    if (!page.html.includes('name="decision"')) return page;
    const offered = accountsOffered(page);
    return this.submit(page, '/consent', { decision, account: account ?? offered[0] ?? '' });
  }
}

export const accountsOffered = (page: Page) => [...page.html.matchAll(/name="account" value="([^"]+)"/g)].map((m) => decode(m[1]!));

const decode = (s: string) => s.replace(/&amp;/g, '&').replace(/&quot;/g, '"').replace(/&#39;/g, "'").replace(/&lt;/g, '<').replace(/&gt;/g, '>');

/** The code (and the rest of the query) the client received at its redirect URI. */
export function callbackParams(page: Page, redirectUri: string): URLSearchParams {
  expect(page.url.startsWith(redirectUri), `expected a redirect to the client, got ${page.status} ${page.url}\n${page.html.slice(0, 2000)}`).to.equal(true);
  return new URL(page.url).searchParams;
}
