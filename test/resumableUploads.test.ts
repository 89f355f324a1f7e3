// Resumable uploads over tus, with tus-js-client as users' programs (and Uppy) run it, on the
// configured blob store (CI runs this file on PostgreSQL and on S3).
import { expect } from 'chai';
import { spawn } from 'node:child_process';
import { writeFile, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { Upload as TusUpload } from 'tus-js-client';
import { freePort } from '../shared/platform/embeddedPostgres.ts';
import { projectRoot } from '../shared/platform/paths.ts';
import { contractsCsv } from './support/contracts.ts';
import { HEADER, newDataset, postCsv } from './support/ingest.ts';
import { startScript } from './support/processes.ts';
import { useService } from './support/service.ts';

const GOOD = `${HEADER}\nc1,Acme,Pro,2026-01-01,2026-12-31,1200.00,EUR\n`;
const MAX_BYTES = 48 * 1024 * 1024;

function tusUpload(file: Buffer, options: ConstructorParameters<typeof TusUpload>[1]): Promise<TusUpload> {
  return new Promise((resolve, reject) => {
    const upload: TusUpload = new TusUpload(file, { ...options, onSuccess: () => resolve(upload), onError: reject });
    upload.start();
  });
}

/** A raw tus request (what a client library sends), with the protocol's header unless told otherwise. */
const tus = (url: string, method: string, headers: Record<string, string> = {}, body?: RequestInit['body']) =>
  fetch(url, { method, headers: { 'tus-resumable': '1.0.0', ...headers }, ...(body !== undefined && { body, duplex: 'half' }) } as RequestInit);
const patch = (url: string, offset: number, body: NonNullable<RequestInit['body']>) =>
  tus(url, 'PATCH', { 'upload-offset': String(offset), 'content-type': 'application/offset+octet-stream' }, body);
const offsetOf = async (url: string) => {
  const head = await tus(url, 'HEAD');
  expect(head.status).to.equal(200);
  return Number(head.headers.get('upload-offset'));
};

describe('resumable uploads (tus)', () => {
  let key: string;
  const svc = useService({ env: { MAX_UPLOAD_BYTES: String(MAX_BYTES) } });
  before(async () => {
    ({ key } = await svc.tenant());
  });

  const requestUpload = async (ds: string) => {
    const reply = await svc.request(`/v1/datasets/${ds}/uploads`, { key, json: { filename: 'contracts.csv' } });
    expect(reply.status, reply.text).to.equal(201);
    return reply.json as { id: string; tusEndpoint: string; url: string };
  };
  const versionOf = (ds: string, uploadId: string) => svc.request(`/v1/datasets/${ds}/versions`, { key, json: { uploadId } });
  const readsOf = async (ds: string) => {
    const strip = ({ datasetId: _d, versionId: _v, ...rest }: Record<string, unknown>) => rest;
    const metrics = await svc.request(`/v1/datasets/${ds}/metrics`, { key });
    const catalog = await svc.request(`/v1/datasets/${ds}/catalog`, { key });
    expect(metrics.status).to.equal(200);
    expect(catalog.status).to.equal(200);
    return { metrics: strip(metrics.json), catalog: strip(catalog.json) };
  };
  const expectProblem = async (res: Response, status: number, type: string) => {
    expect(res.status).to.equal(status);
    expect(res.headers.get('content-type')).to.match(/^application\/problem\+json/);
    const body = (await res.json()) as { type: string; detail: string };
    expect(body.type).to.equal(`${svc.config.errorsBase}/${type}`);
    return body;
  };

  it('when a tus upload is cut off mid-way and another client process resumes it through another web process, then it builds the same version, metrics and catalog as the file sent in one request', async function () {
    this.timeout(180_000);
    const csv = Buffer.from(contractsCsv(300_000));
    expect(csv.length).to.be.above(16 * 1024 * 1024); // more than two S3 parts
    const dir = await mkdtemp(join(tmpdir(), 'tus-'));
    const file = join(dir, 'contracts.csv');
    await writeFile(file, csv);
    const ds = await newDataset(svc, key);
    const upload = await requestUpload(ds);

    // The first client program dies (SIGKILL, by its own hand so that no delay lets it send more)
    // once it has sent a quarter of the file; in 1 MiB PATCHes, so that however much the socket
    // buffers took, the service cannot have had the whole file (a flake seen with one PATCH).
    const client = spawn(process.execPath, ['test/support/tusClient.ts', file, upload.tusEndpoint], {
      cwd: projectRoot,
      env: { ...process.env, DIE_AFTER_BYTES: String(Math.floor(csv.length / 4)), CHUNK_SIZE: String(1024 * 1024) },
    });
    let uploadUrl = '';
    for await (const line of createInterface({ input: client.stdout })) {
      const said = JSON.parse(line) as { url?: string; sent?: number; done?: boolean; error?: string };
      if (said.url) uploadUrl = said.url;
      expect(said.done, 'the first client finished before it was cut off').to.equal(undefined);
      expect(said.error).to.equal(undefined);
    }
    expect(client.signalCode ?? (await new Promise((r) => client.once('exit', (_code, signal) => r(signal))))).to.equal('SIGKILL');
    expect(uploadUrl).to.equal(upload.tusEndpoint);

    // A second web process on the same database, reached at its own address: the upload URL's
    // signature covers its path, not its host.
    const port = await freePort();
    const web = await startScript('api/main.ts', { ...svc.childEnv, PORT: String(port), BASE_URL: `http://127.0.0.1:${port}` }, /api listening/);
    try {
      const elsewhere = new URL(uploadUrl);
      elsewhere.host = `127.0.0.1:${port}`;
      const stored = await offsetOf(elsewhere.href);
      expect(stored, 'bytes kept from the cut request').to.be.above(0);
      expect(stored, 'the first client was cut off before the end').to.be.below(csv.length);

      // A second client program resumes: HEAD, then PATCH from the stored offset.
      const resumed = await new Promise<string[]>((resolve, reject) => {
        const second = spawn(process.execPath, ['test/support/tusClient.ts', file, upload.tusEndpoint, elsewhere.href], { cwd: projectRoot });
        const lines: string[] = [];
        createInterface({ input: second.stdout }).on('line', (l) => lines.push(l));
        second.on('error', reject);
        second.on('close', (code) => (code === 0 ? resolve(lines) : reject(new Error(`second client exited ${code}: ${lines.join('\n')}`))));
      });
      const progress = resumed.map((l) => JSON.parse(l) as { sent?: number; done?: boolean }).filter((l) => l.sent !== undefined);
      expect(progress[0]!.sent, 'the second client started at the stored offset, not at 0').to.be.at.least(stored);
      expect(resumed.at(-1)).to.equal('{"done":true}');
      expect(await offsetOf(elsewhere.href)).to.equal(csv.length);
    } finally {
      web.child.kill('SIGTERM');
      await web.exited;
      await rm(dir, { recursive: true, force: true });
    }

    const version = await versionOf(ds, upload.id);
    expect(version.status, version.text).to.equal(201);
    expect(version.json).to.include({ status: 'active', rowCount: 300_000 });

    const direct = await newDataset(svc, key);
    const once = await postCsv(svc, key, direct, csv, { wait: 120 });
    expect(once.status, once.text).to.equal(201);
    expect(await readsOf(ds)).to.deep.equal(await readsOf(direct));
  });

  it('when two PATCHes come at the same offset, then the first is asked to stop, keeps what it received, and the second gets 409: the file is not corrupted', async function () {
    this.timeout(60_000);
    const ds = await newDataset(svc, key);
    const upload = await requestUpload(ds);
    const file = Buffer.from(GOOD);
    expect((await tus(upload.tusEndpoint, 'POST', { 'upload-length': String(file.length) })).status).to.equal(201);

    // The first PATCH sends 20 bytes, then stalls with its connection open.
    let stall!: ReadableStreamDefaultController<Uint8Array>;
    const slow = new ReadableStream<Uint8Array>({
      start(controller) {
        stall = controller;
        controller.enqueue(file.subarray(0, 20));
      },
    });
    const first = patch(upload.tusEndpoint, 0, slow).catch((error: unknown) => error);
    await new Promise((r) => setTimeout(r, 500));
    const second = await patch(upload.tusEndpoint, 0, file.subarray(0, 30));
    await expectProblem(second, 409, 'conflict');
    stall.close();
    const firstAnswer = await first;
    if (firstAnswer instanceof Response) expect(firstAnswer.headers.get('upload-offset')).to.equal('20');

    expect(await offsetOf(upload.tusEndpoint)).to.equal(20);
    expect((await patch(upload.tusEndpoint, 20, file.subarray(20))).status).to.equal(204);
    const version = await versionOf(ds, upload.id);
    expect(version.status, version.text).to.equal(201);
    expect(version.json).to.include({ status: 'active', rowCount: 1 });
  });

  it('when a PATCH names another offset than the upload\'s, then 409 conflict and nothing is stored', async () => {
    const ds = await newDataset(svc, key);
    const upload = await requestUpload(ds);
    const file = Buffer.from(GOOD);
    const created = await tus(upload.tusEndpoint, 'POST', { 'upload-length': String(file.length), 'content-type': 'application/offset+octet-stream' }, file.subarray(0, 10));
    expect(created.status).to.equal(201);
    expect(created.headers.get('upload-offset')).to.equal('10');
    expect(created.headers.get('location')).to.equal(upload.tusEndpoint);
    expect(Date.parse(created.headers.get('upload-expires')!)).to.be.within(Date.now() + 23.9 * 3600_000, Date.now() + 24 * 3600_000);

    const wrong = await patch(upload.tusEndpoint, 5, file.subarray(5));
    const problem = await expectProblem(wrong, 409, 'conflict');
    expect(problem.detail).to.match(/offset/i);
    expect(await offsetOf(upload.tusEndpoint)).to.equal(10);
  });

  it('when the declared size is over maxBytes, or a PATCH goes past the declared size, then 413 payload-too-large', async () => {
    const ds = await newDataset(svc, key);
    const upload = await requestUpload(ds);
    await expectProblem(await tus(upload.tusEndpoint, 'POST', { 'upload-length': String(MAX_BYTES + 1) }), 413, 'payload-too-large');

    expect((await tus(upload.tusEndpoint, 'POST', { 'upload-length': '10' })).status).to.equal(201);
    await expectProblem(await patch(upload.tusEndpoint, 0, Buffer.alloc(11, 'a')), 413, 'payload-too-large');
    expect(await offsetOf(upload.tusEndpoint)).to.equal(0);
  });

  it('when the upload was requested more than 24 hours ago, then its unfinished tus upload answers 410 gone', async () => {
    const ds = await newDataset(svc, key);
    const upload = await requestUpload(ds);
    expect((await tus(upload.tusEndpoint, 'POST', { 'upload-length': '100' })).status).to.equal(201);
    await svc.db.query(`UPDATE uploads SET created_at = now() - interval '25 hours' WHERE id = $1`, [upload.id]);
    expect((await tus(upload.tusEndpoint, 'HEAD')).status).to.equal(410);
    await expectProblem(await patch(upload.tusEndpoint, 0, 'a'), 410, 'gone');
  });

  it('when the upload was used by a version, then its tus URL answers 409 conflict', async () => {
    const ds = await newDataset(svc, key);
    const upload = await requestUpload(ds);
    await tusUpload(Buffer.from(GOOD), { endpoint: upload.tusEndpoint, retryDelays: [] });
    expect((await versionOf(ds, upload.id)).status).to.equal(201);
    await expectProblem(await patch(upload.tusEndpoint, 0, 'a'), 409, 'conflict');
    await expectProblem(await tus(upload.tusEndpoint, 'POST', { 'upload-length': '1' }), 409, 'conflict');
    expect((await versionOf(ds, upload.id)).status).to.equal(409);
  });

  it('when a tus upload is unfinished, then a version from it is refused with 409 (no file yet)', async () => {
    const ds = await newDataset(svc, key);
    const upload = await requestUpload(ds);
    expect((await tus(upload.tusEndpoint, 'POST', { 'upload-length': '100' })).status).to.equal(201);
    const version = await versionOf(ds, upload.id);
    expect(version.status).to.equal(409);
    expect(version.json.detail).to.match(/no file yet/);
  });

  it('when a tus upload is terminated, then its bytes are gone and the upload takes a new one; a second creation while one exists is refused', async () => {
    const ds = await newDataset(svc, key);
    const upload = await requestUpload(ds);
    const file = Buffer.from(GOOD);
    expect((await tus(upload.tusEndpoint, 'POST', { 'upload-length': String(file.length), 'content-type': 'application/offset+octet-stream' }, file.subarray(0, 10))).status).to.equal(201);
    await expectProblem(await tus(upload.tusEndpoint, 'POST', { 'upload-length': String(file.length) }), 409, 'conflict');

    expect((await tus(upload.tusEndpoint, 'DELETE')).status).to.equal(204);
    expect((await tus(upload.tusEndpoint, 'HEAD')).status).to.equal(404);
    await tusUpload(file, { endpoint: upload.tusEndpoint, retryDelays: [] });
    const version = await versionOf(ds, upload.id);
    expect(version.status, version.text).to.equal(201);
  });

  it('when the signature is wrong or the Tus-Resumable header is missing, then 403 forbidden and 412 precondition-failed', async () => {
    const ds = await newDataset(svc, key);
    const upload = await requestUpload(ds);
    const tampered = new URL(upload.tusEndpoint);
    const signature = tampered.searchParams.get('signature')!;
    tampered.searchParams.set('signature', `${signature.startsWith('x') ? 'y' : 'x'}${signature.slice(1)}`);
    await expectProblem(await tus(tampered.href, 'POST', { 'upload-length': '10' }), 403, 'forbidden');
    const other = new URL(upload.tusEndpoint);
    // Another upload's id: the last character changed (to one it is not already).
    other.pathname = other.pathname.replace(upload.id, `${upload.id.slice(0, -1)}${upload.id.endsWith('x') ? 'y' : 'x'}`);
    await expectProblem(await tus(other.href, 'POST', { 'upload-length': '10' }), 403, 'forbidden');
    const bare = await fetch(upload.tusEndpoint, { method: 'POST', headers: { 'upload-length': '10' } });
    await expectProblem(bare, 412, 'precondition-failed');

    const options = await fetch(upload.tusEndpoint, { method: 'OPTIONS' });
    expect(options.status).to.equal(204);
    expect(options.headers.get('tus-extension')).to.equal('creation,creation-with-upload,termination,expiration');
    expect(options.headers.get('tus-max-size')).to.equal(String(MAX_BYTES));
  });
});
