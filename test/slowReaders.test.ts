// A slow reader costs only its own request (contract, "Sharing the service fairly"): downloads,
// rejected rows and replayed 422s whose clients read nothing, and resumable uploads whose clients
// send a byte and stop, hold no database connection, lock or pooled slot that other requests need.
// Real HTTP on raw sockets that stop reading (the kernel's buffers fill, the service waits on them).
import { connect, type Socket } from 'node:net';
import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import { contractsCsv } from './support/contracts.ts';
import { eventually } from './support/eventually.ts';
import { HEADER, newDataset, postCsv } from './support/ingest.ts';
import { useService } from './support/service.ts';

// Short, so that the test waits little for the cut, yet far longer than the reads below take
// while every stalled answer still waits on its client (checked: they are all still open after).
const STALL_TIMEOUT_MS = 6_000;

/**
 * Sends a request on a socket of its own and then reads nothing of the answer: the socket is
 * paused, so once the kernel's buffers are full the service's writes wait on it.
 */
function stalledRequest(url: string, options: { method?: string; headers?: Record<string, string>; body?: Buffer } = {}): Promise<Socket> {
  const target = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(target.port), target.hostname, () => {
      // A Content-Length given is kept (a body announced longer than what is sent: a trickle).
      const headers = { host: target.host, ...(options.body && { 'content-length': String(options.body.length) }), ...options.headers };
      const head = `${options.method ?? 'GET'} ${target.pathname}${target.search} HTTP/1.1\r\n${Object.entries(headers)
        .map(([name, value]) => `${name}: ${value}\r\n`)
        .join('')}\r\n`;
      socket.write(head);
      if (options.body) socket.write(options.body);
      socket.pause();
      resolve(socket);
    });
    socket.on('error', () => {}); // cut by the service, in the end
    socket.once('error', reject);
  });
}

const openConnections = (server: { getConnections(cb: (error: Error | null, count: number) => void): void }) =>
  new Promise<number>((resolve, reject) => server.getConnections((error, count) => (error ? reject(error) : resolve(count))));

