// The errors resource of a version: every row error a page at a time, and the rejected rows as a
// CSV file that, once fixed, uploads as a good file.
import { expect } from 'chai';
import { eventually } from './support/eventually.ts';
import { HEADER, newDataset, postCsv } from './support/ingest.ts';
import { useService } from './support/service.ts';

describe('the errors of a version, and its rejected rows', function () {
  this.timeout(60_000);
  let key: string;
  const svc = useService();
  before(async () => {
    key = (await svc.tenant()).key;
  });

  /** 150 rows, every third one without a customer (50 errors), plus one with two problems. */
  const fileWithErrors = () => {
    const rows = Array.from({ length: 150 }, (_, i) => `e-${i},${i % 3 === 0 ? '' : `Customer ${i}`},,2026-01-01,2026-12-31,5,EUR`);
    rows.push('e-last,,,2026-02-30,2026-12-31,5,EUR');
    return `${HEADER}\n${rows.join('\n')}\n`;
  };

  it('when the errors are read a page at a time, then every error comes once, in row order, and a bad cursor is refused', async () => {
    const ds = await newDataset(svc, key);
    const failed = await postCsv(svc, key, ds, fileWithErrors());
    expect(failed.status).to.equal(422);
    const all = failed.json.errors as { row: number }[];
    expect(all).to.have.length(52);

    const url = `/v1/datasets/${ds}/versions/${failed.json.versionId}/errors`;
    const seen: unknown[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const page = await svc.request(`${url}?limit=20${cursor ? `&cursor=${cursor}` : ''}`, { key });
      expect(page.status, page.text).to.equal(200);
      expect(page.json.object).to.equal('list');
      seen.push(...page.json.data);
      cursor = page.json.nextCursor;
      pages++;
    } while (cursor);
    expect(pages).to.equal(3);
    expect(seen).to.deep.equal(all);

    const bad = await svc.request(`${url}?cursor=nope`, { key });
    expect(bad.status).to.equal(400);
    expect(bad.json.errors).to.deep.equal([{ field: 'cursor', code: 'invalid', message: 'Use nextCursor of a previous page.' }]);
    const other = await svc.request(`/v1/datasets/${ds}/versions/ver_00000000000000000000000/errors`, { key });
    expect(other.status).to.equal(404);
    const stranger = (await svc.tenant()).key;
    expect((await svc.request(url, { key: stranger })).status).to.equal(404);
  });

  it('when a good version is asked for its errors, then the list is empty and there are no rejected rows', async () => {
    const ds = await newDataset(svc, key);
    const good = await postCsv(svc, key, ds, `${HEADER}\ng-1,Acme,,2026-01-01,2026-12-31,5,EUR\n`);
    expect(good.status).to.equal(201);
    const url = `/v1/datasets/${ds}/versions/${good.json.id}/errors`;
    expect((await svc.request(url, { key })).json).to.deep.equal({ object: 'list', data: [], nextCursor: null });
    const csv = await svc.request(url, { key, headers: { accept: 'text/csv' } });
    expect(csv.status).to.equal(404);
    expect(csv.json.type).to.equal(`${svc.config.errorsBase}/not-found`);
  });

  it('when the rejected rows are downloaded as CSV, then they are the rows as uploaded (delimiter, quoting, non-ASCII), and once fixed the file uploads as a good one', async () => {
    const ds = await newDataset(svc, key);
    // A semicolon file, as European spreadsheets write it, with an extra column the service ignores.
    const header = 'contractId;customer;product;startDate;endDate;amount;currency;note';
    const lines = [
      'k-1;"Müller; Söhne GmbH";Support;2026-01-01;2026-12-31;10;EUR;ok',
      'k-2;"Ἀθῆναι ""Α.Ε.""";Licence;2026-02-30;2026-12-31;20;EUR;"line one\nline two"',
      'k-3;株式会社テスト;;2026-01-01;2025-12-31;30;JPY;',
      'k-4;Acme;;2026-01-01;2026-12-31;40;EUR;ok',
    ];
    const failed = await postCsv(svc, key, ds, `${header}\r\n${lines.join('\r\n')}\r\n`);
    expect(failed.status).to.equal(422);
    const url = `/v1/datasets/${ds}/versions/${failed.json.versionId}/errors`;

    const csv = await svc.request(url, { key, headers: { accept: 'text/csv' } });
    expect(csv.status, csv.text).to.equal(200);
    expect(csv.headers.get('content-type')).to.equal('text/csv; charset=utf-8');
    expect(csv.headers.get('content-disposition')).to.include(`${failed.json.versionId}-rejected-rows.csv`);
    expect(csv.text).to.equal(
      'rejectedRow;problems;contractId;customer;product;startDate;endDate;amount;currency;note\r\n' +
        `3;"startDate not_a_date: ${failed.json.errors[0].message.replaceAll('"', '""')}";k-2;"Ἀθῆναι ""Α.Ε.""";Licence;2026-02-30;2026-12-31;20;EUR;"line one\nline two"\r\n` +
        `4;endDate end_before_start: ${failed.json.errors[1].message};k-3;株式会社テスト;;2026-01-01;2025-12-31;30;JPY;\r\n`,
    );

    // Fixed in a spreadsheet: the two rows alone, with their dates corrected, upload as a good file.
    const fixed = csv.text.replaceAll('2026-02-30', '2026-02-28').replaceAll('2025-12-31', '2026-12-31');
    const again = await postCsv(svc, key, ds, fixed);
    expect(again.status, again.text).to.equal(201);
    expect(again.json.rowCount).to.equal(2);
  });

  it('when the file of a failed version is older than its retention, then the purge deletes it: the CSV answers 404 while the errors stay listed', async () => {
    const ds = await newDataset(svc, key);
    const failed = await postCsv(svc, key, ds, fileWithErrors());
    expect(failed.status).to.equal(422);
    const versionId = failed.json.versionId as string;
    const url = `/v1/datasets/${ds}/versions/${versionId}/errors`;
    // The file it was built from, and the file of its rejected rows, made when the build failed.
    const { rows } = await svc.db.query('SELECT blob_id, rejected_blob_id FROM versions WHERE id = $1', [versionId]);
    const blobId = rows[0].blob_id as string;
    const rejectedId = rows[0].rejected_blob_id as string;
    expect(rejectedId).to.be.a('string');
    const { queues } = await import('../shared/platform/queue.ts');

    // Two days on, it is still kept (its rejected rows are offered), while a real orphan beside it goes.
    const orphan = await svc.blobs.write([Buffer.from('left by a failed request')], 1024);
    await svc.db.query(`UPDATE blobs SET created_at = now() - interval '2 days' WHERE id = ANY($1)`, [[blobId, rejectedId, orphan.id]]);
    await svc.db.query(`UPDATE versions SET completed_at = now() - interval '2 days' WHERE id = $1`, [versionId]);
    await svc.worker!.boss.send(queues.purgeStaleFiles, {});
    await eventually(async () => (await svc.db.query('SELECT 1 FROM blobs WHERE id = $1', [orphan.id])).rowCount, (n) => n === 0);
    expect((await svc.request(url, { key, headers: { accept: 'text/csv' } })).status).to.equal(200);

    await svc.db.query(`UPDATE versions SET completed_at = now() - interval '8 days' WHERE id = $1`, [versionId]);
    await svc.worker!.boss.send(queues.purgeStaleFiles, {});
    await eventually(async () => (await svc.db.query('SELECT 1 FROM blobs WHERE id = ANY($1)', [[blobId, rejectedId]])).rowCount, (n) => n === 0);
    const csv = await svc.request(url, { key, headers: { accept: 'text/csv' } });
    expect(csv.status).to.equal(404);
    expect(csv.json.detail).to.match(/no longer kept/);
    const list = await svc.request(url, { key });
    expect(list.status).to.equal(200);
    expect(list.json.data).to.have.length(20);
  });
});
