// No live capability in a kept idempotent answer: an upload's signed URL is not stored, it is
// signed again when the answer is replayed, the same bytes.
import { expect } from 'chai';
import { useService } from './support/service.ts';

describe('kept answers hold no live capability', () => {
  let key: string;
  let ds: string;
  const svc = useService({ worker: false });
  before(async () => {
    ({ key } = await svc.tenant());
    ds = (await svc.request('/v1/datasets', { key, json: { externalRef: 'kept' } })).json.id;
  });

  const kept = async (idempotencyKey: string) => {
    const { rows } = await svc.db.query('SELECT response_body, response_streamed FROM idempotency_keys WHERE key = $1', [idempotencyKey]);
    return rows[0] as { response_body: Buffer; response_streamed: unknown };
  };

  it('when an upload is created with a key, then its URLs (PUT and tus) are not stored, and the replay signs the same URLs again, byte for byte', async () => {
    const first = await svc.request(`/v1/datasets/${ds}/uploads`, { key, json: { filename: 'a.csv' }, idempotencyKey: 'upload-kept' });
    expect(first.status).to.equal(201);
    const url = new URL(first.json.url);
    const signature = url.searchParams.get('signature') ?? url.searchParams.get('X-Amz-Signature');
    expect(signature).to.be.a('string').with.length.greaterThan(10);

    const row = await kept('upload-kept');
    const stored = row.response_body.toString('utf8') + JSON.stringify(row.response_streamed);
    expect(stored).not.to.include(signature!);
    expect(stored).not.to.include(first.json.url);
    expect(JSON.parse(row.response_body.toString('utf8')).url).to.equal(null);
    const tusSignature = new URL(first.json.tusEndpoint).searchParams.get('signature');
    expect(tusSignature).to.be.a('string').with.length.greaterThan(10);
    expect(stored).not.to.include(tusSignature!);
    expect(JSON.parse(row.response_body.toString('utf8')).tusEndpoint).to.equal(null);

    const replay = await svc.request(`/v1/datasets/${ds}/uploads`, { key, json: { filename: 'a.csv' }, idempotencyKey: 'upload-kept' });
    expect(replay.status).to.equal(201);
    expect(replay.headers.get('idempotent-replayed')).to.equal('true');
    expect(replay.text).to.equal(first.text);
    expect(replay.headers.get('content-type')).to.equal(first.headers.get('content-type'));

    const put = await fetch(replay.json.url, { method: 'PUT', body: 'contractId\n', headers: { 'content-type': 'text/csv' } });
    expect(put.status).to.equal(200);
  });
});
