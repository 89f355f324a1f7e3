import { expect } from 'chai';
import { createAccount } from '../shared/tenancy/accounts.ts';
import { issueKey } from '../shared/tenancy/apiKeys.ts';
import { createPool } from '../shared/platform/db.ts';
import { freePort } from '../shared/platform/embeddedPostgres.ts';
import { createTestDatabase } from './setup/database.ts';
import { runScript, startScript } from './support/processes.ts';
import { slowPost } from './support/slowRequest.ts';

describe('processes: configuration and graceful shutdown', () => {
  let database: { url: string; drop(): Promise<void> };
  before(async () => (database = await createTestDatabase()));
  after(() => database.drop());

  it('when a variable is invalid, then the process stops at once naming it', async () => {
    const out = await runScript('api/main.ts', [], { DATABASE_URL: database.url, PORT: 'eighty' });
    expect(out.code).to.equal(1);
    expect(out.stderr).to.match(/PORT/);
  });

  it('when the web process gets SIGTERM, then it stops accepting, finishes the request in flight and exits 0', async () => {
    const pool = createPool(database.url, 1, 'test');
    const account = await createAccount(pool, 'Shutdown');
    const { key } = await issueKey(pool, account.id, 'test');
    await pool.end();
    const port = await freePort();
    const web = await startScript('api/main.ts', { DATABASE_URL: database.url, PORT: String(port) }, /api listening/);

    const inFlight = slowPost(
      `http://127.0.0.1:${port}/v1/datasets`,
      { authorization: `Bearer ${key}`, 'idempotency-key': 'sd-1', 'content-type': 'application/json' },
      JSON.stringify({ externalRef: 'in-flight' }),
      500,
    );
    await new Promise((r) => setTimeout(r, 150));
    web.child.kill('SIGTERM');
    await new Promise((r) => setTimeout(r, 100));
    const refused = await fetch(`http://127.0.0.1:${port}/healthz`).then(() => 'served', () => 'refused');
    const finished = await inFlight;
    expect(refused).to.equal('refused');
    expect(finished.status).to.equal(201);
    expect(JSON.parse(finished.text).externalRef).to.equal('in-flight');
    expect(await web.exited).to.equal(0);
  });

  it('when the worker process gets SIGTERM, then it stops its queue and exits 0', async () => {
    const worker = await startScript('worker/main.ts', { DATABASE_URL: database.url }, /worker started/);
    worker.child.kill('SIGTERM');
    expect(await worker.exited).to.equal(0);
    expect(worker.output()).to.match(/"clean":true/);
  });
});
