import { expect } from 'chai';
import { once } from 'node:events';
import { connect } from 'node:net';
import { createDataset } from '../shared/domain/datasets.ts';
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

  it('when a client stalls mid-body, then SIGTERM still stops the web process within SHUTDOWN_TIMEOUT_MS, cutting that request', async function () {
    this.timeout(30_000);
    const pool = createPool(database.url, 1, 'test');
    const account = await createAccount(pool, 'Stalled');
    const { key } = await issueKey(pool, account.id, 'test');
    const ds = await createDataset(pool, { accountId: account.id, mode: 'test' }, { externalRef: 'stalled' });
    await pool.end();
    const port = await freePort();
    const web = await startScript('api/main.ts', { DATABASE_URL: database.url, PORT: String(port), SHUTDOWN_TIMEOUT_MS: '1000' }, /api listening/);
    // A chunked text/csv body: its header row, then nothing more, ever.
    const socket = connect(port, '127.0.0.1');
    await once(socket, 'connect');
    socket.on('error', () => {});
    socket.write(
      `POST /v1/datasets/${ds.id}/versions HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${key}\r\nIdempotency-Key: stalled-1\r\n` +
        'Content-Type: text/csv\r\nTransfer-Encoding: chunked\r\n\r\n1e\r\ncontractId,customer,startDate\n\r\n',
    );
    await new Promise((r) => setTimeout(r, 300));
    const started = Date.now();
    web.child.kill('SIGTERM');
    expect(await web.exited).to.equal(0);
    expect(Date.now() - started).to.be.below(8_000);
    socket.destroy();
  });

  it('when the worker process gets SIGTERM, then it stops its queue and exits 0', async () => {
    const worker = await startScript('worker/main.ts', { DATABASE_URL: database.url }, /worker started/);
    worker.child.kill('SIGTERM');
    expect(await worker.exited).to.equal(0);
    expect(worker.output()).to.match(/"clean":true/);
  });
});
