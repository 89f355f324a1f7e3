// A real webhook receiver for tests: an HTTP server on a free port that verifies each delivery's
// signature with the standardwebhooks package (as a user's program would) and records it. What it
// answers is up to the test, per path and per attempt.
import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';

export type Received = { path: string; headers: Record<string, string>; body: string; event: { id: string; type: string; mode: string; data: { object: any } } };
export type Answer = { status: number; delayMs?: number; headers?: Record<string, string> };

export class WebhookReceiver {
  readonly received: Received[] = [];
  /** Deliveries whose signature did not verify with the endpoint's secret (must stay empty). */
  readonly unverified: string[] = [];
  private readonly server: Server;
  private readonly secrets = new Map<string, string>();
  private readonly answers = new Map<string, (attempt: number) => Answer>();
  private readonly attempts = new Map<string, number>();

  constructor() {
    this.server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const path = req.url ?? '/';
        const body = Buffer.concat(chunks).toString('utf8');
        const headers = Object.fromEntries(Object.entries(req.headers).map(([k, v]) => [k, String(v)]));
        const secret = this.secrets.get(path);
        try {
          if (!secret) throw new Error('no secret for this path');
          new Webhook(secret).verify(body, headers);
        } catch (error) {
          this.unverified.push(`${path}: ${(error as Error).message}`);
        }
        const attempt = (this.attempts.get(path) ?? 0) + 1;
        this.attempts.set(path, attempt);
        this.received.push({ path, headers, body, event: JSON.parse(body) });
        const answer = this.answers.get(path)?.(attempt) ?? { status: 200 };
        setTimeout(() => {
          if (res.destroyed) return;
          res.writeHead(answer.status, answer.headers).end('ok');
        }, answer.delayMs ?? 0);
      });
    });
  }

  async start(): Promise<this> {
    this.server.listen(0, '127.0.0.1');
    await once(this.server, 'listening');
    return this;
  }

  url(path: string): string {
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}${path}`;
  }

  /** The endpoint's secret, to verify what comes to `path`; and how `path` answers each attempt. */
  expect(path: string, secret: string, answer?: (attempt: number) => Answer): void {
    this.secrets.set(path, secret);
    if (answer) this.answers.set(path, answer);
  }

  at(path: string): Received[] {
    return this.received.filter((r) => r.path === path);
  }

  async stop(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise((resolve) => this.server.close(resolve));
  }
}
