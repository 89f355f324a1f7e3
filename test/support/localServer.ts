// An HTTP server of a test's own (a proxy, a receiver) on a free loopback port: started, its
// address, and stopped with every connection cut.
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export async function listenLocally(server: Server): Promise<void> {
  server.listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
}

export const localUrl = (server: Server): string => `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

export async function closeNow(server: Server): Promise<void> {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
}
