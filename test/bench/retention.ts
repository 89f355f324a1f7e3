// `npm run bench -- retention [--rows N]`: the purge of a superseded version of 10M rows (or N) by
// the worker's scheduled job (batched DELETEs, then VACUUM), with the latency of builds (10-row
// uploads) and reads (metrics of the active version) before and while it runs; beside it, in the
// same database, what the alternative would cost: the same rows in a partition of their own,
// dropped (detached first), and whether creating a partition per version would wait on a reader.
import { createAccount } from '../../shared/tenancy/accounts.ts';
import { issueKey } from '../../shared/tenancy/apiKeys.ts';
import { createPool, type Pool } from '../../shared/platform/db.ts';
import { createDataset } from '../../shared/domain/datasets.ts';
import { freePort } from '../../shared/platform/embeddedPostgres.ts';
import { createBoss } from '../../shared/platform/boss.ts';
import { queues } from '../../shared/platform/queue.ts';
import { createLogger } from '../../shared/platform/log.ts';
import { createTestDatabase } from '../setup/database.ts';
import { CONTRACT_HEADER, contractBlocks } from '../support/contracts.ts';
import { startServer, stopServers } from './support.ts';

const pct = (xs: number[], p: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((p / 100) * xs.length))]!;
const mib = async (pool: Pool, table: string) => Number((await pool.query(`SELECT pg_total_relation_size($1) AS b`, [table])).rows[0].b) / 1024 / 1024;

/** `rows` contract rows for `versionId`, written by SQL (shaped like a build's: 7 columns, ~30k customers). */
async function fillRows(pool: Pool, table: string, versionId: string, rows: number): Promise<number> {
  const started = performance.now();
  const step = 1_000_000;
  for (let from = 1; from <= rows; from += step) {
    await pool.query(
      `INSERT INTO ${table} (version_id, row_number, contract_id, customer, product, start_date, end_date, amount, currency)
       SELECT $1, g, 'C' || g, 'Customer ' || (g % 30011), 'Product ' || (g % 17), date '2025-01-01' + (g % 365)::int, date '2026-01-01' + (g % 365)::int,
              (g % 100000) / 100.0, (ARRAY['EUR','USD','GBP'])[1 + g % 3]
       FROM generate_series($2::bigint, $3::bigint) g`,
      [versionId, from, Math.min(rows, from + step - 1)],
    );
  }
  return performance.now() - started;
}

