// Where webhooks may go (contract, "Events and webhooks", URLs): never to a loopback, private,
// link-local or unique-local address in any of its written forms; test-mode endpoints too,
// except on a development instance (its BASE_URL a loopback address).
import { expect } from 'chai';
import { lookup } from 'node:dns/promises';
import { createServer, type AddressInfo } from 'node:net';
import { hostname } from 'node:os';
import { isLoopbackHost, isPublicAddress } from '../shared/platform/addresses.ts';
import { eventually } from './support/eventually.ts';
import { newDataset } from './support/ingest.ts';
import { useService } from './support/service.ts';

/** 127.0.0.1, 10.0.0.1 and 169.254.169.254 as each IPv6 form that carries an IPv4 address. */
const WRAPPED_PRIVATE = [
  '::ffff:7f00:1', // IPv4-mapped
  '::ffff:127.0.0.1',
  '::7f00:1', // IPv4-compatible
  '::127.0.0.1',
  '::ffff:0:7f00:1', // SIIT
  '::ffff:0:a00:1',
  '64:ff9b::7f00:1', // NAT64, well-known prefix
  '64:ff9b::a9fe:a9fe',
  '2002:7f00:1::1', // 6to4
  '2002:a00:1::',
  '2002:a9fe:a9fe::1',
];
/** Refused whole: the local-use NAT64 prefix and Teredo, whatever they carry. */
const REFUSED_PREFIXES = ['64:ff9b:1::808:808', '64:ff9b:1::a00:1', '2001::1', '2001:0:4136:e378:8000:63bf:3fff:fdd2'];
const OTHER_PRIVATE = ['127.0.0.1', '10.1.2.3', '172.16.0.1', '192.168.1.1', '169.254.169.254', '100.64.0.1', '::1', '::', 'fd00::1', 'fe80::1', 'ff02::1', '2001:db8::1'];
const PUBLIC = ['8.8.8.8', '::ffff:8.8.8.8', '64:ff9b::808:808', '2002:808:808::1', '2606:4700:4700::1111', '2a00:1450:4001:80b::200e'];

describe('webhook addresses', () => {
  it('when an IPv6 address carries a private or loopback IPv4 address in any form, or is in a prefix refused whole, then it is not public', () => {
    for (const ip of [...WRAPPED_PRIVATE, ...REFUSED_PREFIXES, ...OTHER_PRIVATE]) expect(isPublicAddress(ip), ip).to.equal(false);
    for (const ip of PUBLIC) expect(isPublicAddress(ip), ip).to.equal(true);
  });

  it('when a URL host is localhost or a loopback address in any form, then it is a loopback host (a development instance)', () => {
    for (const host of ['localhost', 'app.localhost', '127.0.0.1', '127.1.2.3', '[::1]', '[::ffff:7f00:1]', '[0:0:0:0:0:0:0:1]']) expect(isLoopbackHost(host), host).to.equal(true);
    for (const host of ['example.com', '10.0.0.1', '[fd00::1]', '[::2]', 'localhost.example.com']) expect(isLoopbackHost(host), host).to.equal(false);
  });

  describe('on a production instance (BASE_URL not a loopback address)', () => {
    const svc = useService({ env: { BASE_URL: 'https://datasets.example.com', WEBHOOK_RETRY_DELAYS: '0.3', WEBHOOK_TIMEOUT_MS: '1500' } });

    const create = (key: string, url: string) => svc.request('/v1/webhook-endpoints', { key, json: { url, events: ['*'] } });
    const expectRefused = (reply: { status: number; text: string; json: any }, url: string) => {
      expect(reply.status, `${url}: ${reply.text}`).to.equal(400);
      expect(reply.json.type).to.equal(`${svc.config.errorsBase}/bad-request`);
      expect(reply.json.errors[0].field).to.equal('url');
    };

    it('when a test-mode or live endpoint is made or changed to point at a private or loopback address, in any form, then it is refused with 400 bad-request', async function () {
      this.timeout(60_000);
      expect(svc.config.developmentInstance).to.equal(false);
      const { accountId, key } = await svc.tenant();
      const liveKey = await svc.key(accountId, 'live');
      const literals = [...WRAPPED_PRIVATE, ...REFUSED_PREFIXES, ...OTHER_PRIVATE].map((ip) => (ip.includes(':') ? `[${ip}]` : ip));
      for (const host of [...literals, 'localhost', 'hooks.localhost']) {
        expectRefused(await create(key, `http://${host}:8080/hook`), `test http://${host}`);
        expectRefused(await create(liveKey, `https://${host}/hook`), `live https://${host}`);
      }
      // The forms URL parsers accept for 127.0.0.1.
      for (const url of ['http://2130706433/x', 'http://0x7f000001/x', 'http://127.1/x', 'http://[0:0:0:0:0:ffff:127.0.0.1]/x']) expectRefused(await create(key, url), url);

      const made = await create(key, 'http://hooks.example.com/dataset-service');
      expect(made.status, made.text).to.equal(201);
      const patched = await svc.request(`/v1/webhook-endpoints/${made.json.id}`, { key, method: 'PATCH', json: { url: 'http://[::ffff:a9fe:a9fe]/latest' } });
      expectRefused(patched, 'PATCH to the metadata address');
      expect((await create(liveKey, 'https://[2606:4700:4700::1111]/hook')).status).to.equal(201);
    });

    it('when a test-mode endpoint names a host that resolves to a private address, then its delivery is refused after resolving, without connecting', async function () {
      this.timeout(30_000);
      const { key } = await svc.tenant();
      const name = hostname();
      const resolved = await lookup(name);
      expect(isPublicAddress(resolved.address), `${name} resolves to ${resolved.address}`).to.equal(false);
      let connections = 0;
      const trap = createServer((socket) => {
        connections++;
        socket.destroy();
      });
      await new Promise<void>((r) => trap.listen(0, resolved.address, r));
      try {
        const port = (trap.address() as AddressInfo).port;
        const made = await create(key, `http://${name}:${port}/hook`);
        expect(made.status, made.text).to.equal(201);
        await newDataset(svc, key);
        const { rows } = await eventually(
          () => svc.db.query(`SELECT a.error FROM webhook_attempts a JOIN webhook_deliveries d ON d.id = a.delivery_id WHERE d.endpoint_id = $1`, [made.json.id]),
          (r) => r.rows.length > 0,
        );
        expect(rows[0].error).to.match(/resolves to .*never sent to \(loopback, private/);
        expect(connections).to.equal(0);
      } finally {
        trap.close();
      }
    });
  });

  describe('on a development instance (BASE_URL a loopback address)', () => {
    const svc = useService();

    it('when a test-mode endpoint points at a loopback address, then it is taken; a live one still is not', async () => {
      expect(svc.config.developmentInstance).to.equal(true);
      const { accountId, key } = await svc.tenant();
      const liveKey = await svc.key(accountId, 'live');
      for (const url of ['http://127.0.0.1:9/hook', 'http://localhost:9/hook', 'http://[::ffff:7f00:1]:9/hook']) {
        const reply = await svc.request('/v1/webhook-endpoints', { key, json: { url, events: ['*'] } });
        expect(reply.status, `${url}: ${reply.text}`).to.equal(201);
      }
      for (const ip of ['::7f00:1', '::ffff:0:7f00:1', '64:ff9b:1::a00:1', '2002:7f00:1::1', '2001::1']) {
        const reply = await svc.request('/v1/webhook-endpoints', { key: liveKey, json: { url: `https://[${ip}]/hook`, events: ['*'] } });
        expect(reply.status, ip).to.equal(400);
      }
    });
  });
});
