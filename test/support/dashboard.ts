// What the dashboard's tests share: a small contract file with two currencies, churn, expansion
// and a returning customer; and a browser-less client that keeps the dashboard's cookies and
// reads its forms, for the HTTP-level tests.
import { HEADER } from './ingest.ts';

const pad = (n: number) => String(n).padStart(2, '0');
/** `months` after 2024-01, as YYYY-MM. */
const monthAfter = (months: number) => `${2024 + Math.floor(months / 12)}-${pad((months % 12) + 1)}`;
const lastDay = (month: string) => {
  const [y, m] = month.split('-').map(Number) as [number, number];
  return `${month}-${pad(new Date(Date.UTC(y, m, 0)).getUTCDate())}`;
};

/**
 * Forty customers over two years in EUR and USD: each starts in one of the first twelve months
 * with a year's contract; most renew, some for more (expansion) or less (contraction), some leave
 * (churn), and one comes back after a gap (reactivation).
 */
export function dashboardContractsCsv(): string {
  const lines = [HEADER];
  let id = 0;
  const contract = (customer: string, currency: string, fromMonth: number, months: number, monthly: number) =>
    lines.push(`C-${++id},${customer},Pro,${monthAfter(fromMonth)}-01,${lastDay(monthAfter(fromMonth + months - 1))},${(monthly * months).toFixed(2)},${currency}`);
  for (let k = 0; k < 40; k++) {
    const customer = `Customer ${String(k).padStart(2, '0')}`;
    const currency = k % 3 === 0 ? 'USD' : 'EUR';
    const start = k % 12;
    const monthly = 100 + 25 * (k % 7);
    contract(customer, currency, start, 12, monthly);
    if (k % 5 === 0) continue; // churns after a year
    const renewal = k % 4 === 0 ? monthly * 1.5 : k % 7 === 3 ? monthly * 0.8 : monthly;
    contract(customer, currency, start + 12, 12, renewal);
  }
  // A customer who left and comes back (reactivation).
  contract('Customer 05', 'EUR', 16, 6, 140);
  return `${lines.join('\n')}\n`;
}

export type Answer = { status: number; headers: Headers; text: string; location: string | null };

/** A browser-less visitor of the dashboard: keeps cookies, follows nothing by itself, reads hidden fields. */
export class DashboardClient {
  readonly cookies = new Map<string, string>();
  readonly baseUrl: string;

  constructor(baseUrl: string) {
    this.baseUrl = baseUrl;
  }

  private cookieHeader(): string {
    return [...this.cookies].map(([k, v]) => `${k}=${v}`).join('; ');
  }

  async request(path: string, init: { method?: string; form?: Record<string, string>; body?: FormData; headers?: Record<string, string> } = {}): Promise<Answer> {
    const headers: Record<string, string> = { cookie: this.cookieHeader(), ...init.headers };
    let body: string | FormData | undefined;
    if (init.form) {
      headers['content-type'] = 'application/x-www-form-urlencoded';
      body = new URLSearchParams(init.form).toString();
    } else if (init.body) body = init.body;
    const res = await fetch(this.baseUrl + path, { method: init.method ?? (body ? 'POST' : 'GET'), headers, redirect: 'manual', ...(body !== undefined && { body }) });
    for (const line of res.headers.getSetCookie()) {
      const [pair = ''] = line.split(';');
      const at = pair.indexOf('=');
      const name = pair.slice(0, at);
      const value = pair.slice(at + 1);
      if (/Max-Age=0/i.test(line) || value === '') this.cookies.delete(name);
      else this.cookies.set(name, value);
    }
    return { status: res.status, headers: res.headers, text: await res.text(), location: res.headers.get('location') };
  }

  /** The value of the hidden field `name` on a page (the first one). */
  static hidden(html: string, name: string): string {
    const match = new RegExp(`name="${name}" value="([^"]*)"`).exec(html);
    if (!match) throw new Error(`no hidden field ${name} on the page`);
    return match[1]!.replaceAll('&amp;', '&');
  }

  async signIn(email: string, password: string): Promise<Answer> {
    const form = await this.request('/dashboard/sign-in');
    return this.request('/dashboard/sign-in', { form: { csrf: DashboardClient.hidden(form.text, 'csrf'), email, password } });
  }

  async signUp(email: string, invitationCode: string, password: string): Promise<Answer> {
    const form = await this.request('/dashboard/sign-up');
    return this.request('/dashboard/sign-up', { form: { csrf: DashboardClient.hidden(form.text, 'csrf'), email, invitationCode, password } });
  }
}
