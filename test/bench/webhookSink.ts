// The receiver for `bench events`: verifies each delivery with the standardwebhooks package (as a
// user's receiver does), answers 200, and writes one JSON line per delivery to stdout
// ({id, at}: the event id and the arrival time in ms since the epoch). SECRETS: comma-separated.
import { createServer } from 'node:http';
import { Webhook } from 'standardwebhooks';

const verifiers = (process.env['SECRETS'] ?? '').split(',').filter(Boolean).map((s) => new Webhook(s));
let bad = 0;
const server = createServer((req, res) => {
  if (req.url === '/healthz') return void res.end('ok');
  const chunks: Buffer[] = [];
  req.on('data', (c: Buffer) => chunks.push(c));
  req.on('end', () => {
    const body = Buffer.concat(chunks).toString('utf8');
    const headers = req.headers as Record<string, string>;
    if (verifiers.length > 0 && !verifiers.some((v) => { try { v.verify(body, headers); return true; } catch { return false; } })) bad++;
    res.end();
    process.stdout.write(`${JSON.stringify({ id: headers['webhook-id'], path: req.url, at: Date.now(), bad })}\n`);
  });
});
server.keepAliveTimeout = 65_000;
server.listen(Number(process.env['PORT']), '127.0.0.1');
process.on('SIGTERM', () => {
  server.close(() => process.exit(0));
  server.closeAllConnections();
});
