import { expect } from 'chai';
import { buildNow, codes, HEADER, newDataset, postCsv } from './support/ingest.ts';
import { eventually } from './support/eventually.ts';
import { CHUNK_BYTES } from '../shared/blobs/postgresBlobStore.ts';
import { useService } from './support/service.ts';
import { recordProgress } from '../shared/domain/versions.ts';

describe('ingest: versions from CSV files', () => {
  let key: string;
  const svc = useService();
  before(async () => {
    ({ key } = await svc.tenant());
  });

  const posted = (status: number) => async (csv: string | Buffer) => {
    const reply = await postCsv(svc, key, await newDataset(svc, key), csv);
    expect(reply.status, reply.text).to.equal(status);
    return reply;
  };
  const rejected = posted(422);
  const accepted = posted(201);

  it('when a good file is posted as text/csv, then 201 answers the active version and the dataset serves it', async () => {
    const ds = await newDataset(svc, key);
    const reply = await postCsv(svc, key, ds, `${HEADER}\nc1,Acme,Pro,2026-01-01,2026-12-31,1200.00,EUR\n`);
    expect(reply.status, reply.text).to.equal(201);
    expect(reply.json).to.include({ object: 'version', datasetId: ds, status: 'active', rowCount: 1, contributingRowCount: 1, problem: null });
    expect(reply.json.id).to.match(/^ver_/);
    expect(reply.headers.get('location')).to.equal(`${svc.url}/v1/datasets/${ds}/versions/${reply.json.id}`);
    expect(reply.headers.get('preference-applied')).to.equal('wait=30');
    const dataset = await svc.request(`/v1/datasets/${ds}`, { key });
    expect(dataset.json.activeVersionId).to.equal(reply.json.id);
    const read = await svc.request(`/v1/datasets/${ds}/versions/${reply.json.id}`, { key });
    expect(read.json).to.deep.equal(reply.json);
  });

  it('when rows are invalid, then 422 lists every problem with spreadsheet row numbers and the detail gives the count', async () => {
    const csv = [
      HEADER,
      'c1,,Pro,2026-02-30,2026-01-01,1,5,EUR', // malformed: 8 cells
      'c2,,Pro,2026-02-30,2025-01-01,12.345,XYZ',
      'c3,Beta,Pro,2026-03-01,2026-02-01,-5,eur',
      'c4,Gamma,,2026-01-01,2026-01-31,1e3,EUR',
      'c5,Delta,,2026-01-01,2026-01-31,"1,5",EUR',
      'c2,Eps,,2026-01-01,2026-01-31,5,EUR',
    ].join('\n');
    const reply = await rejected(csv);
    expect(reply.json).to.include({ type: `${svc.config.errorsBase}/ingest-validation-failed`, title: 'Unprocessable Entity', status: 422 });
    expect(reply.json.instance).to.match(/^\/v1\/datasets\/ds_\w+\/versions$/);
    expect(reply.json.versionId).to.match(/^ver_/);
    expect(codes(reply)).to.deep.equal([
      '2:*:malformed_row',
      '3:customer:required',
      '3:startDate:not_a_date',
      '3:amount:not_a_number',
      '3:currency:not_a_currency',
      '4:endDate:end_before_start',
      '4:amount:negative',
      '4:currency:not_a_currency',
      '5:amount:not_a_number',
      '6:amount:not_a_number',
      '7:contractId:duplicate',
    ]);
    expect(reply.json.detail).to.match(/\b6 rows\b/).and.match(/nothing was written/);
    for (const e of reply.json.errors) expect(e.message).to.be.a('string').and.not.equal('');
  });

  it('when a date is in year 0000, then not_a_date (PostgreSQL has no year 0), and the file fails with 422, not a fault', async () => {
    const reply = await rejected(`${HEADER}\nz1,Acme,,0000-01-01,0001-12-31,5,EUR\n`);
    expect(codes(reply)).to.deep.equal(['2:startDate:not_a_date']);
  });

  it('when cells have white space around them or text turns non-ASCII midway, then each is stored trimmed and byte for byte', async () => {
    const reply = await accepted(
      [
        HEADER,
        ' w1 ,\tAcme GmbH\t, Pro ,2026-01-01, 2026-12-31,1200.00 , EUR',
        'w2,\u00a0Müller & Søn\u3000,Prö,2026-01-01,2026-12-31,5,USD',
        'w3,Acme 東京海上 K.K.,Team\ufeff,2026-01-01,2026-12-31,5,EUR',
      ].join('\n'),
    );
    const { rows } = await svc.db.query('SELECT contract_id, customer, product, end_date::text, amount::text, currency FROM contract_rows WHERE version_id = $1 ORDER BY row_number', [reply.json.id]);
    expect(rows).to.deep.equal([
      { contract_id: 'w1', customer: 'Acme GmbH', product: 'Pro', end_date: '2026-12-31', amount: '1200.00', currency: 'EUR' },
      { contract_id: 'w2', customer: 'Müller & Søn', product: 'Prö', end_date: '2026-12-31', amount: '5.00', currency: 'USD' },
      { contract_id: 'w3', customer: 'Acme 東京海上 K.K.', product: 'Team', end_date: '2026-12-31', amount: '5.00', currency: 'EUR' },
    ]);
  });

  it('when a date has a character just below or above the digits in place of one, then not_a_date', async () => {
    // '/' and ':' sit either side of '0'–'9': a digit check that is off by one lets them through.
    const reply = await rejected(`${HEADER}\nd1,Acme,,2026-0/-01,2026-12-31,5,EUR\nd2,Acme,,2026-01-01,2026-12-3:,5,EUR\nd3,Acme,,:026-01-01,2026-12-31,5,EUR\n`);
    expect(codes(reply)).to.deep.equal(['2:startDate:not_a_date', '3:endDate:not_a_date', '4:startDate:not_a_date']);
  });

  it('when a currency is not three capital letters of a code in use, then not_a_currency; a code in use is stored', async () => {
    // Codes are looked up by their letters' positions in the alphabet: what is not A–Z must not alias a letter.
    const bad = ['EU', 'EURO', 'eur', 'E1R', 'ÉUR', 'E`R', 'XXY'];
    const rows = bad.map((code, i) => `k${i},Acme,,2026-01-01,2026-12-31,5,${code}`);
    const reply = await rejected([HEADER, ...rows, 'k9,Acme,,2026-01-01,2026-12-31,5,JPY'].join('\n'));
    expect(codes(reply)).to.deep.equal(bad.map((_, i) => `${i + 2}:currency:not_a_currency`));
  });

  it('when text is over 200 characters, then too_long for customer, product and contractId', async () => {
    const long = 'x'.repeat(201);
    const reply = await rejected(`${HEADER}\n${long},${long},${long},,,,\nok,${'é'.repeat(200)},,,,,\n`);
    expect(codes(reply)).to.deep.equal(['2:contractId:too_long', '2:customer:too_long', '2:product:too_long']);
  });

  it('when cells span lines and blank lines occur, then rows keep the numbers a spreadsheet shows', async () => {
    const csv = `${HEADER}\nc1,"Multi\nline\nname",,,,,\n\nc3,,,,,,\n\r\n  ,  ,  ,  ,  ,  ,  \nc6,,,bad,,,\n`;
    expect(codes(await rejected(csv))).to.deep.equal(['4:customer:required', '7:customer:required', '7:startDate:not_a_date']);
  });

  it('when the file has a BOM, CRLF, semicolons or tabs, mixed-case headers in any order and unknown columns, then it is read', async () => {
    const files = [
      '\uFEFFcustomer,amount,currency,startDate,endDate\r\nAcme,120,EUR,2026-01-01,2026-12-31\r\n',
      'Currency;AMOUNT; Customer ;startdate;ENDDATE;notes\nEUR;120;Acme;2026-01-01;2026-12-31;"a; b"\n',
      'customer\tamount\tcurrency\tstartDate\tendDate\tcolour\nAcme\t120\tEUR\t2026-01-01\t2026-12-31\tred\n',
    ];
    for (const csv of files) {
      const ds = await newDataset(svc, key);
      const reply = await postCsv(svc, key, ds, csv);
      expect(reply.status, reply.text).to.equal(201);
      expect(reply.json.contributingRowCount).to.equal(1);
      const metrics = await svc.request(`/v1/datasets/${ds}/metrics`, { key });
      expect(metrics.json.currencies).to.deep.equal([{ currency: 'EUR', contracts: 1, customers: 1, totalValue: '120.00' }]);
    }
  });

  it('when the header has no customer column, then one missing_column entry', async () => {
    expect(codes(await rejected('name,amount\nAcme,1\n,2\n'))).to.deep.equal(['1:customer:missing_column']);
  });

  it('when the file is empty, then empty_file; when bytes are not UTF-8, then not_utf8 for that row', async () => {
    expect(codes(await rejected(''))).to.deep.equal(['1:*:empty_file']);
    expect(codes(await rejected('\n\n'))).to.deep.equal(['1:*:empty_file']);
    const latin1 = Buffer.concat([Buffer.from('customer,amount\nOk,1\nM'), Buffer.from([0xfc]), Buffer.from('ller,2\nAlso ok,3\n')]);
    expect(codes(await rejected(latin1))).to.deep.equal(['3:*:not_utf8']);
  });

  it('when a stored file has bytes that are not UTF-8 and a character split across two chunks, then it reads back byte for byte', async () => {
    const bytes = Buffer.concat([Buffer.alloc(CHUNK_BYTES - 1, 'a'), Buffer.from('é,'), Buffer.from([0xff, 0xfe, 0x00, 0x0a]), Buffer.alloc(10, 'b')]);
    // The first stored chunk ends inside "é".
    const blob = await svc.blobs.write([bytes.subarray(0, CHUNK_BYTES), bytes.subarray(CHUNK_BYTES)], 10 * CHUNK_BYTES);
    const back: Buffer[] = [];
    for await (const chunk of svc.blobs.read(blob.id)) back.push(chunk);
    expect(Buffer.concat(back).equals(bytes)).to.equal(true);
    await svc.blobs.delete(blob.id);
  });

  it('when a valid row lacks a gating field or has amount 0, then it is stored, contributes nothing and is counted as excluded', async () => {
    const ds = await newDataset(svc, key);
    const csv = [
      HEADER,
      'a,A,,2026-01-01,2026-01-31,100,EUR',
      'b,B,,,2026-01-31,100,EUR',
      'c,C,,2026-01-01,,,EUR',
      'd,D,,2026-01-01,2026-01-31,0,EUR',
      'e,E,,2026-01-01,2026-01-31,100,',
    ].join('\n');
    const reply = await postCsv(svc, key, ds, csv);
    expect(reply.status, reply.text).to.equal(201);
    expect(reply.json).to.include({ rowCount: 5, contributingRowCount: 1 });
    const metrics = await svc.request(`/v1/datasets/${ds}/metrics`, { key });
    expect(metrics.json.rows).to.deep.equal({ total: 5, contributing: 1, excluded: { startDate: 1, endDate: 1, amount: 2, currency: 1 } });
  });

  it('when a file is rejected, then nothing is written: rows, active version, metrics and catalog stay as they were', async () => {
    const ds = await newDataset(svc, key);
    const good = await postCsv(svc, key, ds, `${HEADER}\nc1,Acme,Pro,2026-01-01,2026-12-31,1200,EUR\n`);
    const before = {
      metrics: (await svc.request(`/v1/datasets/${ds}/metrics`, { key })).text,
      catalog: (await svc.request(`/v1/datasets/${ds}/catalog`, { key })).text,
      rows: (await svc.db.query('SELECT count(*) FROM contract_rows')).rows[0].count,
    };
    const bad = await postCsv(svc, key, ds, `${HEADER}\nc9,New,Pro,2026-01-01,2026-12-31,5,EUR\nc10,,Pro,2026-01-01,2026-12-31,5,EUR\n`);
    expect(bad.status).to.equal(422);
    expect((await svc.request(`/v1/datasets/${ds}`, { key })).json.activeVersionId).to.equal(good.json.id);
    expect((await svc.request(`/v1/datasets/${ds}/metrics`, { key })).text).to.equal(before.metrics);
    expect((await svc.request(`/v1/datasets/${ds}/catalog`, { key })).text).to.equal(before.catalog);
    expect((await svc.db.query('SELECT count(*) FROM contract_rows')).rows[0].count).to.equal(before.rows);
    expect((await svc.db.query('SELECT count(*) FROM contract_rows WHERE version_id = $1', [bad.json.versionId])).rows[0].count).to.equal(0);
    const failed = await svc.request(`/v1/datasets/${ds}/versions/${bad.json.versionId}`, { key });
    expect(failed.json.status).to.equal('failed');
    // The version carries the 422 with its (here: every) first errors, how many there are and where they all are.
    const errorsUrl = `${svc.url}/v1/datasets/${ds}/versions/${bad.json.versionId}/errors`;
    expect(failed.json.problem).to.deep.equal({ ...bad.json, errorCount: 1, errorsUrl });
  });

  it('when a 422 is retried with the same key and body, then it is replayed byte for byte', async () => {
    const ds = await newDataset(svc, key);
    const csv = `${HEADER}\nc1,,Pro,2026-01-01,2026-12-31,5,EUR\n`;
    const first = await postCsv(svc, key, ds, csv, { idempotencyKey: 'bad-file-1' });
    const again = await postCsv(svc, key, ds, csv, { idempotencyKey: 'bad-file-1' });
    expect(first.status).to.equal(422);
    expect(again.status).to.equal(422);
    expect(again.text).to.equal(first.text);
    expect(again.headers.get('idempotent-replayed')).to.equal('true');
    const { rows } = await svc.db.query('SELECT count(*) FROM versions WHERE dataset_id = $1', [ds]);
    expect(Number(rows[0].count)).to.equal(1);
  });

  it('when Prefer: wait=0, then 202 with Location and progress, and the version becomes active later', async () => {
    const ds = await newDataset(svc, key);
    const reply = await postCsv(svc, key, ds, `${HEADER}\nc1,Acme,,2026-01-01,2026-12-31,1,EUR\n`, { wait: 0 });
    expect(reply.status).to.equal(202);
    expect(reply.headers.get('preference-applied')).to.equal('wait=0');
    expect(reply.json.status).to.be.oneOf(['queued', 'building']);
    expect(reply.json.progress).to.have.keys('rowsProcessed', 'bytesProcessed', 'bytesTotal');
    expect(reply.json.progress.bytesTotal).to.be.greaterThan(0);
    const location = reply.headers.get('location')!;
    const later = await eventually(() => svc.request(location.slice(svc.url.length), { key }), (r) => r.json.status === 'active');
    expect(later.json.status).to.equal('active');
  });

  it('when two builds race on one dataset, then they end in creation order: the older never replaces the newer', async () => {
    const ds = await newDataset(svc, key);
    const older = await postCsv(svc, key, ds, `${HEADER}\nold,Old,,2026-01-01,2026-12-31,1,EUR\n`, { wait: 0 });
    const newer = await postCsv(svc, key, ds, `${HEADER}\nnew,New,,2026-01-01,2026-12-31,1,EUR\n`, { wait: 0 });
    // Build the newer one first by hand: the older build then finds a newer active version.
    const { rows } = await svc.db.query('SELECT seq FROM versions WHERE id = ANY($1) ORDER BY seq', [[older.json.id, newer.json.id]]);
    expect(rows).to.have.length(2);
    await eventually(
      async () => (await svc.db.query('SELECT status FROM versions WHERE dataset_id = $1', [ds])).rows as { status: string }[],
      (rows) => rows.every((r) => ['active', 'superseded'].includes(r.status)),
    );
    const finalDataset = await svc.request(`/v1/datasets/${ds}`, { key });
    expect(finalDataset.json.activeVersionId).to.equal(newer.json.id);
    const old = await svc.request(`/v1/datasets/${ds}/versions/${older.json.id}`, { key });
    expect(old.json.status).to.equal('superseded');
    const list = await svc.request(`/v1/datasets/${ds}/versions`, { key });
    expect(list.json.data.map((v: { id: string }) => v.id)).to.deep.equal([newer.json.id, older.json.id]);
  });

});

