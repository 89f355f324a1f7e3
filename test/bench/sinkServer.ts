// The ceiling for `bench upload`: a bare Node HTTP server that reads a request body and drops it.
import { createServer } from 'node:http';

const server = createServer((req, res) => {
  if (req.url === '/healthz') return void res.end('ok');
  req.on('data', () => {});
  req.on('end', () => res.end());
});
server.listen(Number(process.env['PORT']), '127.0.0.1');
process.on('SIGTERM', () => {
  server.close(() => process.exit(0));
  server.closeAllConnections();
});
