// The TypeScript SDK (sdk/) against the real service, as a program uses it: datasets, uploads from
// a string, a path, a stream and through the resumable endpoint, progress, waiting, typed errors,
// row errors paged and as CSV, exports, events, webhook endpoints and their signatures; and its
// retries as the spec's table says, through a proxy that drops connections and answers 503.
import { expect } from 'chai';
import { mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { createServer, request as httpRequest, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { text } from 'node:stream/consumers';
import {
  AuthenticationError,
  ConflictError,
  ConnectionError,
  DatasetService,
  IdempotencyError,
  IngestValidationError,
  NotFoundError,
  ServiceUnavailableError,
  signWebhook,
  TimeoutError,
  type UploadProgress,
  verifyWebhook,
  WebhookSignatureError,
} from '../sdk/src/index.ts';
import { CONTRACT_HEADER, contractsCsv } from './support/contracts.ts';
import { eventually } from './support/eventually.ts';
import { startService, useService } from './support/service.ts';
import { WebhookReceiver } from './support/webhookReceiver.ts';
import { closeNow, listenLocally, localUrl } from './support/localServer.ts';

const GOOD = `${CONTRACT_HEADER}c-1,Acme,Pro,2026-01-01,2026-12-31,1200.00,EUR\nc-2,Beta,Lite,2026-03-01,2026-05-31,300.00,EUR\n`;

describe('SDK', () => {
  const svc = useService({ env: { WEBHOOK_RETRY_DELAYS: '0.3,0.3,0.3', WEBHOOK_TIMEOUT_MS: '1500' } });
  let service: DatasetService;
  let dir: string;
  before(async () => {
    const { key } = await svc.tenant();
    service = new DatasetService({ apiKey: key, baseUrl: svc.url });
    dir = await mkdtemp(join(tmpdir(), 'sdk-'));
  });

  it('when a dataset is created, then it is read by id, by externalRef and in the lists; a taken externalRef is a ConflictError naming it', async () => {
    const created = await service.datasets.create({ externalRef: 'sdk-crm', name: 'CRM' }, { idempotencyKey: 'sdk-create-crm' });
    expect(created).to.include({ object: 'dataset', externalRef: 'sdk-crm', name: 'CRM' });
    // The same operation again (same key) is the same answer, not a second dataset.
    expect(await service.datasets.create({ externalRef: 'sdk-crm', name: 'CRM' }, { idempotencyKey: 'sdk-create-crm' })).to.deep.equal(created);
    expect(await service.datasets.get(created.id)).to.deep.equal(created);
    expect((await service.datasets.getByRef('sdk-crm')).id).to.equal(created.id);
    for (let i = 0; i < 3; i++) await service.datasets.create({ externalRef: `sdk-more-${i}`, name: `More ${i}` });
    const all = [];
    for await (const dataset of service.datasets.listAll({ limit: 2 })) all.push(dataset.id);
    expect(all).to.include(created.id);
    expect(all).to.have.length(4);
    expect(new Set(all).size).to.equal(4);

    const taken = await service.datasets.create({ externalRef: 'sdk-crm', name: 'Again' }).catch((e: unknown) => e);
    expect(taken).to.be.instanceOf(ConflictError);
    expect((taken as ConflictError).existingId).to.equal(created.id);
    expect((taken as ConflictError).type).to.equal('conflict');
    expect((taken as ConflictError).requestId).to.be.a('string');
    const reused = await service.datasets.create({ externalRef: 'sdk-other', name: 'Other' }, { idempotencyKey: 'sdk-create-crm' }).catch((e: unknown) => e);
    expect(reused).to.be.instanceOf(IdempotencyError);
    expect((reused as IdempotencyError).type).to.equal('idempotency-key-reused');
  });

  it('when a dataset or a key does not exist, then NotFoundError and AuthenticationError', async () => {
    const missing = await service.datasets.get('ds_nope').catch((e: unknown) => e);
    expect(missing).to.be.instanceOf(NotFoundError);
    expect((missing as NotFoundError).status).to.equal(404);
    expect((missing as NotFoundError).typeUri).to.equal(`${svc.config.errorsBase}/not-found`);
    const stranger = new DatasetService({ apiKey: 'svc_test_not_a_key', baseUrl: svc.url });
    expect(await stranger.datasets.list().catch((e: unknown) => e)).to.be.instanceOf(AuthenticationError);
    expect(await service.datasets.getByRef('no-such-ref').catch((e: unknown) => e)).to.be.instanceOf(NotFoundError);
  });

  it('when a file is uploaded from a string, a path, a stream or resumably, then each waits for the active version, reporting bytes then rows', async () => {
    const dataset = await service.datasets.create({ externalRef: 'sdk-uploads', name: 'Uploads' });
    const fromText = await service.versions.upload(dataset.id, { text: GOOD });
    expect(fromText).to.include({ status: 'active', rowCount: 2 });

    const path = join(dir, 'contracts.csv');
    await writeFile(path, contractsCsv(20_000));
    const seen: UploadProgress[] = [];
    const fromPath = await service.versions.upload(dataset.id, { path }, { onProgress: (p) => seen.push(p) });
    expect(fromPath).to.include({ status: 'active', rowCount: 20_000 });
    const size = (await readFile(path)).byteLength;
    const sent = seen.filter((p) => p.phase === 'uploading');
    expect(sent[0]).to.deep.equal({ phase: 'uploading', bytesSent: 0, bytesTotal: size });
    expect(sent.at(-1)).to.deep.equal({ phase: 'uploading', bytesSent: size, bytesTotal: size });
    const built = seen.filter((p) => p.phase === 'building');
    expect(built.at(-1)).to.include({ phase: 'building', versionId: fromPath.id, rowsProcessed: 20_000 });
    expect(seen.findIndex((p) => p.phase === 'building')).to.be.greaterThan(seen.lastIndexOf(sent.at(-1)!));

    const fromStream = await service.versions.upload(dataset.id, { stream: Readable.from([Buffer.from(GOOD)]) });
    expect(fromStream).to.include({ status: 'active', rowCount: 2 });

    const resumableSeen: UploadProgress[] = [];
    const resumed = await service.versions.upload(dataset.id, { path }, { resumable: true, onProgress: (p) => resumableSeen.push(p) });
    expect(resumed).to.include({ status: 'active', rowCount: 20_000 });
    expect(resumableSeen.filter((p) => p.phase === 'uploading').at(-1)).to.deep.equal({ phase: 'uploading', bytesSent: size, bytesTotal: size });
    const { rows } = await svc.db.query('SELECT upload_id FROM versions WHERE id = $1', [resumed.id]);
    expect(rows[0].upload_id, 'sent through an upload').to.match(/^upl_/);

    const metrics = await service.datasets.metrics(dataset.id);
    expect(metrics).to.include({ object: 'metrics', versionId: resumed.id });
    expect(metrics.rows.total).to.equal(20_000);
    const catalog = await service.datasets.catalog(dataset.id);
    expect(catalog).to.include({ object: 'catalog', rowCount: 20_000 });
    const versions = [];
    for await (const version of service.versions.listAll(dataset.id, { limit: 2 })) versions.push(version.id);
    expect(versions).to.deep.equal([resumed.id, fromStream.id, fromPath.id, fromText.id]);
  });

  it('when rows are invalid, then IngestValidationError with the first errors and the count; every error pages through, and the rejected rows come as CSV', async () => {
    const dataset = await service.datasets.create({ externalRef: 'sdk-bad', name: 'Bad rows' });
    const failure = await service.versions.upload(dataset.id, { text: contractsCsv(3000, { badEvery: 10 }) }).catch((e: unknown) => e);
    expect(failure).to.be.instanceOf(IngestValidationError);
    const invalid = failure as IngestValidationError;
    expect(invalid.type).to.equal('ingest-validation-failed');
    expect(invalid.errorCount).to.equal(300);
    expect(invalid.errors).to.have.length(100);
    expect(invalid.errors[0]).to.deep.include({ row: 11, field: 'amount', code: 'not_a_number' });
    expect(invalid.versionId).to.match(/^ver_/);
    const every = [];
    for await (const error of service.versions.listAllErrors(dataset.id, invalid.versionId!)) every.push(error.row);
    expect(every).to.have.length(300);
    expect(every.at(-1)).to.equal(3001);
    const csv = await text(await service.versions.rejectedRows(dataset.id, invalid.versionId!));
    expect(csv.split('\n').filter(Boolean)).to.have.length(301);
    expect(csv).to.include('n/a');
    const failed = await service.versions.get(dataset.id, invalid.versionId!);
    expect(failed.status).to.equal('failed');
    // Nothing was written: the dataset still has no active version.
    expect(await service.datasets.metrics(dataset.id).catch((e: unknown) => e)).to.be.instanceOf(NotFoundError);
  });

  it('when an export is requested, then it is waited for and downloaded as a stream, in CSV and JSON Lines', async () => {
    const dataset = await service.datasets.create({ externalRef: 'sdk-export', name: 'Export' });
    await service.versions.upload(dataset.id, { text: GOOD });
    const csv = await service.exports.create(dataset.id, { format: 'csv' });
    expect(csv.status).to.be.oneOf(['queued', 'building', 'ready']);
    expect(await service.exports.wait(dataset.id, csv.id)).to.include({ status: 'ready', rowCount: 2 });
    const csvText = await text(await service.exports.download(dataset.id, csv.id));
    expect(csvText).to.match(/^contractId,/).and.include('c-2');
    const jsonl = await service.exports.wait(dataset.id, (await service.exports.create(dataset.id, { format: 'jsonl' })).id);
    const path = join(dir, 'export.jsonl');
    await service.exports.downloadTo(dataset.id, jsonl.id, path);
    const lines = (await readFile(path, 'utf8')).trim().split('\n').map((l) => JSON.parse(l));
    expect(lines.map((l) => l.contractId)).to.have.members(['c-1', 'c-2']);
  });

  it('when a webhook endpoint is made, then its deliveries verify with verifyWebhook, and a changed body or an old timestamp does not', async () => {
    const receiver = await new WebhookReceiver().start();
    try {
      const endpoint = await service.webhookEndpoints.create({ url: receiver.url('/sdk'), events: ['dataset.created'] });
      receiver.expect('/sdk', endpoint.secret);
      expect(endpoint.secret).to.match(/^whsec_/);
      expect((await service.webhookEndpoints.get(endpoint.id)).url).to.equal(receiver.url('/sdk'));
      const dataset = await service.datasets.create({ externalRef: 'sdk-hooked', name: 'Hooked' });
      const [delivery] = await eventually(() => receiver.at('/sdk').filter((r) => r.event.data.object.id === dataset.id), (l) => l.length === 1);
      const event = verifyWebhook(delivery!.body, delivery!.headers, endpoint.secret);
      expect(event).to.include({ type: 'dataset.created', object: 'event' });
      expect((await service.events.get(event.id)).id).to.equal(event.id);
      const listed = [];
      for await (const e of service.events.listAll({ type: 'dataset.created' })) listed.push(e.id);
      expect(listed).to.include(event.id);

      expect(() => verifyWebhook(delivery!.body.replace('Hooked', 'Hacked'), delivery!.headers, endpoint.secret)).to.throw(WebhookSignatureError);
      const old = signWebhook(endpoint.secret, event.id, delivery!.body, new Date(Date.now() - 3_600_000));
      expect(() => verifyWebhook(delivery!.body, old, endpoint.secret)).to.throw(WebhookSignatureError);
      expect(verifyWebhook(delivery!.body, signWebhook(endpoint.secret, event.id, delivery!.body), endpoint.secret).id).to.equal(event.id);

      expect(await service.webhookEndpoints.update(endpoint.id, { status: 'disabled' })).to.include({ status: 'disabled' });
      expect(await service.webhookEndpoints.delete(endpoint.id)).to.include({ id: endpoint.id, deleted: true });
      expect(await service.webhookEndpoints.get(endpoint.id).catch((e: unknown) => e)).to.be.instanceOf(NotFoundError);
    } finally {
      await receiver.stop();
    }
  });

  describe('retries, through a proxy that fails on purpose', () => {
    let proxy: FaultyProxy;
    let key: string;
    beforeEach(async () => {
      proxy = await new FaultyProxy(svc.url).start();
      key = (await svc.tenant()).key;
    });
    afterEach(() => proxy.stop());
    const client = (options: { maxRetries?: number; timeoutMs?: number } = {}) => new DatasetService({ apiKey: key, baseUrl: proxy.url, ...options });

    it('when the connection drops after the service answered, then the retry carries the same key and gets the first answer: one dataset', async () => {
      proxy.faults = ['drop-after'];
      const created = await client().datasets.create({ externalRef: 'dropped', name: 'Dropped' });
      expect(proxy.seen).to.have.length(2);
      expect(proxy.seen[0]!.key).to.be.a('string').and.equal(proxy.seen[1]!.key);
      expect(proxy.seen[1]!.replayed).to.equal('true');
      const page = await client().datasets.list();
      expect(page.data.map((d) => d.id)).to.deep.equal([created.id]);
    });

    it('when the service answers 503 or 502, then the same request is retried with the same key', async () => {
      proxy.faults = ['503', '502'];
      const created = await client().datasets.create({ externalRef: 'unavailable', name: 'Unavailable' });
      expect(created.externalRef).to.equal('unavailable');
      expect(proxy.seen.map((s) => s.status)).to.deep.equal([503, 502, 201]);
      expect(new Set(proxy.seen.map((s) => s.key)).size).to.equal(1);
    });

    it('when an upload from a path is cut off, then it is sent again with the same key: one version', async () => {
      const dataset = await client().datasets.create({ externalRef: 'cut-upload', name: 'Cut' });
      const path = join(dir, 'cut.csv');
      await writeFile(path, contractsCsv(5000));
      proxy.faults = ['drop-before'];
      const version = await client().versions.upload(dataset.id, { path });
      expect(version).to.include({ status: 'active', rowCount: 5000 });
      const posts = proxy.seen.filter((s) => s.path.endsWith('/versions'));
      expect(posts).to.have.length(2);
      expect(posts[0]!.key).to.equal(posts[1]!.key);
      const { rows } = await svc.db.query('SELECT count(*)::int AS n FROM versions WHERE dataset_id = $1', [dataset.id]);
      expect(rows[0].n).to.equal(1);
    });

    it('when no answer comes in time, then TimeoutError after the retries, each with the same key', async () => {
      proxy.faults = ['stall', 'stall', 'stall'];
      const failure = await client({ timeoutMs: 300, maxRetries: 2 }).datasets.create({ externalRef: 'slow', name: 'Slow' }).catch((e: unknown) => e);
      expect(failure).to.be.instanceOf(TimeoutError).and.instanceOf(ConnectionError);
      expect(proxy.seen).to.have.length(3);
      expect(new Set(proxy.seen.map((s) => s.key)).size).to.equal(1);
    });

    it('when the service keeps answering 503, then ServiceUnavailableError after maxRetries; a 4xx is never retried', async () => {
      proxy.faults = ['503', '503', '503'];
      expect(await client({ maxRetries: 2 }).datasets.list().catch((e: unknown) => e)).to.be.instanceOf(ServiceUnavailableError);
      expect(proxy.seen).to.have.length(3);
      proxy.seen.length = 0;
      const dataset = await client().datasets.create({ externalRef: 'no-retry', name: 'No retry' });
      proxy.seen.length = 0;
      expect(await client().versions.upload(dataset.id, { text: 'nope\n' }).catch((e: unknown) => e)).to.be.instanceOf(IngestValidationError);
      expect(proxy.seen.filter((s) => s.method === 'POST')).to.have.length(1);
      expect(await client().datasets.get('ds_missing').catch((e: unknown) => e)).to.be.instanceOf(NotFoundError);
      expect(proxy.seen.filter((s) => s.path === '/v1/datasets/ds_missing')).to.have.length(1);
    });

    it('when the service sits under a path prefix, then a rejected file\'s first errors are read from the version its 422 names', async () => {
      // The service's BASE_URL holds the prefix, as behind a gateway that mounts it at /api.
      const prefixed = await new FaultyProxy(svc.url, '/api').start();
      const behind = await startService({ env: { BASE_URL: `${prefixed.url}/api` } });
      try {
        prefixed.target = new URL(`http://127.0.0.1:${behind.config.port}`);
        const tenant = await behind.tenant();
        const client = new DatasetService({ apiKey: tenant.key, baseUrl: `${prefixed.url}/api` });
        const dataset = await client.datasets.create({ externalRef: 'prefixed', name: 'Prefixed' });
        const failure = await client.versions.upload(dataset.id, { text: contractsCsv(300, { badEvery: 3 }) }).catch((e: unknown) => e);
        expect(failure).to.be.instanceOf(IngestValidationError);
        expect((failure as IngestValidationError).errorCount).to.equal(100);
        expect(prefixed.seen.map((r) => r.path)).to.include(`/api/v1/datasets/${dataset.id}/versions/${(failure as IngestValidationError).versionId}`);
      } finally {
        await prefixed.stop();
        await behind.stop();
      }
    });

    it('when the service cannot be reached at all, then ConnectionError', async () => {
      const unreachable = client({ maxRetries: 1 });
      await proxy.stop();
      expect(await unreachable.datasets.list().catch((e: unknown) => e)).to.be.instanceOf(ConnectionError);
    });
  });
});

type Fault = 'drop-after' | 'drop-before' | '503' | '502' | 'stall';

/** A proxy in front of the service (below `prefix`, which it strips) that fails the next requests as told, and records what it saw. */
class FaultyProxy {
  faults: Fault[] = [];
  readonly seen: { method: string; path: string; key: string | undefined; status?: number; replayed?: string }[] = [];
  target: URL;
  private readonly server: Server;

  constructor(target: string, prefix = '') {
    this.target = new URL(target);
    this.server = createServer((req, res) => {
      const seen: (typeof this.seen)[number] = { method: req.method!, path: req.url!, key: req.headers['idempotency-key'] as string | undefined };
      this.seen.push(seen);
      const fault = this.faults.shift();
      if (fault === '503' || fault === '502') {
        seen.status = Number(fault);
        req.resume();
        res.writeHead(seen.status, { 'content-type': 'text/html' }).end('<h1>Bad gateway</h1>');
        return;
      }
      if (fault === 'stall') {
        req.resume();
        return;
      }
      if (fault === 'drop-before') {
        // Cut the connection mid-body: the service never gets the whole request.
        let received = 0;
        req.on('data', (chunk: Buffer) => {
          received += chunk.length;
          if (received > 10_000) req.socket.destroy();
        });
        return;
      }
      const path = req.url!.startsWith(prefix) ? req.url!.slice(prefix.length) : req.url;
      const upstream = httpRequest({ host: this.target.hostname, port: this.target.port, method: req.method, path, headers: req.headers }, (answer) => {
        seen.status = answer.statusCode;
        seen.replayed = answer.headers['idempotent-replayed'] as string | undefined;
        if (fault === 'drop-after') {
          answer.resume();
          answer.on('end', () => res.socket?.destroy());
          return;
        }
        res.writeHead(answer.statusCode!, answer.headers);
        answer.pipe(res);
      });
      req.pipe(upstream);
    });
  }

  async start(): Promise<this> {
    await listenLocally(this.server);
    return this;
  }

  get url(): string {
    return localUrl(this.server);
  }

  stop(): Promise<void> {
    return closeNow(this.server);
  }
}
