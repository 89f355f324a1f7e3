// The HTTP side of a webhook delivery: one POST, no redirects followed (a 3xx is a failure), the
// whole exchange within the timeout. Every address the host resolves to must be public
// (shared/platform/addresses.ts), checked at connect time on the addresses actually used, so that
// a name re-pointed at an internal address after the endpoint was made (DNS rebinding) is
// refused; only test-mode deliveries of a development instance go anywhere. Connections are kept
// alive between deliveries.
import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { Agent as HttpAgent, request as httpRequest } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import { isIP, type LookupFunction } from 'node:net';
import { isPublicAddress } from '../shared/platform/addresses.ts';

export class AddressRefused extends Error {
  constructor(host: string, address: string) {
    super(`${host} resolves to ${address}, which webhooks are never sent to (loopback, private, link-local or unique-local)`);
    this.name = 'AddressRefused';
  }
}

/** A DNS lookup that fails when any address of the host is not public. */
const publicOnlyLookup: LookupFunction = (hostname, options, callback) => {
  dnsLookup(hostname, { ...options, all: true }, (error, addresses: LookupAddress[]) => {
    if (error) return callback(error, '', 0);
    const refused = addresses.find((a) => !isPublicAddress(a.address));
    if (refused) return callback(new AddressRefused(hostname, refused.address), '', 0);
    if ((options as { all?: boolean }).all) return (callback as unknown as (e: null, a: LookupAddress[]) => void)(null, addresses);
    callback(null, addresses[0]!.address, addresses[0]!.family);
  });
};

export type PostResult = { status: number; durationMs: number } | { error: string; durationMs: number };

export class WebhookPoster {
  private readonly timeoutMs: number;
  private readonly agents: { live: { http: HttpAgent; https: HttpsAgent }; test: { http: HttpAgent; https: HttpsAgent } };
  private readonly testAnywhere: boolean;

  /** developmentInstance: test-mode deliveries may go to any address (config.ts). */
  constructor(options: { timeoutMs: number; maxSockets: number; developmentInstance: boolean }) {
    this.timeoutMs = options.timeoutMs;
    this.testAnywhere = options.developmentInstance;
    const agent = (lookup?: LookupFunction) => ({
      http: new HttpAgent({ keepAlive: true, maxSockets: options.maxSockets, ...(lookup && { lookup }) }),
      https: new HttpsAgent({ keepAlive: true, maxSockets: options.maxSockets, ...(lookup && { lookup }) }),
    });
    this.agents = { live: agent(publicOnlyLookup), test: this.testAnywhere ? agent() : agent(publicOnlyLookup) };
  }

  post(url: string, body: string, headers: Record<string, string>, mode: 'test' | 'live'): Promise<PostResult> {
    const started = performance.now();
    const elapsed = () => performance.now() - started;
    return new Promise((resolve) => {
      let settled = false;
      const settle = (result: PostResult) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        resolve(result);
      };
      let target: URL;
      try {
        target = new URL(url);
      } catch {
        return settle({ error: 'the endpoint URL is not valid', durationMs: 0 });
      }
      const https = target.protocol === 'https:';
      if (mode === 'live' && !https) return settle({ error: 'a live endpoint must use https', durationMs: 0 });
      if (mode === 'live' || !this.testAnywhere) {
        const host = target.hostname.replace(/^\[|\]$/g, '');
        // A literal address is not looked up: check it here.
        if (isIP(host) !== 0 && !isPublicAddress(host)) return settle({ error: new AddressRefused(host, host).message, durationMs: 0 });
      }
      const agents = this.agents[mode];
      const req = (https ? httpsRequest : httpRequest)(
        target,
        {
          method: 'POST',
          agent: https ? agents.https : agents.http,
          headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body), 'user-agent': 'dataset-service-webhooks/1', ...headers },
        },
        (res) => {
          // The body is read (so the connection can be kept) but not kept.
          res.on('data', () => {});
          res.on('end', () => settle({ status: res.statusCode ?? 0, durationMs: elapsed() }));
          res.on('error', (error) => settle({ error: error.message, durationMs: elapsed() }));
        },
      );
      const timer = setTimeout(() => {
        settle({ error: `no answer within ${this.timeoutMs} ms`, durationMs: elapsed() });
        req.destroy();
      }, this.timeoutMs);
      req.on('error', (error) => settle({ error: error.message, durationMs: elapsed() }));
      req.end(body);
    });
  }

  close(): void {
    for (const pair of Object.values(this.agents)) {
      pair.http.destroy();
      pair.https.destroy();
    }
  }
}