export async function benchRetention(args: string[]): Promise<void> {
  const rowsArg = args.indexOf('--rows');
  const rows = rowsArg >= 0 ? Number(args[rowsArg + 1]) : 10_000_000;
  const database = await createTestDatabase();
  const pool = createPool(database.url, 4, 'bench');
  const account = await createAccount(pool, 'Bench');
  const { key } = await issueKey(pool, account.id, 'live');
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  const env = { DATABASE_URL: database.url, PORT: String(port), BASE_URL: base, LOG_LEVEL: 'warn' };
  const worker = await startServer('dist/worker/main.js', { ...env, LOG_LEVEL: 'info' }, /worker started/);
  const web = await startServer('dist/api/main.js', env, 'healthz');
  const boss = createBoss(database.url, 'producer', createLogger({ logLevel: 'silent' }, 'bench'));
  await boss.start();
  try {
    const small = CONTRACT_HEADER + [...contractBlocks(0, 10)].join('');
    const post = async (datasetId: string, body: string, idem: string) => {
      const res = await fetch(`${base}/v1/datasets/${datasetId}/versions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'idempotency-key': idem, 'content-type': 'text/csv', prefer: 'wait=300' },
        body,
      });
      const json = (await res.json()) as { id: string };
      if (res.status !== 201) throw new Error(`upload ${idem}: ${res.status}`);
      return json.id;
    };
    // The dataset whose old version is purged: its big version (rows by SQL), then an active one.
    const ds = await createDataset(pool, { accountId: account.id, mode: 'live' }, { externalRef: 'bench-retention' });
    const oldId = await post(ds.id, small, 'old');
    const activeId = await post(ds.id, CONTRACT_HEADER + [...contractBlocks(0, 10_000)].join(''), 'active');
    const before = await mib(pool, 'contract_rows');
    const fillMs = await fillRows(pool, 'contract_rows', oldId, rows);
    await pool.query('ANALYZE contract_rows');
    const filled = await mib(pool, 'contract_rows');
    await pool.query(`UPDATE versions SET superseded_at = now() - interval '31 days' WHERE id = $1`, [oldId]);

    const other = await createDataset(pool, { accountId: account.id, mode: 'live' }, { externalRef: 'bench-retention-builds' });
    const loop = async (tag: string, until: () => boolean) => {
      const builds: number[] = [];
      const reads: number[] = [];
      for (let i = 0; until(); i++) {
        let started = performance.now();
        await post(other.id, small, `${tag}-${i}`);
        builds.push(performance.now() - started);
        started = performance.now();
        const res = await fetch(`${base}/v1/datasets/${ds.id}/metrics`, { headers: { authorization: `Bearer ${key}` } });
        await res.arrayBuffer();
        if (res.status !== 200) throw new Error(`metrics: ${res.status}`);
        reads.push(performance.now() - started);
      }
      return { builds, reads };
    };
    let n = 0;
    const quiet = await loop('quiet', () => n++ < 100);

    // The purge, by the worker's job, with the same load running until it ends.
    const purgeStarted = performance.now();
    await boss.send(queues.purgeVersions, {});
    let purged = false;
    const watcher = (async () => {
      while (!(await pool.query('SELECT rows_purged_at IS NOT NULL AS done FROM versions WHERE id = $1', [oldId])).rows[0].done) {
        await new Promise((r) => setTimeout(r, 100));
      }
      purged = true;
    })();
    const busy = await loop('busy', () => !purged);
    await watcher;
    const purgeMs = performance.now() - purgeStarted;
    // The job vacuums after the purge: wait for it (no other vacuum runs here).
    const vacuumStarted = performance.now();
    while ((await pool.query(`SELECT count(*) AS n FROM pg_stat_progress_vacuum`)).rows[0].n > 0) await new Promise((r) => setTimeout(r, 100));
    const afterPurge = await mib(pool, 'contract_rows');
    const activeRows = Number((await pool.query('SELECT count(*) FROM contract_rows WHERE version_id = $1', [activeId])).rows[0].count);

    // The alternative: a partition per version. Same rows in a partition of their own, then
    // DETACH … CONCURRENTLY and DROP; and whether creating a partition waits on a reader.
    await pool.query(`CREATE TABLE bench_part (LIKE contract_rows) PARTITION BY LIST (version_id)`);
    await pool.query(`CREATE TABLE bench_part_old PARTITION OF bench_part FOR VALUES IN ('old')`);
    await fillRows(pool, 'bench_part', 'old', rows);
    let started = performance.now();
    await pool.query(`ALTER TABLE bench_part DETACH PARTITION bench_part_old CONCURRENTLY`);
    await pool.query(`DROP TABLE bench_part_old`);
    const dropMs = performance.now() - started;
    const reader = await pool.connect();
    let createWaited = false;
    try {
      await reader.query('BEGIN');
      await reader.query('SELECT count(*) FROM bench_part'); // a read in progress (say, an export)
      const ddl = await pool.connect();
      try {
        await ddl.query(`SET lock_timeout = '1s'`);
        started = performance.now();
        await ddl.query(`CREATE TABLE bench_part_new PARTITION OF bench_part FOR VALUES IN ('new')`);
      } catch {
        createWaited = true;
      } finally {
        ddl.release();
      }
      await reader.query('ROLLBACK');
    } finally {
      reader.release();
    }

    console.log(`\nbench retention: a superseded version of ${rows.toLocaleString('en')} rows purged by the worker's job (PURGE_BATCH_ROWS 20,000), same database, same run`);
    console.table([
      { measure: 'rows written by SQL (setting up)', value: `${(fillMs / 1000).toFixed(1)} s` },
      { measure: 'purge: batched DELETE until rowsPurgedAt', value: `${(purgeMs / 1000).toFixed(1)} s (${Math.round(rows / (purgeMs / 1000)).toLocaleString('en')} rows/s)` },
      { measure: 'then VACUUM (ANALYZE) contract_rows', value: `${((performance.now() - vacuumStarted) / 1000).toFixed(1)} s` },
      { measure: 'contract_rows size: before, filled, after purge + vacuum', value: `${before.toFixed(0)} / ${filled.toFixed(0)} / ${afterPurge.toFixed(0)} MiB (space kept for reuse)` },
      { measure: 'active version rows after the purge', value: `${activeRows} of 10000` },
      { measure: '10-row build, POST → 201, no purge: p50 / p99', value: `${pct(quiet.builds, 50).toFixed(1)} / ${pct(quiet.builds, 99).toFixed(1)} ms (${quiet.builds.length})` },
      { measure: '10-row build during the purge: p50 / p99', value: `${pct(busy.builds, 50).toFixed(1)} / ${pct(busy.builds, 99).toFixed(1)} ms (${busy.builds.length})` },
      { measure: 'GET metrics of the active version, no purge: p50 / p99', value: `${pct(quiet.reads, 50).toFixed(1)} / ${pct(quiet.reads, 99).toFixed(1)} ms` },
      { measure: 'GET metrics during the purge: p50 / p99', value: `${pct(busy.reads, 50).toFixed(1)} / ${pct(busy.reads, 99).toFixed(1)} ms` },
      { measure: 'alternative: the same rows as a partition, DETACH CONCURRENTLY + DROP', value: `${(dropMs / 1000).toFixed(2)} s` },
      { measure: 'alternative: CREATE a partition while a read is in progress', value: createWaited ? 'waits for the read (lock_timeout 1 s hit)' : 'did not wait' },
    ]);
  } finally {
    await boss.stop({ graceful: false });
    await stopServers([web, worker]);
    await pool.end();
    await database.drop();
  }
}
