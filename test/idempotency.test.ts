import { expect } from 'chai';
import { queues } from '../shared/platform/queue.ts';
import { useService } from './support/service.ts';
import { slowPost } from './support/slowRequest.ts';
import { eventually } from './support/eventually.ts';
import { createHash } from 'node:crypto';
import { contractsCsv } from './support/contracts.ts';
import { newDataset, postCsv } from './support/ingest.ts';

describe('idempotency filter (../shared/spec/service-spec.md §7)', () => {
  let key: string;
  let accountId: string;
  const svc = useService();
  before(async () => {
    ({ key, accountId } = await svc.tenant());
  });

  const count = async (table: string) => Number((await svc.db.query(`SELECT count(*) FROM ${table}`)).rows[0].count);
  const create = (externalRef: string, idempotencyKey: string | null, k = key) =>
    svc.request('/v1/datasets', { key: k, idempotencyKey, json: { externalRef } });

  it('when a mutating call has no Idempotency-Key, then 400 idempotency-key-required, without instance, and nothing runs', async () => {
    const before = await count('datasets');
    const reply = await create('no-key', null);
    expect(reply.status).to.equal(400);
    expect(reply.json).to.include({ type: `${svc.config.errorsBase}/idempotency-key-required`, title: 'Bad Request', status: 400 });
    expect(reply.json).not.to.have.property('instance');
    expect(await count('datasets')).to.equal(before);
  });

  it('when the key is longer than 255 characters or not printable ASCII, then 400 bad-request', async () => {
    for (const bad of ['k'.repeat(256), 'clé']) {
      const reply = await svc.request('/v1/datasets', { key, headers: { 'idempotency-key': bad }, json: { externalRef: 'x' }, idempotencyKey: null });
      expect(reply.status).to.equal(400);
      expect(reply.json.type).to.equal(`${svc.config.errorsBase}/bad-request`);
      expect(reply.json.errors[0].field).to.equal('Idempotency-Key');
    }
  });

  it('when the same key comes with the same body, then the original response is replayed byte for byte and nothing runs twice', async () => {
    const first = await create('replay-1', 'replay-key-1');
    const second = await create('replay-1', 'replay-key-1');
    expect(first.status).to.equal(201);
    expect(second.status).to.equal(201);
    expect(second.text).to.equal(first.text);
    expect(second.headers.get('location')).to.equal(first.headers.get('location'));
    expect(second.headers.get('content-type')).to.equal(first.headers.get('content-type'));
    expect(second.headers.get('idempotent-replayed')).to.equal('true');
    expect(first.headers.get('idempotent-replayed')).to.equal(null);
    const { rows } = await svc.db.query('SELECT count(*) FROM datasets WHERE external_ref = $1', ['replay-1']);
    expect(Number(rows[0].count)).to.equal(1);
  });

  it('when the same key comes with a different body, then 422 idempotency-key-reused and the first is kept', async () => {
    const first = await create('reuse-a', 'reuse-key');
    const second = await create('reuse-b', 'reuse-key');
    expect(second.status).to.equal(422);
    expect(second.json).to.include({ type: `${svc.config.errorsBase}/idempotency-key-reused`, title: 'Unprocessable Entity', status: 422 });
    expect(second.json).not.to.have.property('instance');
    expect((await svc.db.query("SELECT 1 FROM datasets WHERE external_ref = 'reuse-b'")).rowCount).to.equal(0);
    const third = await create('reuse-a', 'reuse-key');
    expect(third.text).to.equal(first.text);
  });

  it('when the same key is used on another path, then it is a different request (422)', async () => {
    await create('path-a', 'path-key');
    const other = await svc.request('/v1/datasets/ds_x', { key, idempotencyKey: 'path-key', json: { externalRef: 'path-a' } });
    expect(other.status).to.equal(422);
  });

  it('when a validation error is replayed, then the 4xx comes back, and a corrected body needs a new key', async () => {
    const bad = await svc.request('/v1/datasets', { key, idempotencyKey: 'fix-key', json: { name: 'no ref' } });
    expect(bad.status).to.equal(400);
    const again = await svc.request('/v1/datasets', { key, idempotencyKey: 'fix-key', json: { name: 'no ref' } });
    expect(again.status).to.equal(400);
    expect(again.text).to.equal(bad.text);
    expect(again.headers.get('idempotent-replayed')).to.equal('true');
    const corrected = await svc.request('/v1/datasets', { key, idempotencyKey: 'fix-key', json: { externalRef: 'fixed' } });
    expect(corrected.status).to.equal(422);
    const fresh = await svc.request('/v1/datasets', { key, idempotencyKey: 'fix-key-2', json: { externalRef: 'fixed' } });
    expect(fresh.status).to.equal(201);
  });

  it('when 20 requests with one key arrive at once, then one dataset is created and all 20 get the same answer', async () => {
    const replies = await Promise.all(Array.from({ length: 20 }, () => create('concurrent-1', 'concurrent-key')));
    expect(replies.map((r) => r.status)).to.deep.equal(Array(20).fill(201));
    expect(new Set(replies.map((r) => r.text)).size).to.equal(1);
    expect(replies.filter((r) => r.headers.get('idempotent-replayed') === 'true')).to.have.length(19);
    const { rows } = await svc.db.query("SELECT count(*) FROM datasets WHERE external_ref = 'concurrent-1'");
    expect(Number(rows[0].count)).to.equal(1);
  });

  it('when 20 requests with one key but different bodies arrive at once, then exactly one runs and the others are refused', async () => {
    const replies = await Promise.all(Array.from({ length: 20 }, (_, i) => create(`race-${i}`, 'race-key')));
    expect(replies.filter((r) => r.status === 201)).to.have.length(1);
    expect(replies.filter((r) => r.status === 422)).to.have.length(19);
    const { rows } = await svc.db.query("SELECT count(*) FROM datasets WHERE external_ref LIKE 'race-%'");
    expect(Number(rows[0].count)).to.equal(1);
  });

  it('when keys are scoped per account and mode, then the same key runs independently for each', async () => {
    const live = await svc.key(accountId, 'live');
    const other = await svc.tenant();
    const a = await create('scoped', 'scoped-key');
    const b = await create('scoped', 'scoped-key', live);
    const c = await create('scoped', 'scoped-key', other.key);
    expect([a.status, b.status, c.status]).to.deep.equal([201, 201, 201]);
    expect(new Set([a.json.id, b.json.id, c.json.id]).size).to.equal(3);
  });

  it('when the first request ended in a 5xx, then it is not kept and a retry with the same key runs afresh', async () => {
    await svc.db.query('ALTER TABLE datasets RENAME TO datasets_away');
    let failed;
    try {
      failed = await create('after-fault', 'fault-key');
    } finally {
      await svc.db.query('ALTER TABLE datasets_away RENAME TO datasets');
    }
    expect(failed.status).to.equal(500);
    expect(failed.json.type).to.equal(`${svc.config.errorsBase}/internal`);
    expect(failed.json.detail).not.to.match(/datasets|relation|SELECT|INSERT/i);
    expect(failed.text).not.to.match(/relation|datasets_away|SELECT|INSERT/i);
    const retry = await create('after-fault', 'fault-key');
    expect(retry.status).to.equal(201);
    expect(retry.headers.get('idempotent-replayed')).to.equal(null);
  });

  it('when a record is older than 24 hours, then the key runs afresh, and the scheduled purge deletes it', async () => {
    await create('old-1', 'old-key');
    await svc.db.query("UPDATE idempotency_keys SET created_at = now() - interval '25 hours' WHERE key = 'old-key'");
    const fresh = await create('old-2', 'old-key');
    expect(fresh.status).to.equal(201);

    await create('old-3', 'old-key-2');
    await svc.db.query("UPDATE idempotency_keys SET created_at = now() - interval '25 hours' WHERE key = 'old-key-2'");
    const schedules = await svc.worker!.boss.getSchedules();
    expect(schedules.map((s) => s.name)).to.include(queues.purgeIdempotencyKeys);
    await svc.worker!.boss.send(queues.purgeIdempotencyKeys, {});
    await eventually(async () => (await svc.db.query("SELECT 1 FROM idempotency_keys WHERE key = 'old-key-2'")).rowCount, (n) => n === 0);
    expect((await svc.db.query("SELECT 1 FROM idempotency_keys WHERE key = 'old-key-2'")).rowCount).to.equal(0);
    expect((await svc.db.query("SELECT 1 FROM idempotency_keys WHERE key = 'old-key'")).rowCount).to.equal(1);
  });

  it('when a second request arrives while the first is still sending its body, then it waits and replays the outcome', async () => {
    const slow = slowPost(
      `${svc.url}/v1/datasets`,
      { authorization: `Bearer ${key}`, 'idempotency-key': 'slow-key', 'content-type': 'application/json' },
      JSON.stringify({ externalRef: 'slow-1' }),
      400,
    );
    await new Promise((r) => setTimeout(r, 100));
    const second = await create('slow-1', 'slow-key');
    const first = await slow;
    expect(first.status).to.equal(201);
    expect(second.status).to.equal(201);
    expect(second.text).to.equal(first.text);
    expect(second.headers.get('idempotent-replayed')).to.equal('true');
  });

  it('when a file is posted as the body, then the one hash taken as it streams is both its fingerprint and its blob\'s SHA-256', async () => {
    const ds = await newDataset(svc, key);
    // Many socket reads, and a bad row so that the version fails and keeps its blob to look at.
    const csv = contractsCsv(6_000, { badEvery: 5_000 });
    const first = await postCsv(svc, key, ds, csv, { idempotencyKey: `digest-${ds}` });
    expect(first.status, first.text).to.equal(422);
    const { rows } = await svc.db.query<{ sha256: Buffer; bytes: string }>(
      'SELECT b.sha256, b.bytes FROM versions v JOIN blobs b ON b.id = v.blob_id WHERE v.dataset_id = $1',
      [ds],
    );
    expect(rows).to.have.length(1);
    expect(Number(rows[0]!.bytes)).to.equal(Buffer.byteLength(csv));
    expect(rows[0]!.sha256.toString('hex')).to.equal(createHash('sha256').update(csv).digest('hex'));

    const replay = await postCsv(svc, key, ds, csv, { idempotencyKey: `digest-${ds}` });
    expect(replay.text).to.equal(first.text);
    expect(replay.headers.get('idempotent-replayed')).to.equal('true');
    const changed = await postCsv(svc, key, ds, `${csv}\n`, { idempotencyKey: `digest-${ds}` });
    expect(changed.json.type).to.equal(`${svc.config.errorsBase}/idempotency-key-reused`);
  });
});
