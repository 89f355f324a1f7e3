// HEAD on a streamed GET answers the status and headers and reads nothing for the body: an
// export's file is never streamed out of its store, a failed version's row errors never queried.
import { expect } from 'chai';
import pg from 'pg';
import { eventually } from './support/eventually.ts';
import { HEADER, newDataset, postCsv } from './support/ingest.ts';
import { useService } from './support/service.ts';

describe('HEAD on streamed answers', function () {
  this.timeout(30_000);
  let key: string;
  const svc = useService();
  before(async () => {
    ({ key } = await svc.tenant());
  });

  it('when an export\'s content is asked with HEAD, then its headers and length come back and its file is not read', async () => {
    const ds = await newDataset(svc, key);
    expect((await postCsv(svc, key, ds, `${HEADER}\nc1,Acme,Pro,2026-01-01,2026-12-31,1200.00,EUR\n`)).status).to.equal(201);
    const requested = await svc.request(`/v1/datasets/${ds}/exports`, { key, json: { format: 'csv' } });
    const path = `/v1/datasets/${ds}/exports/${requested.json.id}`;
    const ready = (await eventually(() => svc.request(path, { key }), (r) => r.json.status === 'ready', { everyMs: 25 })).json;
    expect(ready.status).to.equal('ready');

    // The file's bytes are gone from the store: reading them would fail, so a HEAD must not.
    const { rows } = await svc.db.query('SELECT blob_id FROM exports WHERE id = $1', [ready.id]);
    await svc.blobs.delete(rows[0].blob_id);
    // The signed download is ours too, unless an object store serves its own presigned URL.
    const ours = [`${svc.url}${path}/content`, ready.downloadUrl as string].filter((url) => url.startsWith(svc.url));
    for (const target of ours) {
      const head = await fetch(target, { method: 'HEAD', headers: { authorization: `Bearer ${key}` } });
      expect(head.status, target).to.equal(200);
      expect(head.headers.get('content-length'), target).to.equal(String(ready.bytes));
      expect(head.headers.get('content-type'), target).to.equal('text/csv; charset=utf-8');
      expect(head.headers.get('content-disposition'), target).to.equal(`attachment; filename="${ready.id}.csv"`);
    }
  });

  it('when a failed version is asked with HEAD, then it answers at once without reading its row errors', async () => {
    const ds = await newDataset(svc, key);
    const failed = await postCsv(svc, key, ds, `${HEADER}\nc1,Acme,Pro,not-a-date,2026-12-31,1200.00,EUR\n`);
    expect(failed.status).to.equal(422);
    const versionPath = `/v1/datasets/${ds}/versions/${failed.json.versionId ?? (await svc.request(`/v1/datasets/${ds}/versions`, { key })).json.data[0].id}`;

    // Another session holds the row errors locked: any read of them would wait for it.
    const locker = new pg.Client({ connectionString: svc.databaseUrl });
    await locker.connect();
    try {
      await locker.query('BEGIN');
      await locker.query('LOCK TABLE version_errors IN ACCESS EXCLUSIVE MODE');
      const head = await fetch(`${svc.url}${versionPath}`, { method: 'HEAD', headers: { authorization: `Bearer ${key}` }, signal: AbortSignal.timeout(5000) });
      expect(head.status).to.equal(200);
      expect(head.headers.get('content-type')).to.match(/^application\/json/);
    } finally {
      await locker.query('ROLLBACK');
      await locker.end();
    }
  });
});