describe('ingest: activation order', () => {
  // No worker here: the test runs the real build handler itself, in the order it chooses.
  let key: string;
  const svc = useService({ worker: false });
  before(async () => {
    ({ key } = await svc.tenant());
  });

  it('when an older version finishes after a newer one became active, then it ends superseded and the dataset keeps the newer', async () => {
    const run = (versionId: string) => buildNow(svc, versionId);

    const ds = await newDataset(svc, key);
    const older = await postCsv(svc, key, ds, `${HEADER}
a,A,,2026-01-01,2026-12-31,1,EUR
`, { wait: 0 });
    const newer = await postCsv(svc, key, ds, `${HEADER}
b,B,,2026-01-01,2026-12-31,1,EUR
`, { wait: 0 });
    expect([older.status, newer.status]).to.deep.equal([202, 202]);

    await run(newer.json.id);
    await run(older.json.id);

    const dataset = await svc.request(`/v1/datasets/${ds}`, { key });
    expect(dataset.json.activeVersionId).to.equal(newer.json.id);
    const old = await svc.request(`/v1/datasets/${ds}/versions/${older.json.id}`, { key });
    expect(old.json.status).to.equal('superseded');
    expect((await svc.db.query('SELECT count(*) FROM contract_rows WHERE version_id = $1', [older.json.id])).rows[0].count).to.equal(0);
    const metrics = await svc.request(`/v1/datasets/${ds}/metrics`, { key });
    expect(metrics.json.versionId).to.equal(newer.json.id);

    // And in the natural order the newer one replaces the older, which then reads superseded.
    const third = await postCsv(svc, key, ds, `${HEADER}
c,C,,2026-01-01,2026-12-31,1,EUR
`, { wait: 0 });
    await run(third.json.id);
    expect((await svc.request(`/v1/datasets/${ds}`, { key })).json.activeVersionId).to.equal(third.json.id);
    expect((await svc.request(`/v1/datasets/${ds}/versions/${newer.json.id}`, { key })).json.status).to.equal('superseded');
  });
});

describe('ingest: progress', () => {
  const svc = useService();

  it('when a progress report of the build lands after its commit, then the active version keeps its final figures', async () => {
    const { key } = await svc.tenant();
    const ds = await newDataset(svc, key);
    const csv = `${HEADER}\nc1,Acme,Pro,2026-01-01,2026-12-31,1200.00,EUR\nc2,Beta,Pro,2026-01-01,2026-12-31,600.00,EUR\n`;
    const reply = await postCsv(svc, key, ds, csv);
    expect(reply.status).to.equal(201);
    // What the build's progress timer sent just before the commit, arriving after it.
    await recordProgress(svc.db, reply.json.id, { rows: 1, bytes: 10 });
    const version = await svc.request(`/v1/datasets/${ds}/versions/${reply.json.id}`, { key });
    expect(version.json.progress).to.deep.equal(reply.json.progress);
    expect(version.json.progress.rowsProcessed).to.equal(2);
  });
});
