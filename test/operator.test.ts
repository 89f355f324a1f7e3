import { expect } from 'chai';
import { sha256 } from '../shared/platform/ids.ts';
import { listMigrations } from '../shared/platform/migrate.ts';
import { createTestDatabase } from './setup/database.ts';
import { runScript } from './support/processes.ts';
import { eventually } from './support/eventually.ts';
import { useService } from './support/service.ts';

describe('operator command line', () => {
  let env: Record<string, string>;
  const svc = useService({ worker: false });
  before(async () => {
    env = { DATABASE_URL: svc.databaseUrl };
  });

  const operator = (...args: string[]) => runScript('bin/operator.ts', args, env);
  /** A command for scripts (--json): exit 0 and one JSON document. */
  const ok = async (...args: string[]) => {
    const out = await operator(...args, '--json');
    expect(out.code, out.stderr).to.equal(0);
    return JSON.parse(out.stdout);
  };

  it('when an account is created and listed, then each prints one JSON document', async () => {
    const account = await ok('accounts', 'create', '--name', 'Acme Ltd');
    expect(account).to.include({ object: 'account', name: 'Acme Ltd' });
    expect(account.id).to.match(/^acc_/);
    const list = await ok('accounts', 'list');
    expect(list.map((a: { id: string }) => a.id)).to.include(account.id);
  });

  it('when an option is given twice, then the command is refused with exit 2 and nothing is issued', async () => {
    const account = await ok('accounts', 'create', '--name', 'Twice Ltd');
    const out = await operator('keys', 'issue', '--account', account.id, '--mode', 'test', '--mode', 'live');
    expect(out.code).to.equal(2);
    expect(out.stderr).to.match(/--mode is given more than once/);
    expect(out.stdout).to.equal('');
    expect(await ok('keys', 'list', '--account', account.id)).to.deep.equal([]);
  });

  it('when a key is issued, then it is shown once, works on /v1, is listed without its secret and can be revoked', async () => {
    const account = await ok('accounts', 'create', '--name', 'Keys Inc');
    const issued = await ok('keys', 'issue', '--account', account.id, '--mode', 'live');
    expect(issued.key).to.match(/^svc_live_[A-Za-z0-9_-]{43}$/);
    expect(issued.label).to.equal(issued.key.slice(0, 12));
    expect(issued).to.include({ mode: 'live' });
    expect(issued.id).to.match(/^key_/);
    expect((await svc.request('/v1/datasets', { key: issued.key })).status).to.equal(200);

    const listed = await operator('keys', 'list', '--account', account.id, '--json');
    expect(listed.stdout).not.to.include(issued.key.slice(12));
    const [entry] = JSON.parse(listed.stdout);
    expect(entry).to.have.keys('id', 'object', 'accountId', 'label', 'mode', 'createdAt', 'lastUsedAt', 'revokedAt');
    expect(entry.revokedAt).to.equal(null);

    const revoked = await ok('keys', 'revoke', issued.id);
    expect(revoked.id).to.equal(issued.id);
    expect(revoked.revokedAt).to.be.a('string');
    expect((await svc.request('/v1/datasets', { key: issued.key })).status).to.equal(401);
  });

  it('when a member is added, then the person is created if new and linked once', async () => {
    const account = await ok('accounts', 'create', '--name', 'Members Co');
    const first = await ok('members', 'add', '--account', account.id, '--email', 'Ann@Example.com');
    expect(first).to.include({ accountId: account.id, email: 'ann@example.com' });
    expect(first.status).to.equal('pending');
    expect(first.signedUp).to.equal(false);
    expect(first.invitationCode).to.match(/^inv_[0-9a-z]{20}$/);
    expect(Date.parse(first.invitationExpiresAt) - Date.now()).to.be.within(6.9 * 86_400_000, 7 * 86_400_000);
    const again = await ok('members', 'add', '--account', account.id, '--email', 'ann@example.com');
    expect(again.personId).to.equal(first.personId);
    // Still pending: a new code replaces the first, which no longer works.
    expect(again.invitationCode).to.match(/^inv_/).and.not.equal(first.invitationCode);
    const { rows } = await svc.db.query('SELECT count(*) FROM memberships WHERE account_id = $1', [account.id]);
    expect(Number(rows[0].count)).to.equal(1);
    const stored = await svc.db.query('SELECT invitation_sha256 FROM memberships WHERE account_id = $1', [account.id]);
    expect(stored.rows[0].invitation_sha256.equals(sha256(again.invitationCode))).to.equal(true);
  });

  it('when a member is removed, then the link goes and a second removal is exit 3 (not found)', async () => {
    const account = await ok('accounts', 'create', '--name', 'Leaving Co');
    await ok('members', 'add', '--account', account.id, '--email', 'leaver@example.com');
    const removed = await ok('members', 'remove', '--account', account.id, '--email', 'Leaver@Example.com');
    expect(removed).to.include({ accountId: account.id, email: 'leaver@example.com', removed: true, grantsRevoked: 0 });
    const { rows } = await svc.db.query('SELECT count(*) FROM memberships WHERE account_id = $1', [account.id]);
    expect(Number(rows[0].count)).to.equal(0);
    const again = await operator('members', 'remove', '--account', account.id, '--email', 'leaver@example.com');
    expect(again.code).to.equal(3);
    expect(again.stdout).to.equal('');
  });

  it('when usage is asked, then live-mode metered usage is printed per day and in total', async () => {
    const account = await ok('accounts', 'create', '--name', 'Usage GmbH');
    await svc.db.query(
      "INSERT INTO usage_counters VALUES ($1, '2026-11-01', 'requests', 5), ($1, '2026-11-02', 'requests', 2), ($1, '2026-11-02', 'rows_ingested', 1000)",
      [account.id],
    );
    const usage = await ok('usage', '--account', account.id, '--from', '2026-11-02');
    expect(usage).to.include({ accountId: account.id, requests: 2, rowsIngested: 1000, exportRows: 0 });
    expect(usage.days).to.deep.equal([{ day: '2026-11-02', requests: 2, rowsIngested: 1000, exportRows: 0 }]);
  });

  it('when usage is wrong, then exit 2; when an id is unknown, exit 3; one line on stderr and nothing on stdout', async () => {
    for (const [args, code] of [
      [['keys', 'issue', '--mode', 'test'], 2],
      [['accounts', 'explode'], 2],
      [['accounts', 'create', '--bogus', 'x'], 2],
      [['usage', '--account', 'acc_x', '--from', '2026-13-01'], 2],
      [['keys', 'rotate', 'key_x', '--grace', 'soon'], 2],
      [['jobs', 'list', '--failed', '--state', 'active'], 2],
      [['keys', 'issue', '--account', 'acc_nope', '--mode', 'test'], 3],
      [['keys', 'revoke', 'key_nope'], 3],
      [['usage', '--account', 'acc_nope'], 3],
      [['versions', 'list', '--dataset', 'ds_nope'], 3],
    ] as [string[], number][]) {
      const out = await operator(...args);
      expect(out.code, args.join(' ')).to.equal(code);
      expect(out.stdout).to.equal('');
      expect(out.stderr.trim().split('\n')[0]).to.match(/^(operator|error): /);
    }
  });

  it('when a key is rotated, then a new key works at once and the old one until the grace period ends; --grace 0 retires it at once', async () => {
    const account = await ok('accounts', 'create', '--name', 'Rotating Ltd');
    const old = await ok('keys', 'issue', '--account', account.id, '--mode', 'test');
    const rotated = await ok('keys', 'rotate', old.id, '--grace', '2h');
    expect(rotated.issued.key).to.match(/^svc_test_/).and.not.equal(old.key);
    expect(Date.parse(rotated.retired.revokedAt) - Date.now()).to.be.within(2 * 3600_000 - 60_000, 2 * 3600_000);
    expect((await svc.request('/v1/datasets', { key: rotated.issued.key })).status).to.equal(200);
    expect((await svc.request('/v1/datasets', { key: old.key })).status).to.equal(200);
    const defaulted = await ok('keys', 'rotate', rotated.issued.id);
    expect(Date.parse(defaulted.retired.revokedAt) - Date.now()).to.be.within(24 * 3600_000 - 60_000, 24 * 3600_000);
    const now = await ok('keys', 'rotate', defaulted.issued.id, '--grace', '0');
    expect((await svc.request('/v1/datasets', { key: defaulted.issued.key })).status).to.equal(401);
    expect((await svc.request('/v1/datasets', { key: now.issued.key })).status).to.equal(200);
    // The grace period ended (moved into the past here): the old key stops working.
    await svc.db.query(`UPDATE api_keys SET revoked_at = now() - interval '1 second' WHERE id = $1`, [old.id]);
    expect((await svc.request('/v1/datasets', { key: old.key })).status).to.equal(401);
    const again = await operator('keys', 'rotate', old.id);
    expect(again.code).to.equal(2);
    expect(again.stderr).to.match(/revoked already/);
  });

  it('when datasets and versions are listed, then an account\'s datasets and a dataset\'s versions come newest first', async () => {
    const account = await ok('accounts', 'create', '--name', 'Listing Ltd');
    const key = (await ok('keys', 'issue', '--account', account.id, '--mode', 'test')).key as string;
    const { HEADER, newDataset, postCsv } = await import('./support/ingest.ts');
    const first = await newDataset(svc, key);
    const second = await newDataset(svc, key);
    const datasets = await ok('datasets', 'list', '--account', account.id);
    expect(datasets.map((d: { id: string }) => d.id)).to.deep.equal([second, first]);
    expect(await ok('datasets', 'list', '--account', account.id, '--mode', 'live')).to.deep.equal([]);
    const version = await postCsv(svc, key, first, `${HEADER}\nc1,Acme,Pro,2026-01-01,2026-12-31,1.00,EUR\n`, { wait: 0 });
    const versions = await ok('versions', 'list', '--dataset', first);
    expect(versions.map((v: { id: string }) => v.id)).to.deep.equal([version.json.id]);
    expect(versions[0]).to.have.keys('id', 'status', 'rowCount', 'problem', 'createdAt', 'completedAt', 'rowsPurgedAt');
    // For people: a table with a header line.
    const human = await operator('datasets', 'list', '--account', account.id);
    expect(human.code).to.equal(0);
    expect(human.stdout.split('\n')[0]).to.match(/^id\s+object\s+externalRef\s+name\s+mode\s+activeVersionId\s+createdAt$/);
    expect(human.stdout).to.include(first);
  });

  it('when the database cannot be reached, then exit 1', async () => {
    const out = await runScript('bin/operator.ts', ['accounts', 'list'], { DATABASE_URL: 'postgres://nobody:x@127.0.0.1:9/none' });
    expect(out.code).to.equal(1);
    expect(out.stdout).to.equal('');
  });

  it('when migrations run from two processes at once, then both succeed and each file is applied once', async () => {
    const fresh = await createTestDatabase();
    try {
      const { createPool } = await import('../shared/platform/db.ts');
      const pool = createPool(fresh.url, 2, 'test');
      await pool.query('DROP SCHEMA public CASCADE; CREATE SCHEMA public');
      await pool.end();
      const [a, b] = await Promise.all([
        runScript('bin/release.ts', [], { DATABASE_URL: fresh.url }),
        runScript('bin/release.ts', [], { DATABASE_URL: fresh.url }),
      ]);
      expect([a.code, b.code], a.stderr + b.stderr).to.deep.equal([0, 0]);
      const check = createPool(fresh.url, 1, 'test');
      const { rows } = await check.query('SELECT version FROM schema_migrations');
      await check.end();
      const files = (await listMigrations()).map((m) => m.version);
      expect(files.length).to.be.greaterThan(3);
      expect(rows.map((r: { version: number }) => r.version)).to.deep.equal(files);
    } finally {
      await fresh.drop();
    }
  });
});