describe('slow readers', () => {
  const svc = useService({ env: { CLIENT_STALL_TIMEOUT_MS: String(STALL_TIMEOUT_MS), MAX_UPLOAD_BYTES: String(64 * 1024 * 1024) } });

  it("when forty answers (downloads, rejected rows, replayed 422s) are read by nobody, then another account's reads answer at once, and the stalled ones are cut after the stall timeout", async function () {
    this.timeout(240_000);
    const noisy = await svc.tenant();
    const quiet = await svc.tenant();
    await newDataset(svc, quiet.key);

    // An export of about 17 MB: far more than the kernel's buffers hold for a reader that reads nothing.
    const good = await newDataset(svc, noisy.key);
    const built = await postCsv(svc, noisy.key, good, contractsCsv(250_000), { wait: 120 });
    expect(built.status, built.text.slice(0, 500)).to.equal(201);
    const requested = await svc.request(`/v1/datasets/${good}/exports`, { key: noisy.key, json: { format: 'csv' } });
    expect(requested.status, requested.text).to.equal(202);
    const exportPath = `/v1/datasets/${good}/exports/${requested.json.id}`;
    const ready = await eventually(() => svc.request(exportPath, { key: noisy.key }), (r) => r.json?.status === 'ready', { timeoutMs: 120_000 });
    expect(ready.json.status).to.equal('ready');

    // A file whose every row is rejected: its rejected rows (about 30 MB) and its 422 (about 19 MB of
    // errors). Each row has one problem, whose message quotes the long amount: a build's time goes
    // with its problems (150,000 short ones took 14 s), an answer's size with their bytes.
    const bad = await newDataset(svc, noisy.key);
    const badAmount = `n/a ${'-'.repeat(250)}`;
    const badFile = Buffer.from(HEADER + '\n' + Array.from({ length: 50_000 }, (_, i) => `C${i},Customer ${i},Pro,2020-01-01,2020-02-01,${badAmount},EUR\n`).join(''));
    const idempotencyKey = randomUUID();
    const failed = await postCsv(svc, noisy.key, bad, badFile, { wait: 120, idempotencyKey });
    expect(failed.status).to.equal(422);
    expect(failed.json.errors).to.have.length(50_000);
    expect(failed.text.length, 'the 422 is far more than the kernel buffers hold').to.be.above(16 * 1024 * 1024);
    const errorsPath = `/v1/datasets/${bad}/versions/${failed.json.versionId}/errors`;

    const bearer = { authorization: `Bearer ${noisy.key}` };
    // The test's own keep-alive connections, besides the stalled ones.
    const ours = await openConnections(svc.api.server);
    const stalled: Socket[] = [];
    for (let i = 0; i < 10; i++) stalled.push(await stalledRequest(`${svc.url}${exportPath}/content`, { headers: bearer }));
    for (let i = 0; i < 10; i++) stalled.push(await stalledRequest(ready.json.downloadUrl));
    for (let i = 0; i < 15; i++) stalled.push(await stalledRequest(`${svc.url}${errorsPath}`, { headers: { ...bearer, accept: 'text/csv' } }));
    for (let i = 0; i < 5; i++) {
      const headers = { ...bearer, 'content-type': 'text/csv', 'idempotency-key': idempotencyKey, prefer: 'wait=120' };
      stalled.push(await stalledRequest(`${svc.url}/v1/datasets/${bad}/versions`, { method: 'POST', headers, body: badFile }));
    }
    try {
      // Every stalled answer has begun, and waits on its client.
      await new Promise((resolve) => setTimeout(resolve, 2_000));
      for (let i = 0; i < 10; i++) {
        const started = performance.now();
        const list = await svc.request('/v1/datasets', { key: quiet.key });
        const tookMs = performance.now() - started;
        // Before: the downloads held the web process's ten connections, and this answered 503 after 5 s.
        expect(list.status, list.text).to.equal(200);
        expect(tookMs, `GET /v1/datasets took ${Math.round(tookMs)} ms`).to.be.below(1_000);
      }
      // Those reads were served while every stalled answer was still open, not after the timeout cut them.
      // (With an object store, the signed download URL is the store's own: those ten wait on it, not on the service.)
      const onService = stalled.length - (ready.json.downloadUrl.startsWith(svc.url) ? 0 : 10);
      expect(await openConnections(svc.api.server)).to.be.at.least(onService);
      // The noisy account's own reads go on too.
      expect((await svc.request(errorsPath, { key: noisy.key })).status).to.equal(200);

      // A client that takes nothing for the stall timeout has its connection closed.
      const left = await eventually(() => openConnections(svc.api.server), (n) => n <= ours + 2, { timeoutMs: STALL_TIMEOUT_MS + 20_000, everyMs: 250 });
      expect(left, 'connections still open after the stall timeout').to.be.at.most(ours + 2);
    } finally {
      for (const socket of stalled) socket.destroy();
    }
  });

  it('when fifty-one resumable uploads trickle a byte each and stop, then another upload is still taken at once', async function () {
    this.timeout(120_000);
    const tenant = await svc.tenant();
    const ds = await newDataset(svc, tenant.key);
    const newUpload = async () => {
      const made = await svc.request(`/v1/datasets/${ds}/uploads`, { key: tenant.key, json: { filename: 'contracts.csv' } });
      expect(made.status, made.text).to.equal(201);
      const endpoint = made.json.tusEndpoint as string;
      const created = await fetch(endpoint, { method: 'POST', headers: { 'tus-resumable': '1.0.0', 'upload-length': '1000' } });
      expect(created.status).to.equal(201);
      return endpoint;
    };
    const trickled: Socket[] = [];
    try {
      // Each PATCH announces 1000 bytes, sends one, and stops: its request goes on as long as its client.
      for (let i = 0; i < 51; i++) {
        const endpoint = await newUpload();
        const headers = { 'tus-resumable': '1.0.0', 'upload-offset': '0', 'content-type': 'application/offset+octet-stream', 'content-length': '1000' };
        trickled.push(await stalledRequest(endpoint, { method: 'PATCH', headers, body: Buffer.from('c') }));
      }
      await new Promise((resolve) => setTimeout(resolve, 1_000));
      const endpoint = await newUpload();
      const started = performance.now();
      const whole = await fetch(endpoint, {
        method: 'PATCH',
        headers: { 'tus-resumable': '1.0.0', 'upload-offset': '0', 'content-type': 'application/offset+octet-stream' },
        body: Buffer.alloc(1000, 'a'),
      });
      const tookMs = performance.now() - started;
      // Before: each trickled PATCH held one of the lock pool's 50 connections, and this one waited for a 51st.
      expect(whole.status, await whole.text()).to.equal(204);
      expect(tookMs, `the PATCH took ${Math.round(tookMs)} ms`).to.be.below(2_000);
    } finally {
      for (const socket of trickled) socket.destroy();
    }
  });
});
