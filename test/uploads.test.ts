import { expect } from 'chai';
import { HEADER, newDataset } from './support/ingest.ts';
import { testBlobStore } from './setup/objectStore.ts';
import { eventually } from './support/eventually.ts';
import { useService } from './support/service.ts';

const GOOD = `${HEADER}\nc1,Acme,Pro,2026-01-01,2026-12-31,1200.00,EUR\n`;

describe('uploads: multipart bodies and upload URLs', () => {
  let key: string;
  const svc = useService({ env: { MAX_UPLOAD_BYTES: '4096' } });
  before(async () => {
    ({ key } = await svc.tenant());
  });

  const requestUpload = async (ds: string) => {
    const reply = await svc.request(`/v1/datasets/${ds}/uploads`, { key, json: { filename: 'contracts.csv', contentType: 'text/csv' } });
    expect(reply.status, reply.text).to.equal(201);
    return reply.json;
  };
  const put = (url: string, body: string | Buffer) => fetch(url, { method: 'PUT', body, headers: { 'content-type': 'text/csv' } });

  it('when the file is sent as multipart/form-data in the field "file", then it is built', async () => {
    const ds = await newDataset(svc, key);
    const form = new FormData();
    form.append('file', new Blob([GOOD], { type: 'text/csv' }), 'contracts.csv');
    const res = await fetch(`${svc.url}/v1/datasets/${ds}/versions`, { method: 'POST', body: form, headers: { authorization: `Bearer ${key}`, 'idempotency-key': 'mp-1' } });
    const body = (await res.json()) as { status: string; rowCount: number };
    expect(res.status).to.equal(201);
    expect(body).to.include({ status: 'active', rowCount: 1 });
  });

  it('when the multipart body has no "file" field, then 400 bad-request', async () => {
    const ds = await newDataset(svc, key);
    const form = new FormData();
    form.append('other', new Blob([GOOD]), 'contracts.csv');
    const res = await fetch(`${svc.url}/v1/datasets/${ds}/versions`, { method: 'POST', body: form, headers: { authorization: `Bearer ${key}`, 'idempotency-key': 'mp-2' } });
    expect(res.status).to.equal(400);
  });

  it('when an upload URL is requested, the file PUT to it and a version created from it, then it is built; the upload is used once', async () => {
    const ds = await newDataset(svc, key);
    const upload = await requestUpload(ds);
    expect(upload).to.include({ object: 'upload', datasetId: ds, status: 'pending', method: 'PUT', maxBytes: 4096 });
    expect(upload.id).to.match(/^upl_/);
    const expiresIn = Date.parse(upload.expiresAt) - Date.now();
    expect(expiresIn).to.be.within(3590_000, 3600_000);

    const stored = await put(upload.url, GOOD);
    expect(stored.status).to.equal(200);
    if (testBlobStore() === 'postgres') {
      expect(upload.url).to.match(new RegExp(`^${svc.url}/uploads/${upload.id}\\?expires=\\d+&signature=`));
      const storedBody = (await stored.json()) as { id: string; status: string; bytes: number; sha256: string };
      expect(storedBody).to.include({ id: upload.id, status: 'uploaded', bytes: Buffer.byteLength(GOOD) });
      expect(storedBody.sha256).to.match(/^[0-9a-f]{64}$/);
    } else {
      // The object store's own presigned PUT: the API never touches the bytes.
      expect(new URL(upload.url).origin).to.equal(new URL((svc.config.blobStore as { endpoint: string }).endpoint).origin);
    }

    const version = await svc.request(`/v1/datasets/${ds}/versions`, { key, json: { uploadId: upload.id } });
    expect(version.status, version.text).to.equal(201);
    expect(version.json).to.include({ status: 'active', rowCount: 1 });

    const again = await svc.request(`/v1/datasets/${ds}/versions`, { key, json: { uploadId: upload.id } });
    expect(again.status).to.equal(409);
    expect(again.json.type).to.equal(`${svc.config.errorsBase}/conflict`);
    if (testBlobStore() === 'postgres') {
      const late = await put(upload.url, GOOD);
      expect(late.status).to.equal(409);
    }
  });

  // An object store signs and checks its own URLs (the local test server does not check them).
  if (testBlobStore() === 'postgres') it('when the signature is wrong, tampered with or expired, then 403 forbidden', async () => {
    const ds = await newDataset(svc, key);
    const upload = await requestUpload(ds);
    const url = new URL(upload.url);
    const tampered = new URL(url);
    const signature = url.searchParams.get('signature')!;
    tampered.searchParams.set('signature', `${signature.slice(0, -1)}${signature.endsWith('A') ? 'B' : 'A'}`);
    const extended = new URL(url);
    extended.searchParams.set('expires', String(Number(url.searchParams.get('expires')) + 3600));
    const expired = new URL(url);
    expired.searchParams.set('expires', '1000000000');
    const other = await requestUpload(ds);
    const swapped = new URL(url);
    swapped.pathname = `/uploads/${other.id}`;
    for (const bad of [tampered, extended, expired, swapped, new URL(`${svc.url}/uploads/${upload.id}`)]) {
      const res = await put(bad.toString(), GOOD);
      expect(res.status, bad.toString()).to.equal(403);
      const problem = (await res.json()) as { type: string; title: string };
      expect(problem).to.include({ type: `${svc.config.errorsBase}/forbidden`, title: 'Forbidden' });
    }
  });

  it('when the file is over the limit, then 413 payload-too-large, through the upload URL and directly', async () => {
    const ds = await newDataset(svc, key);
    const upload = await requestUpload(ds);
    const big = `${HEADER}\n${'c,Acme,,2026-01-01,2026-12-31,1,EUR\n'.repeat(200)}`;
    const res = await put(upload.url, big);
    if (testBlobStore() === 'postgres') {
      expect(res.status).to.equal(413);
      expect(((await res.json()) as { type: string }).type).to.equal(`${svc.config.errorsBase}/payload-too-large`);
    } else {
      // A presigned PUT cannot cap the size: the limit applies when a version names the upload.
      expect(res.status).to.equal(200);
      const version = await svc.request(`/v1/datasets/${ds}/versions`, { key, json: { uploadId: upload.id } });
      expect(version.status).to.equal(413);
      await svc.db.query('DELETE FROM uploads WHERE id = $1', [upload.id]);
      await svc.blobs.delete((await svc.db.query('SELECT id FROM blobs ORDER BY created_at DESC LIMIT 1')).rows[0].id);
    }
    const direct = await svc.request(`/v1/datasets/${ds}/versions`, { key, body: big, headers: { 'content-type': 'text/csv' } });
    expect(direct.status).to.equal(413);
    const { rows } = await svc.db.query('SELECT count(*) FROM blobs');
    const { rows: versions } = await svc.db.query('SELECT count(*) FROM versions WHERE dataset_id = $1', [ds]);
    expect(Number(versions[0].count)).to.equal(0);
    expect(Number(rows[0].count)).to.equal(0);
  });

  it('when a streamed text/csv body without a length passes the limit, then 413 and no version or file is left', async () => {
    const ds = await newDataset(svc, key);
    const rows = 'c,Acme,,2026-01-01,2026-12-31,1,EUR\n'.repeat(20);
    // A body in parts, without content-length: the version is created as it starts to arrive.
    const body = new ReadableStream<Uint8Array>({
      async start(controller) {
        controller.enqueue(new TextEncoder().encode(`${HEADER}\n`));
        for (let i = 0; i < 10; i++) {
          await new Promise((resolve) => setTimeout(resolve, 20));
          controller.enqueue(new TextEncoder().encode(rows));
        }
        controller.close();
      },
    });
    const res = await fetch(`${svc.url}/v1/datasets/${ds}/versions`, {
      method: 'POST',
      body,
      duplex: 'half',
      headers: { authorization: `Bearer ${key}`, 'idempotency-key': `chunked-${ds}`, 'content-type': 'text/csv' },
    } as RequestInit);
    expect(res.status).to.equal(413);
    const { rows: versions } = await svc.db.query('SELECT count(*) FROM versions WHERE dataset_id = $1', [ds]);
    expect(Number(versions[0].count)).to.equal(0);
    const { rows: blobs } = await svc.db.query('SELECT count(*) FROM blobs');
    expect(Number(blobs[0].count)).to.equal(0);
    expect((await svc.request(`/v1/datasets/${ds}`, { key })).json.activeVersionId).to.equal(null);
  });

  it('when a version names an upload with no file yet, or of another dataset, then 409 and 404', async () => {
    const ds = await newDataset(svc, key);
    const pending = await requestUpload(ds);
    const early = await svc.request(`/v1/datasets/${ds}/versions`, { key, json: { uploadId: pending.id } });
    expect(early.status).to.equal(409);
    const otherDs = await newDataset(svc, key);
    const elsewhere = await svc.request(`/v1/datasets/${otherDs}/versions`, { key, json: { uploadId: pending.id } });
    expect(elsewhere.status).to.equal(404);
  });

  it('when the body is of another type, then 415', async () => {
    const ds = await newDataset(svc, key);
    const reply = await svc.request(`/v1/datasets/${ds}/versions`, { key, body: '<xml/>', headers: { 'content-type': 'application/xml' } });
    expect(reply.status).to.equal(415);
  });

  it('when live-mode rows are ingested, then they are metered for the account', async () => {
    const accountId = await svc.account();
    const live = await svc.key(accountId, 'live');
    const ds = await newDataset(svc, live);
    const csv = `${HEADER}\na,A,,2026-01-01,2026-01-31,1,EUR\nb,B,,2026-01-01,2026-01-31,1,EUR\n`;
    expect((await svc.request(`/v1/datasets/${ds}/versions`, { key: live, body: csv, headers: { 'content-type': 'text/csv' } })).status).to.equal(201);
    const ingested = await eventually(() => svc.metered(accountId, 'rows_ingested'), (n) => n >= 2);
    expect(ingested).to.equal(2);
  });

  it('when uploads go unused and blobs are orphaned for a day, then the scheduled purge deletes them and keeps the rest', async () => {
    const { queues } = await import('../shared/platform/queue.ts');
    const ds = await newDataset(svc, key);
    const stale = await requestUpload(ds);
    await put(stale.url, GOOD);
    const fresh = await requestUpload(ds);
    await put(fresh.url, GOOD);
    const orphan = await svc.blobs.write([Buffer.from('orphan')], 100);
    const recent = await svc.blobs.write([Buffer.from('recent')], 100);
    await svc.db.query(`UPDATE uploads SET created_at = now() - interval '25 hours' WHERE id = $1`, [stale.id]);
    await svc.db.query(`UPDATE blobs SET created_at = now() - interval '25 hours' WHERE id = $1 OR id = (SELECT blob_id FROM uploads WHERE id = $2)`, [orphan.id, stale.id]);
    expect((await svc.worker!.boss.getSchedules()).map((s) => s.name)).to.include(queues.purgeStaleFiles);
    await svc.worker!.boss.send(queues.purgeStaleFiles, {});
    const exists = async (table: string, id: string) => (await svc.db.query(`SELECT 1 FROM ${table} WHERE id = $1`, [id])).rowCount === 1;
    await eventually(() => exists('blobs', orphan.id), (present) => !present);
    expect(await exists('blobs', orphan.id)).to.equal(false);
    expect(await exists('uploads', stale.id)).to.equal(false);
    expect(await exists('blobs', recent.id)).to.equal(true);
    expect(await exists('uploads', fresh.id)).to.equal(true);
    const { rows } = await svc.db.query('SELECT blob_id FROM uploads WHERE id = $1', [fresh.id]);
    expect(await exists('blobs', rows[0].blob_id)).to.equal(true);
  });
});