describe('operator: failed and dead-lettered jobs', () => {
  const svc = useService();

  const operator = (...args: string[]) => runScript('bin/operator.ts', args, { DATABASE_URL: svc.databaseUrl });

  it('when a build job is dead-lettered, then jobs list shows it and jobs retry builds the version', async () => {
    const { key } = await svc.tenant();
    const { HEADER, newDataset, postCsv } = await import('./support/ingest.ts');
    const { queues } = await import('../shared/platform/queue.ts');
    const ds = await newDataset(svc, key);
    // A version whose build failed for good (as after its last retry), with its job dead-lettered.
    await svc.worker!.boss.offWork(queues.buildVersion);
    const version = await postCsv(svc, key, ds, `${HEADER}\nc1,Acme,,2026-01-01,2026-12-31,5,EUR\n`, { wait: 0 });
    await svc.db.query(
      `UPDATE versions SET status = 'failed', problem = '{"type":"internal","detail":"x","errorCount":0}' WHERE id = $1`,
      [version.json.id],
    );
    await svc.db.query(`DELETE FROM pgboss.job WHERE name = $1`, [queues.buildVersion]);
    const deadId = await svc.worker!.boss.send(queues.buildVersionDead, { versionId: version.json.id });

    const listed = await operator('jobs', 'list', '--failed', '--json');
    expect(listed.code, listed.stderr).to.equal(0);
    const jobs = JSON.parse(listed.stdout);
    expect(jobs).to.have.length(1);
    expect(jobs[0]).to.include({ id: deadId, queue: queues.buildVersionDead, deadLettered: true });
    expect(jobs[0].data).to.deep.equal({ versionId: version.json.id });

    const { startWorker } = await import('../worker/worker.ts');
    const { createLogger } = await import('../shared/platform/log.ts');
    const worker = await startWorker(svc.config, svc.databaseUrl, createLogger({ logLevel: 'silent' }, 'w'));
    try {
      const retried = await operator('jobs', 'retry', deadId!, '--json');
      expect(retried.code, retried.stderr).to.equal(0);
      expect(JSON.parse(retried.stdout)).to.include({ queue: queues.buildVersion, retried: true });
      const built = await eventually(() => svc.request(`/v1/datasets/${ds}/versions/${version.json.id}`, { key }), (r) => r.json.status === 'active');
      expect(built.json.status).to.equal('active');
      expect(JSON.parse((await operator('jobs', 'list', '--failed', '--json')).stdout)).to.deep.equal([]);
      const all = JSON.parse((await operator('jobs', 'list', '--json')).stdout);
      expect(all.queues.map((q: { queue: string }) => q.queue)).to.include(queues.buildVersion);
      expect(all.jobs.some((j: { queue: string; state: string }) => j.queue === queues.buildVersion && j.state === 'completed')).to.equal(true);
      const again = await operator('jobs', 'retry', deadId!);
      expect(again.code).to.equal(3); // no failed job by that id any more
    } finally {
      await worker.stop();
    }
  });
});
