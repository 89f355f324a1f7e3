// Builds are shared fairly between accounts (contract, "Sharing the service fairly"): one worker
// at the default settings, real builds. A small file from an account with nothing else queued is
// built at once, whatever another account has queued or building; two accounts' queued builds
// take turns; a dataset's builds still run one at a time, in creation order.
import { expect } from 'chai';
import { CONTRACT_HEADER, contractBlocks, contractsCsv } from './support/contracts.ts';
import { eventually } from './support/eventually.ts';
import { newDataset, postCsv } from './support/ingest.ts';
import { type TestService, useService } from './support/service.ts';

const MIB = 1024 * 1024;

/** A contract file of as many generated rows as fit in `bytes` (rows from `from` on). */
function fileOf(bytes: number, from = 0): string {
  let text = CONTRACT_HEADER;
  for (const block of contractBlocks(from, from + bytes)) {
    if (text.length + block.length > bytes) {
      const lines = block.split('\n');
      for (const line of lines) {
        if (line === '' || text.length + line.length + 1 > bytes) break;
        text += `${line}\n`;
      }
      return text;
    }
    text += block;
  }
  return text;
}

type Build = { id: string; account: string; dataset: string; seq: number; started: Date; completed: Date };

/** The builds of these versions, in the order they started. */
async function buildsOf(svc: TestService, versionIds: string[]): Promise<Build[]> {
  const { rows } = await svc.db.query<{ id: string; account_id: string; dataset_id: string; seq: string; started_at: Date; completed_at: Date }>(
    `SELECT v.id, d.account_id, v.dataset_id, v.seq, v.started_at, v.completed_at FROM versions v JOIN datasets d ON d.id = v.dataset_id
     WHERE v.id = ANY($1) ORDER BY v.started_at`,
    [versionIds],
  );
  return rows.map((r) => ({ id: r.id, account: r.account_id, dataset: r.dataset_id, seq: Number(r.seq), started: r.started_at, completed: r.completed_at }));
}

async function allFinished(svc: TestService, versionIds: string[], timeoutMs: number): Promise<void> {
  const statuses = await eventually(
    async () => (await svc.db.query<{ status: string }>('SELECT status FROM versions WHERE id = ANY($1)', [versionIds])).rows.map((r) => r.status),
    (s) => s.length === versionIds.length && s.every((x) => x === 'active' || x === 'superseded'),
    { timeoutMs, everyMs: 100 },
  );
  expect(statuses.every((x) => x === 'active' || x === 'superseded'), `statuses: ${statuses.join(', ')}`).to.equal(true);
}

