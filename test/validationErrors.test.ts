// A file with very many bad rows: its 422 lists every error, streamed from the database, and is
// kept for replay by reference rather than by its bytes; the version and the version list carry
// the same problem with its first 100 errors, the count of all and where to read them.
import { expect } from 'chai';
import { HEADER, newDataset, postCsv } from './support/ingest.ts';
import { useService } from './support/service.ts';

describe('validation errors of large files', function () {
  this.timeout(60_000);
  let key: string;
  const svc = useService();
  before(async () => {
    key = (await svc.tenant()).key;
  });

  const ROWS = 20_000;
  // Two errors per row (no customer, a bad date), so 40,000 entries.
  const badFile = (tag: string) => `${HEADER}\n${Array.from({ length: ROWS }, (_, i) => `${tag}-${i},,,2026-02-3${i % 10},2026-12-31,5,EUR`).join('\n')}\n`;

  it('when a file has tens of thousands of errors, then the 422 lists all of them in row order and its replay is the same bytes, kept by reference', async () => {
    const ds = await newDataset(svc, key);
    const first = await postCsv(svc, key, ds, badFile('a'), { idempotencyKey: 'many-errors', wait: 120 });
    expect(first.status).to.equal(422);
    expect(first.headers.get('content-type')).to.match(/^application\/problem\+json/);
    expect(first.json.type).to.equal(`${svc.config.errorsBase}/ingest-validation-failed`);
    expect(first.json.instance).to.equal(`/v1/datasets/${ds}/versions`);
    expect(first.json.detail).to.include(String(ROWS));
    const errors = first.json.errors as { row: number; field: string; code: string; message: string }[];
    // February has no 30th to 39th.
    expect(errors).to.have.length(2 * ROWS);
    expect(errors[0]).to.deep.equal({ row: 2, field: 'customer', code: 'required', message: 'customer is required.' });
    expect(errors.at(-1)!.row).to.equal(ROWS + 1);
    expect(errors.every((e, i) => i === 0 || e.row >= errors[i - 1]!.row)).to.equal(true);
    expect(first.json.versionId).to.match(/^ver_/);
    // Where the failed version is, for a client that would rather read its first errors than all of them.
    expect(first.headers.get('location')).to.equal(`${svc.url}/v1/datasets/${ds}/versions/${first.json.versionId}`);

    const again = await postCsv(svc, key, ds, badFile('a'), { idempotencyKey: 'many-errors' });
    expect(again.status).to.equal(422);
    expect(again.headers.get('idempotent-replayed')).to.equal('true');
    expect(again.headers.get('content-type')).to.equal(first.headers.get('content-type'));
    expect(again.text).to.equal(first.text);
    expect(again.headers.get('location')).to.equal(first.headers.get('location'));
    const { rows } = await svc.db.query(`SELECT length(response_body) AS bytes, response_streamed FROM idempotency_keys WHERE key = 'many-errors'`);
    expect(rows[0]).to.deep.equal({ bytes: 0, response_streamed: { validationProblemOf: first.json.versionId } });

    const version = await svc.request(`/v1/datasets/${ds}/versions/${first.json.versionId}`, { key });
    expect(version.status).to.equal(200);
    expect(version.json.problem).to.deep.equal(inVersion(first.json, ds));
    expect(version.text.length).to.be.below(40_000);
  });

  /** A 422 as a version object carries it: its first 100 errors, the count of all, and where they are. */
  const inVersion = (problem: { errors: unknown[]; versionId: string }, ds: string) => ({
    ...problem,
    errors: problem.errors.slice(0, 100),
    errorCount: problem.errors.length,
    errorsUrl: `${svc.url}/v1/datasets/${ds}/versions/${problem.versionId}/errors`,
  });

  it('when the list holds several failed versions, then each carries its problem with the first 100 errors, and the page stays small', async () => {
    const ds = await newDataset(svc, key);
    const failed = [await postCsv(svc, key, ds, badFile('b')), await postCsv(svc, key, ds, badFile('c'))];
    const good = await postCsv(svc, key, ds, `${HEADER}\nok-1,Acme,,2026-01-01,2026-12-31,5,EUR\n`);
    expect(good.status).to.equal(201);
    const list = await svc.request(`/v1/datasets/${ds}/versions`, { key });
    expect(list.status).to.equal(200);
    expect(list.json.data.map((v: { status: string }) => v.status)).to.deep.equal(['active', 'failed', 'failed']);
    expect(list.json.data[0].problem).to.equal(null);
    expect(list.json.data[1].problem).to.deep.equal(inVersion(failed[1]!.json, ds));
    expect(list.json.data[2].problem).to.deep.equal(inVersion(failed[0]!.json, ds));
    expect(list.text.length).to.be.below(80_000);
  });

  it('when cells hold quotes, backslashes and non-ASCII text, then the streamed messages are the same JSON strings', async () => {
    const ds = await newDataset(svc, key);
    const amount = 'x"y\\z é ☃ 😀\t';
    const csv = `${HEADER}\nq-1,Acme,,2026-01-01,2026-12-31,"${amount.replace(/"/g, '""')}",EUR\n`;
    const reply = await postCsv(svc, key, ds, csv);
    expect(reply.status).to.equal(422);
    expect(reply.json.errors).to.deep.equal([
      { row: 2, field: 'amount', code: 'not_a_number', message: `amount ${JSON.stringify(amount.trim())} is not a decimal number with at most 2 decimals.` },
    ]);
    const stored = await svc.request(`/v1/datasets/${ds}/versions/${reply.json.versionId}`, { key });
    expect(stored.json.problem.errors).to.deep.equal(reply.json.errors);
  });
});
