// What the browser tests share: Debian's Chromium driven by playwright-core (with the flags this
// machine needs), and the page a client program's redirect lands on.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { chromium, type Browser } from 'playwright-core';

const CHROMIUM = process.env['CHROMIUM_PATH'] ?? '/usr/bin/chromium';

export function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-quic', '--no-first-run', '--disable-component-update', '--disable-sync'],
  });
}

/** The client application's own page, where the browser lands with the code: its server and redirect URI. */
export async function startClientPage(): Promise<{ server: Server; redirectUri: string }> {
  const server = createServer((_req, res) => res.writeHead(200, { 'content-type': 'text/html' }).end('<!doctype html><title>Client</title><h1>Connected</h1>'));
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { server, redirectUri: `http://127.0.0.1:${(server.address() as AddressInfo).port}/callback` };
}
