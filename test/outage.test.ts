// PostgreSQL going away and coming back while the service works. The test runs its own server
// (test/support/privateDatabase.ts), whatever DATABASE_URL says, because it must stop it; the web
// and the worker are real processes, so a crash shows as an exit.
import { expect } from 'chai';
import { CONTRACT_HEADER, contractBlocks, contractsCsv } from './support/contracts.ts';
import { eventually } from './support/eventually.ts';
import { startFleet, startPrivateDatabase, type Fleet, type PrivateDatabase } from './support/privateDatabase.ts';

// How long the database stays away once stopped. Stopping it already cut every connection (and
// the API's 503 is checked then): the processes have lost the database before this wait begins,
// and a longer one only adds reconnection attempts that fail alike.
const OUTAGE_MS = 1_000;

describe('a database restart while the service works', function () {
  this.timeout(180_000);
  let database: PrivateDatabase;
  let fleet: Fleet;
  let key: string;

  before(async () => {
    database = await startPrivateDatabase();
    // The worker looks for jobs whose worker let go of them (their heartbeat stopped) every second
    // rather than every 10: a build whose attempt failed while the database was away is retried
    // once its heartbeat lapses, without waiting for the next supervision; and that heartbeat
    // lapses after 10 s (pg-boss's floor) rather than the default 15.
    fleet = await startFleet(database, { QUEUE_SUPERVISE_INTERVAL_SECONDS: '1', QUEUE_HEARTBEAT_SECONDS: '10' });
    key = await fleet.key();
  });
  after(async () => {
    await fleet?.stop();
    await database?.destroy();
  });
  afterEach(function () {
    if (this.currentTest?.state === 'failed') {
      console.log('--- web\n' + fleet.web.output().slice(-30000) + '\n--- worker\n' + fleet.worker.output().slice(-4000));
    }
  });

  const newDataset = async () => {
    const reply = await fleet.request('/v1/datasets', { method: 'POST', key, headers: { 'content-type': 'application/json' }, body: JSON.stringify({ externalRef: crypto.randomUUID() }) });
    expect(reply.status, reply.text).to.equal(201);
    return reply.json.id as string;
  };

  /** Stops the database, checks what the API answers meanwhile, and starts it again. */
  async function outage(): Promise<void> {
    await database.stop();
    const during = await fleet.request('/v1/datasets', { key });
    expect(during.status, during.text).to.equal(503);
    expect(during.json.type).to.match(/\/unavailable$/);
    const ready = await fleet.request('/readyz');
    expect(ready.status).to.equal(503);
    await new Promise((r) => setTimeout(r, OUTAGE_MS));
    await database.start();
  }

  /** Every process is up, and the API serves again. */
  async function recovered(): Promise<void> {
    const served = await eventually(() => fleet.request('/v1/datasets', { key }), (r) => r.status === 200, { timeoutMs: 30_000, everyMs: 200 });
    expect(served.status, served.text).to.equal(200);
    expect(fleet.alive()).to.deep.equal({ web: true, worker: true });
  }

  it('when the database restarts mid-build, then both processes stay up, nothing partial is visible, and the build ends active after a retry', async () => {
    const ROWS = 300_000;
    const ds = await newDataset();
    const created = await fleet.request(`/v1/datasets/${ds}/versions`, {
      method: 'POST',
      key,
      headers: { 'content-type': 'text/csv', prefer: 'wait=0' },
      // The database stops as soon as the build reports its first rows: seconds of work are still ahead of it.
      body: contractsCsv(ROWS),
    });
    expect(created.status, created.text).to.be.oneOf([201, 202]);
    const versionPath = `/v1/datasets/${ds}/versions/${created.json.id}`;
    await eventually(() => fleet.request(versionPath, { key }), (r) => r.json?.progress?.rowsProcessed > 0, { everyMs: 20, timeoutMs: 20_000 });

    await outage();
    await recovered();
    // The outage cut the build short: its first attempt failed (the worker logs it).
    const failedAttempt = () => fleet.worker.output().split('\n').some((l) => l.includes('"build failed"') && l.includes(created.json.id));
    expect(await eventually(failedAttempt, (failed) => failed), 'the outage came after the build ended').to.equal(true);

    const version = await eventually(() => fleet.request(versionPath, { key }), (r) => ['active', 'failed'].includes(r.json?.status), { timeoutMs: 90_000, everyMs: 250 });
    expect(version.json.status, version.text).to.equal('active');
    expect(version.json.rowCount).to.equal(ROWS);
    const metrics = await fleet.request(`/v1/datasets/${ds}/metrics`, { key });
    expect(metrics.json.rows.total).to.equal(ROWS);
    const stored = await fleet.db.query('SELECT count(*)::int AS n FROM contract_rows WHERE version_id = $1', [created.json.id]);
    expect(stored.rows[0].n).to.equal(ROWS);
  });

  it('when the database restarts while a file streams in, then both processes stay up and no version is left building', async () => {
    const ds = await newDataset();
    const rows = contractBlocks(0, 200_000);
    let sent = 0;
    const body = new ReadableStream<Uint8Array>({
      async pull(controller) {
        if (sent === 0) controller.enqueue(new TextEncoder().encode(CONTRACT_HEADER));
        const next = rows.next();
        if (next.done) return controller.close();
        controller.enqueue(new TextEncoder().encode(next.value));
        sent++;
        await new Promise((r) => setTimeout(r, 20)); // ~3 MB/s: still streaming when the database stops
      },
    });
    const upload = fetch(`${fleet.url}/v1/datasets/${ds}/versions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'idempotency-key': crypto.randomUUID(), 'content-type': 'text/csv', prefer: 'wait=0' },
      body,
      duplex: 'half',
    } as RequestInit).then(
      async (r) => ({ status: r.status, text: await r.text() }),
      (error: Error) => ({ status: 0, text: error.message }),
    );
    await eventually(() => sent, (n) => n > 20, { everyMs: 20 });
    await outage();
    const answer = await upload;
    // The upload could not be stored: a 503 (or the connection cut), never a 500 or a 2xx.
    expect(answer.status, answer.text).to.be.oneOf([0, 503]);
    await recovered();

    const versions = await eventually(
      () => fleet.request(`/v1/datasets/${ds}/versions`, { key }),
      (r) => r.json?.data.every((v: { status: string }) => v.status === 'failed'),
      { timeoutMs: 90_000, everyMs: 500 },
    );
    for (const v of versions.json.data) expect(v.status, JSON.stringify(v)).to.equal('failed');
    const dataset = await fleet.request(`/v1/datasets/${ds}`, { key });
    expect(dataset.json.activeVersionId).to.equal(null);
  });

  it('when the database restarts during an export download, then both processes stay up and the export downloads again after', async () => {
    const ds = await newDataset();
    const built = await fleet.request(`/v1/datasets/${ds}/versions`, {
      method: 'POST',
      key,
      headers: { 'content-type': 'text/csv', prefer: 'wait=120' },
      body: contractsCsv(300_000),
    });
    expect(built.status, built.text).to.equal(201);
    const requested = await fleet.request(`/v1/datasets/${ds}/exports`, { method: 'POST', key, headers: { 'content-type': 'application/json' }, body: JSON.stringify({ format: 'csv' }) });
    expect(requested.status, requested.text).to.equal(202);
    const exportPath = `/v1/datasets/${ds}/exports/${requested.json.id}`;
    const ready = await eventually(() => fleet.request(exportPath, { key }), (r) => r.json?.status === 'ready', { timeoutMs: 60_000, everyMs: 200 });
    expect(ready.json.status).to.equal('ready');

    // Read the first bytes, then stall so the download is still streaming when the database stops.
    const download = await fetch(`${fleet.url}${exportPath}/content`, { headers: { authorization: `Bearer ${key}` } });
    expect(download.status).to.equal(200);
    const reader = download.body!.getReader();
    await reader.read();
    await outage();
    const rest = await (async () => {
      try {
        for (;;) if ((await reader.read()).done) return 'complete';
      } catch {
        return 'cut';
      }
    })();
    expect(rest).to.be.oneOf(['cut', 'complete']);
    await recovered();

    const again = await fetch(`${fleet.url}${exportPath}/content`, { headers: { authorization: `Bearer ${key}` } });
    expect(again.status).to.equal(200);
    expect((await again.text()).split('\n').length).to.equal(300_000 + 2); // header, rows, final newline
  });

  it('when the database is back, then a Prefer: wait upload is answered as soon as it is built (the listener reconnected)', async () => {
    await outage();
    await recovered();
    const ds = await newDataset();
    // Give the listener its backoff to come back, then measure.
    await new Promise((r) => setTimeout(r, 2_000));
    const started = performance.now();
    const created = await fleet.request(`/v1/datasets/${ds}/versions`, {
      method: 'POST',
      key,
      headers: { 'content-type': 'text/csv', prefer: 'wait=30' },
      body: contractsCsv(10),
    });
    const ms = performance.now() - started;
    expect(created.status, created.text).to.equal(201);
    // Without the notification the answer waits for the 1 s fallback poll.
    expect(ms).to.be.below(900);
  });
});
