import { expect } from 'chai';
import { chmod, mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from '../shared/platform/embeddedPostgres.ts';
import { runScript, startScript } from './support/processes.ts';

describe('npm start on the embedded database (the newcomer path)', function () {
  this.timeout(120_000);

  it('when started without DATABASE_URL, then it serves, the operator attaches to its database, and SIGTERM stops everything', async () => {
    const dataDir = await mkdtemp(join(tmpdir(), 'dataset-service-start-'));
    // mkdtemp makes it private; PostgreSQL runs as its own user (we are root here) and must reach it.
    await chmod(dataDir, 0o755);
    // DATABASE_URL empty counts as unset: this test always runs on an embedded server.
    const env = { DATABASE_URL: '', DATA_DIR: dataDir };
    const port = await freePort();
    const start = await startScript('bin/start.ts', { ...env, PORT: String(port) }, /dataset service ready/);
    try {
      const account = JSON.parse((await runScript('bin/operator.ts', ['accounts', 'create', '--name', 'Newcomer', '--json'], env)).stdout);
      const issued = await runScript('bin/operator.ts', ['keys', 'issue', '--account', account.id, '--mode', 'test', '--json'], env);
      expect(issued.code, issued.stderr).to.equal(0);
      const { key } = JSON.parse(issued.stdout);
      const created = await fetch(`http://127.0.0.1:${port}/v1/datasets`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'idempotency-key': 'first', 'content-type': 'application/json' },
        body: JSON.stringify({ externalRef: 'hello' }),
      });
      expect(created.status).to.equal(201);
      const state = JSON.parse(await readFile(join(dataDir, 'postgres.json'), 'utf8'));
      expect(state.port).to.not.equal(5432);
    } finally {
      start.child.kill('SIGTERM');
    }
    expect(await start.exited).to.equal(0);
    const after = await fetch(`http://127.0.0.1:${port}/healthz`).then(() => 'served', () => 'refused');
    expect(after).to.equal('refused');
    await rm(dataDir, { recursive: true, force: true });
  });
});