describe('fair builds', () => {
  const svc = useService();

  it('when another account has a backlog of large builds, then a file of 1 MiB from an account with nothing queued gets its 201 within 2 s', async function () {
    this.timeout(180_000);
    const noisy = await svc.tenant();
    const quiet = await svc.tenant();
    const large = fileOf(12 * MIB);
    const backlog: string[] = [];
    for (let i = 0; i < 4; i++) {
      const dataset = await newDataset(svc, noisy.key);
      const posted = await postCsv(svc, noisy.key, dataset, large, { wait: 0 });
      expect(posted.status, posted.text).to.equal(202);
      backlog.push(posted.json.id);
    }
    // One of the large builds holds the worker's build slot.
    const building = await eventually(
      async () => (await svc.db.query(`SELECT 1 FROM versions WHERE id = ANY($1) AND status = 'building'`, [backlog])).rowCount,
      (n) => n === 1,
      { timeoutMs: 30_000 },
    );
    expect(building).to.equal(1);

    const small = fileOf(MIB, 1_000_000);
    expect(Buffer.byteLength(small)).to.be.within(MIB - 200, MIB);
    const dataset = await newDataset(svc, quiet.key);
    const started = performance.now();
    const answer = await postCsv(svc, quiet.key, dataset, small, { wait: 30 });
    const tookMs = performance.now() - started;
    expect(answer.status, answer.text).to.equal(201);
    // First come, first served, it waited for every large build before it (16 s here).
    expect(tookMs, `the small file took ${Math.round(tookMs)} ms`).to.be.below(2_000);
    const left = (await svc.db.query(`SELECT 1 FROM versions WHERE id = ANY($1) AND status IN ('queued', 'building')`, [backlog])).rowCount;
    expect(left, 'large builds still queued or building when the small one was answered').to.be.above(0);
    await allFinished(svc, backlog, 150_000);
  });

  it("when two accounts have builds queued, then each account's next build is taken in turn", async function () {
    this.timeout(180_000);
    const first = await svc.tenant();
    const second = await svc.tenant();
    // Over the express lane's 1 MiB: every one of them waits for the one build slot.
    const file = fileOf(1.5 * MIB);
    const sent: string[] = [];
    for (const tenant of [first, first, first, first, second, second, second, second]) {
      const dataset = await newDataset(svc, tenant.key);
      const posted = await postCsv(svc, tenant.key, dataset, file, { wait: 0 });
      expect(posted.status, posted.text).to.equal(202);
      sent.push(posted.json.id);
    }
    await allFinished(svc, sent, 150_000);
    const order = (await buildsOf(svc, sent)).map((b) => (b.account === first.accountId ? 'first' : 'second'));
    // First come, first served: first ×4, then second ×4.
    expect(order).to.deep.equal(['first', 'second', 'first', 'second', 'first', 'second', 'first', 'second']);
  });

  it("when two accounts have exports queued, then each account's next export is taken in turn", async function () {
    this.timeout(180_000);
    const first = await svc.tenant();
    const second = await svc.tenant();
    const file = contractsCsv(150_000);
    const datasets: Record<string, string> = {};
    for (const tenant of [first, second]) {
      datasets[tenant.key] = await newDataset(svc, tenant.key);
      const built = await postCsv(svc, tenant.key, datasets[tenant.key]!, file, { wait: 120 });
      expect(built.status, built.text.slice(0, 300)).to.equal(201);
    }
    const sent: string[] = [];
    for (const tenant of [first, first, first, first, second, second, second, second]) {
      const requested = await svc.request(`/v1/datasets/${datasets[tenant.key]}/exports`, { key: tenant.key, json: { format: 'csv' } });
      expect(requested.status, requested.text).to.equal(202);
      sent.push(requested.json.id);
    }
    const { rows } = await eventually(
      () => svc.db.query<{ account_id: string; status: string }>(
        `SELECT d.account_id, e.status FROM exports e JOIN datasets d ON d.id = e.dataset_id WHERE e.id = ANY($1) ORDER BY e.completed_at`,
        [sent],
      ),
      (r) => r.rows.every((e) => e.status === 'ready'),
      { timeoutMs: 150_000, everyMs: 100 },
    );
    const order = rows.map((e) => (e.account_id === first.accountId ? 'first' : 'second'));
    // First come, first served: first ×4, then second ×4.
    expect(order).to.deep.equal(['first', 'second', 'first', 'second', 'first', 'second', 'first', 'second']);
  });

  it("when an account sends small and large files to one dataset, then its builds run one at a time, in creation order", async function () {
    this.timeout(180_000);
    const tenant = await svc.tenant();
    const dataset = await newDataset(svc, tenant.key);
    const sent: string[] = [];
    for (const file of [fileOf(64 * 1024), fileOf(3 * MIB), fileOf(64 * 1024, 5_000), fileOf(2 * MIB, 7_000), fileOf(32 * 1024, 9_000)]) {
      const posted = await postCsv(svc, tenant.key, dataset, file, { wait: 0 });
      expect(posted.status, posted.text).to.be.oneOf([201, 202]);
      sent.push(posted.json.id);
    }
    await allFinished(svc, sent, 150_000);
    const builds = await buildsOf(svc, sent);
    expect(builds.map((b) => b.id)).to.deep.equal(sent);
    for (let i = 1; i < builds.length; i++) {
      expect(builds[i]!.started.getTime(), `build ${i + 1} started before build ${i} ended`).to.be.at.least(builds[i - 1]!.completed.getTime());
    }
    const dataset_ = await svc.request(`/v1/datasets/${dataset}`, { key: tenant.key });
    expect(dataset_.json.activeVersionId).to.equal(sent.at(-1));
  });
});

/**
 * A file of under `bytes` whose figures take far more memory than its rows: in each of three
 * currencies a customer starting in each of 480 months, every contract running to 2059-12-31, so
 * that 1,440 cohorts run to 2060: about a million cohort month ends (tens of MiBs of JSON): more
 * than an express thread holds, within a build's 192 MiB. (240 cohorts of one currency, to 2050,
 * no longer were once the cohorts crossed threads as bytes.)
 */
function cohortTriangleOf(bytes: number): string {
  let text = CONTRACT_HEADER;
  const currencies = ['EUR', 'USD', 'GBP'];
  for (let i = 0; ; i++) {
    const m = Math.floor(i / 3) % 480;
    const line = `T${i},c${i},p${i % 50},${1980 + Math.floor(m / 12)}-${String((m % 12) + 1).padStart(2, '0')}-01,2059-12-31,${100 + (i % 900)}.00,${currencies[i % 3]}\n`;
    if (text.length + line.length > bytes) return text;
    text += line;
  }
}

describe('fair builds: the express lane runs out of memory', () => {
  const svc = useService({ env: { EXPRESS_BUILD_HEAP_MB: '24' } });

  it('when a small file needs more memory than an express build thread has, then the other lane builds it: 201, not 413', async function () {
    this.timeout(120_000);
    const tenant = await svc.tenant();
    const dataset = await newDataset(svc, tenant.key);
    const answer = await postCsv(svc, tenant.key, dataset, cohortTriangleOf(MIB), { wait: 60 });
    expect(answer.status, answer.text.slice(0, 300)).to.equal(201);
    expect(svc.logs()).to.include('sent to the other lane');
  });
});
