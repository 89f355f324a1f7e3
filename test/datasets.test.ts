import { expect } from 'chai';
import { useService } from './support/service.ts';

describe('datasets', () => {
  let key: string;
  let accountId: string;
  const svc = useService();
  before(async () => {
    ({ key, accountId } = await svc.tenant());
  });

  it('when a dataset is created, then 201 returns it with Location, and GET reads it back', async () => {
    const created = await svc.request('/v1/datasets', { key, json: { externalRef: 'crm-2026', name: 'CRM export' } });
    expect(created.status).to.equal(201);
    expect(created.json).to.include({ object: 'dataset', externalRef: 'crm-2026', name: 'CRM export', mode: 'test', activeVersionId: null });
    expect(created.json.id).to.match(/^ds_[0-9a-z]{20}$/);
    expect(new Date(created.json.createdAt).toISOString()).to.equal(created.json.createdAt);
    expect(created.headers.get('location')).to.equal(`${svc.url}/v1/datasets/${created.json.id}`);
    const read = await svc.request(`/v1/datasets/${created.json.id}`, { key });
    expect(read.status).to.equal(200);
    expect(read.json).to.deep.equal(created.json);
  });

  it('when an externalRef already exists on the account, then 409 conflict names the existing dataset', async () => {
    const first = await svc.request('/v1/datasets', { key, json: { externalRef: 'dup-ref' } });
    const second = await svc.request('/v1/datasets', { key, json: { externalRef: 'dup-ref' } });
    expect(second.status).to.equal(409);
    expect(second.json).to.include({ type: `${svc.config.errorsBase}/conflict`, title: 'Conflict', status: 409, existingId: first.json.id, instance: '/v1/datasets' });
  });

  it('when the same externalRef is used in live mode, then it is a separate dataset (modes never mix)', async () => {
    const live = await svc.key(accountId, 'live');
    await svc.request('/v1/datasets', { key, json: { externalRef: 'both-modes' } });
    const inLive = await svc.request('/v1/datasets', { key: live, json: { externalRef: 'both-modes' } });
    expect(inLive.status).to.equal(201);
    expect(inLive.json.mode).to.equal('live');
  });

  it('when a dataset belongs to another account or the other mode, then it answers exactly as a missing one', async () => {
    const mine = await svc.request('/v1/datasets', { key, json: { externalRef: 'private' } });
    const other = await svc.tenant();
    const live = await svc.key(accountId, 'live');
    const path = `/v1/datasets/${mine.json.id}`;
    const fromOther = await svc.request(path, { key: other.key });
    const fromLive = await svc.request(path, { key: live });
    expect(fromOther.status).to.equal(404);
    expect(fromOther.json).to.include({ type: `${svc.config.errorsBase}/not-found`, title: 'Not found', status: 404, instance: path });
    expect(fromLive.text).to.equal(fromOther.text);
    const missing = await svc.request('/v1/datasets/ds_00000000000000000000', { key: other.key });
    expect(missing.json.title).to.equal(fromOther.json.title);
    expect(missing.json.type).to.equal(fromOther.json.type);
    const list = await svc.request(`/v1/datasets?externalRef=private`, { key: other.key });
    expect(list.json.data).to.deep.equal([]);
  });

  it('when listing, then newest first, paginated with limit and cursor, and filtered by externalRef', async () => {
    const tenant = await svc.tenant();
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) ids.push((await svc.request('/v1/datasets', { key: tenant.key, json: { externalRef: `page-${i}` } })).json.id);
    const page1 = await svc.request('/v1/datasets?limit=2', { key: tenant.key });
    expect(page1.json.object).to.equal('list');
    expect(page1.json.data.map((d: { id: string }) => d.id)).to.deep.equal([ids[4], ids[3]]);
    const page2 = await svc.request(`/v1/datasets?limit=2&cursor=${page1.json.nextCursor}`, { key: tenant.key });
    expect(page2.json.data.map((d: { id: string }) => d.id)).to.deep.equal([ids[2], ids[1]]);
    const page3 = await svc.request(`/v1/datasets?limit=2&cursor=${page2.json.nextCursor}`, { key: tenant.key });
    expect(page3.json.data.map((d: { id: string }) => d.id)).to.deep.equal([ids[0]]);
    expect(page3.json.nextCursor).to.equal(null);
    const all = await svc.request('/v1/datasets', { key: tenant.key });
    expect(all.json.data).to.have.length(5);
    const filtered = await svc.request('/v1/datasets?externalRef=page-3', { key: tenant.key });
    expect(filtered.json.data.map((d: { id: string }) => d.id)).to.deep.equal([ids[3]]);
  });

  it('when the query is invalid, then 400 bad-request lists each problem', async () => {
    for (const query of ['limit=0', 'limit=101', 'limit=abc', 'cursor=ds_unknown']) {
      const reply = await svc.request(`/v1/datasets?${query}`, { key });
      expect(reply.status, query).to.equal(400);
      expect(reply.json.type).to.equal(`${svc.config.errorsBase}/bad-request`);
      expect(reply.json.errors[0].field).to.be.oneOf(['limit', 'cursor']);
    }
  });

  it('when the body fails its schema, then 400 bad-request with an entry per field', async () => {
    const reply = await svc.request('/v1/datasets', { key, json: { externalRef: 'x'.repeat(201), name: 5, color: 'red' } });
    expect(reply.status).to.equal(400);
    expect(reply.json.instance).to.equal('/v1/datasets');
    const byField = Object.fromEntries(reply.json.errors.map((e: { field: string; code: string }) => [e.field, e.code]));
    expect(byField).to.deep.equal({ externalRef: 'too_long', name: 'invalid_type', color: 'unknown_field' });
    const missing = await svc.request('/v1/datasets', { key, json: {} });
    expect(missing.json.errors).to.deep.include({ field: 'externalRef', code: 'required', message: 'externalRef is required.' });
    const notObject = await svc.request('/v1/datasets', { key, json: [1, 2] });
    expect(notObject.status).to.equal(400);
  });

  it('when the body is not JSON, then 400 for malformed JSON and 415 for another content type', async () => {
    const malformed = await svc.request('/v1/datasets', { key, body: '{"externalRef":', headers: { 'content-type': 'application/json' } });
    expect(malformed.status).to.equal(400);
    expect(malformed.json.errors[0].code).to.equal('malformed_json');
    const form = await svc.request('/v1/datasets', { key, body: 'externalRef=a', headers: { 'content-type': 'application/x-www-form-urlencoded' } });
    expect(form.status).to.equal(415);
    expect(form.json.type).to.equal(`${svc.config.errorsBase}/unsupported-media-type`);
  });

  it('when the JSON body is larger than 1 MiB, then 413 payload-too-large', async () => {
    const reply = await svc.request('/v1/datasets', { key, json: { externalRef: 'big', name: 'x'.repeat(1024 * 1024) } });
    expect(reply.status).to.equal(413);
    expect(reply.json).to.include({ type: `${svc.config.errorsBase}/payload-too-large`, title: 'Payload Too Large' });
  });
});
