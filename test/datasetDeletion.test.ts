// DELETE /v1/datasets/{id}: nothing of the dataset is readable once the 200 is sent, its
// externalRef is free again, and its data and files are purged in the background.
import { expect } from 'chai';
import { HEADER, newDataset, postCsv } from './support/ingest.ts';
import { eventually } from './support/eventually.ts';
import { useService } from './support/service.ts';
import { noOtherSnapshots, pagesRead } from './support/contractRowPages.ts';
import { createLogger } from '../shared/platform/log.ts';
import { purgeVersions } from '../worker/jobs/purgeVersions.ts';
import { queues } from '../shared/platform/queue.ts';

const GOOD = `${HEADER}\nc1,Acme,Pro,2026-01-01,2026-12-31,1200.00,EUR\n`;
// Over 1 MiB, so not built in the express lane (whose tally keeps its customers' changes in memory, for the shared table).
const LARGER = `${HEADER}\n${Array.from({ length: 15_000 }, (_, i) => `c${i},Customer ${i} of a book over a mebibyte,Pro,2026-01-01,2026-12-31,1200.00,EUR`).join('\n')}\n`;
const BAD = `${HEADER}\nc1,,Pro,2026-01-01,2026-12-31,1,EUR\n`;

describe('deleting a dataset', () => {
  // A version of two rows or more (past the express lane) keeps its customers in a table of its own (sql/029); one of one row, in the shared table.
  const svc = useService({ env: { CUSTOMERS_APART_ROWS: '2' } });

  it('when a dataset is deleted, then it and everything of it answer 404 at once, its externalRef is free, and its data and files are purged', async function () {
    this.timeout(60_000);
    const { key } = await svc.tenant();
    const ds = await newDataset(svc, key, 'crm-2026');
    const active = await postCsv(svc, key, ds, GOOD);
    const larger = await postCsv(svc, key, ds, LARGER);
    const failed = await postCsv(svc, key, ds, BAD);
    expect([active.status, larger.status, failed.status]).to.deep.equal([201, 201, 422]);
    const customers = `SELECT (SELECT count(*) FROM version_customers WHERE version_id = ANY($1)) AS shared,
                              (SELECT count(*) FROM pg_tables WHERE schemaname = 'version_customers_apart' AND tablename = ANY($1)) AS tables`;
    const versionIds = [active.json.id, larger.json.id, failed.json.versionId];
    expect((await svc.db.query(customers, [versionIds])).rows[0]).to.deep.equal({ shared: 1, tables: 1 });
    const exp = await svc.request(`/v1/datasets/${ds}/exports`, { key, json: { format: 'csv' } });
    const ready = await eventually(() => svc.request(`/v1/datasets/${ds}/exports/${exp.json.id}`, { key }), (r) => r.json.status === 'ready');
    const upload = (await svc.request(`/v1/datasets/${ds}/uploads`, { key, json: {} })).json;
    const { rows: files } = await svc.db.query(
      `SELECT blob_id FROM versions WHERE dataset_id = $1 AND blob_id IS NOT NULL UNION SELECT blob_id FROM exports WHERE dataset_id = $1 AND blob_id IS NOT NULL`,
      [ds],
    );
    expect(files.length).to.be.at.least(2); // the failed version's file (kept for its rejected rows) and the export's

    const deleted = await svc.request(`/v1/datasets/${ds}`, { key, method: 'DELETE', idempotencyKey: 'delete-crm' });
    expect(deleted.status, deleted.text).to.equal(200);
    expect(deleted.json).to.deep.equal({ id: ds, object: 'dataset', deleted: true });

    for (const path of [
      `/v1/datasets/${ds}`,
      `/v1/datasets/${ds}/versions`,
      `/v1/datasets/${ds}/versions/${active.json.id}`,
      `/v1/datasets/${ds}/versions/${failed.json.versionId}/errors`,
      `/v1/datasets/${ds}/metrics`,
      `/v1/datasets/${ds}/catalog`,
      `/v1/datasets/${ds}/exports/${exp.json.id}`,
      `/v1/datasets/${ds}/exports/${exp.json.id}/content`,
    ]) {
      expect((await svc.request(path, { key })).status, path).to.equal(404);
    }
    const download = await fetch(ready.json.downloadUrl);
    expect(download.status).to.be.oneOf([403, 404]);
    if (upload.url.startsWith(svc.url)) expect((await fetch(upload.url, { method: 'PUT', body: GOOD })).status).to.equal(403);
    expect((await fetch(upload.tusEndpoint, { method: 'POST', headers: { 'tus-resumable': '1.0.0', 'upload-length': '10' } })).status).to.equal(403);
    expect((await svc.request(`/v1/datasets/${ds}/versions`, { key, json: { uploadId: upload.id } })).status).to.equal(404);
    expect((await svc.request('/v1/datasets', { key })).json.data.map((d: { id: string }) => d.id)).not.to.include(ds);

    // The replay answers the same; a second deletion is 404; the externalRef can be used again.
    const replay = await svc.request(`/v1/datasets/${ds}`, { key, method: 'DELETE', idempotencyKey: 'delete-crm' });
    expect(replay.text, replay.text).to.equal(deleted.text);
    expect((await svc.request(`/v1/datasets/${ds}`, { key, method: 'DELETE' })).status).to.equal(404);
    const again = await svc.request('/v1/datasets', { key, json: { externalRef: 'crm-2026' } });
    expect(again.status, again.text).to.equal(201);

    // The purge: rows, versions (with their errors and reads), exports, uploads, files, the record.
    await eventually(() => svc.db.query('SELECT 1 FROM datasets WHERE id = $1', [ds]), (r) => r.rowCount === 0, { timeoutMs: 20_000 });
    const left = await svc.db.query(
      `SELECT (SELECT count(*) FROM datasets WHERE id = $1) AS datasets,
              (SELECT count(*) FROM versions WHERE dataset_id = $1) AS versions,
              (SELECT count(*) FROM contract_rows WHERE version_id = ANY($2)) AS rows,
              (SELECT count(*) FROM version_errors WHERE version_id = ANY($2)) AS errors,
              (SELECT count(*) FROM exports WHERE dataset_id = $1) AS exports,
              (SELECT count(*) FROM uploads WHERE dataset_id = $1) AS uploads,
              (SELECT count(*) FROM blobs WHERE id = ANY($3)) AS files`,
      [ds, versionIds, files.map((f) => f.blob_id)],
    );
    expect(left.rows[0]).to.deep.equal({ datasets: 0, versions: 0, rows: 0, errors: 0, exports: 0, uploads: 0, files: 0 });
    // Each customer's changes too: no foreign key holds them to the version.
    expect((await svc.db.query(customers, [versionIds])).rows[0]).to.deep.equal({ shared: 0, tables: 0 });
    // Its events stay, for their 30 days.
    const events = await svc.request('/v1/events?type=dataset.deleted', { key });
    expect(events.json.data.map((e: { data: { object: { id: string } } }) => e.data.object.id)).to.deep.equal([ds]);
  });
  it('when a dataset is purged while another session holds a snapshot, then the BRIN ranges it emptied are summarized again after the hourly vacuum: they no longer match its version', async function () {
    this.timeout(60_000);
    // The hourly run is this test's to make (one at :23 meanwhile would vacuum before it looks).
    await svc.worker!.boss.unschedule(queues.purgeVersions);
    const { key } = await svc.tenant();
    const gone = await newDataset(svc, key, 'purged-with-a-snapshot');
    const version = await postCsv(svc, key, gone, LARGER);
    // As many rows after it: its pages are not the table's end (a vacuum would cut those off).
    const other = await newDataset(svc, key, 'stays');
    const stays = await postCsv(svc, key, other, LARGER);
    expect([version.status, stays.status]).to.deep.equal([201, 201]);
    // An analyze of autovacuum's holds a snapshot too; and a vacuum of its own would summarize nothing again.
    await svc.db.query('ALTER TABLE contract_rows SET (autovacuum_enabled = off)');
    try {
      const holder = await svc.db.connect();
      try {
        // A snapshot (a build's transaction, an analyze) open across the purge: the summaries it makes take the deleted rows in.
        await holder.query('BEGIN ISOLATION LEVEL REPEATABLE READ');
        await holder.query('SELECT 1 FROM accounts LIMIT 1');
        expect((await svc.request(`/v1/datasets/${gone}`, { key, method: 'DELETE' })).status).to.equal(200);
        await eventually(() => svc.db.query('SELECT 1 FROM datasets WHERE id = $1', [gone]), (r) => r.rowCount === 0, { timeoutMs: 20_000 });
      } finally {
        await holder.query('COMMIT');
        holder.release();
      }
      expect(await pagesRead(svc.db, version.json.id)).to.be.above(100); // as the purge summarized them
      expect((await svc.db.query('SELECT count(*)::int AS n FROM contract_rows_ranges_to_summarize')).rows[0].n).to.be.above(10);

      await noOtherSnapshots(svc.db); // else the vacuum may leave the deleted rows, and the ranges for the next run
      await purgeVersions(svc.db, svc.blobs, { retentionDays: 30, batchRows: 20_000 }, createLogger({ logLevel: 'silent' }, 'test'))();
      expect((await svc.db.query('SELECT count(*)::int AS n FROM contract_rows_ranges_to_summarize')).rows[0].n).to.equal(0);
      // The next file's rows go into the pages the vacuum freed: a read of the purged version visits none of them.
      const pages = async () => Number((await svc.db.query(`SELECT pg_relation_size('contract_rows') / 8192 AS pages`)).rows[0].pages);
      const freed = await pages();
      const next = await postCsv(svc, key, other, LARGER);
      expect(next.status).to.equal(201);
      expect(await pages()).to.be.below(freed + 20);
      expect(await pagesRead(svc.db, next.json.id)).to.be.above(100);
      expect(await pagesRead(svc.db, version.json.id)).to.be.below(20);
    } finally {
      await svc.db.query('ALTER TABLE contract_rows RESET (autovacuum_enabled)');
    }
  });
});
