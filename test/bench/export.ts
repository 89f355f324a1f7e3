// `npm run bench -- export`: 1,000,000 rows exported end to end (POST → ready → content
// downloaded) beside `psql \copy (SELECT …) TO` of the same rows, in the same run, with the peak
// RSS of web and worker; then two concurrent 1M-row uploads on one worker versus two workers.
import { execFile } from 'node:child_process';
import { rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createAccount } from '../../shared/tenancy/accounts.ts';
import { issueKey } from '../../shared/tenancy/apiKeys.ts';
import { createPool, type Pool } from '../../shared/platform/db.ts';
import { createDataset } from '../../shared/domain/datasets.ts';
import { freePort } from '../../shared/platform/embeddedPostgres.ts';
import { exportCopySql } from '../../shared/domain/exports.ts';
import { newId } from '../../shared/platform/ids.ts';
import { createTestDatabase } from '../setup/database.ts';
import { peakRssMiB, postFile, startServer, stopServers, writeContractFile } from './support.ts';

const ROWS = 1_000_000;

/** An active version of ROWS generated rows, written directly (ingest is not what is measured). */
async function seedVersion(pool: Pool, datasetId: string): Promise<string> {
  const versionId = newId('ver');
  await pool.query(`INSERT INTO versions (id, dataset_id, status, request_path, row_count, contributing_row_count) VALUES ($1, $2, 'active', '/', $3, $3)`, [versionId, datasetId, ROWS]);
  await pool.query(
    `INSERT INTO contract_rows SELECT $1, g + 1, 'C' || g, 'Customer ' || (g % 50000), (ARRAY['Starter','Pro','Team'])[1 + g % 3],
       date '2020-01-01' + (g % 2000), date '2020-01-01' + (g % 2000) + 30 + (g % 700), ((g % 9973) + 10) + (g % 100) / 100.0,
       (ARRAY['EUR','USD','GBP','CHF'])[1 + g % 4]
     FROM generate_series(1, $2) g`,
    [versionId, ROWS],
  );
  await pool.query('UPDATE datasets SET active_version_id = $2 WHERE id = $1', [datasetId, versionId]);
  return versionId;
}

function psqlCopyOut(url: string, sql: string, path: string): Promise<number> {
  const select = /^COPY \((.*)\) TO STDOUT/s.exec(sql)![1]!.replace(/\s+/g, ' ');
  const started = performance.now();
  return new Promise((resolve, reject) =>
    execFile('psql', [url, '-v', 'ON_ERROR_STOP=1', '-c', `\\copy (${select}) TO '${path}' CSV HEADER`], (error) =>
      error ? reject(error) : resolve(performance.now() - started),
    ),
  );
}

async function exportEndToEnd(base: string, key: string, datasetId: string, format: 'csv' | 'jsonl'): Promise<{ ms: number; bytes: number }> {
  const headers = { authorization: `Bearer ${key}` };
  const started = performance.now();
  const created = await fetch(`${base}/v1/datasets/${datasetId}/exports`, {
    method: 'POST',
    headers: { ...headers, 'content-type': 'application/json', 'idempotency-key': `bench-${format}` },
    body: JSON.stringify({ format }),
  });
  const exp = (await created.json()) as { id: string };
  for (;;) {
    const res = await fetch(`${base}/v1/datasets/${datasetId}/exports/${exp.id}`, { headers });
    const body = (await res.json()) as { status: string };
    if (body.status === 'ready') break;
    if (body.status === 'failed') throw new Error('export failed');
    await new Promise((r) => setTimeout(r, 20));
  }
  const content = await fetch(`${base}/v1/datasets/${datasetId}/exports/${exp.id}/content`, { headers });
  let bytes = 0;
  for await (const chunk of content.body!) bytes += chunk.length;
  return { ms: performance.now() - started, bytes };
}

async function twoUploads(base: string, key: string, datasets: string[], file: string): Promise<number> {
  const started = performance.now();
  await Promise.all(
    datasets.map(async (ds) => {
      const reply = await postFile(`${base}/v1/datasets/${ds}/versions`, key, file, `two-${ds}`);
      if (reply.status !== 201) throw new Error(`upload answered ${reply.status}`);
    }),
  );
  return performance.now() - started;
}

export async function benchExport(): Promise<void> {
  const database = await createTestDatabase();
  const pool = createPool(database.url, 2, 'bench');
  const account = await createAccount(pool, 'Bench');
  const { key } = await issueKey(pool, account.id, 'live');
  const ds = await createDataset(pool, { accountId: account.id, mode: 'live' }, { externalRef: 'bench-export' });
  const versionId = await seedVersion(pool, ds.id);

  const port = await freePort();
  const env = { DATABASE_URL: database.url, PORT: String(port), LOG_LEVEL: 'info' };
  const worker = await startServer('dist/worker/main.js', env, /worker started/);
  const web = await startServer('dist/api/main.js', env, 'healthz');
  const base = `http://127.0.0.1:${port}`;
  const out = join(tmpdir(), 'bench-export.csv');
  const table: Record<string, string | number>[] = [];
  try {
    const copyMs = await psqlCopyOut(database.url, exportCopySql(versionId, 'csv'), out);
    await rm(out);
    const rate = (ms: number) => Math.round(ROWS / (ms / 1000));
    table.push({ path: 'psql \\copy (SELECT …) TO (ceiling)', seconds: +(copyMs / 1000).toFixed(2), 'rows/s': rate(copyMs), 'vs \\copy': '1.00x' });
    for (const format of ['csv', 'jsonl'] as const) {
      const r = await exportEndToEnd(base, key, ds.id, format);
      table.push({ path: `export ${format}: POST → ready → downloaded (${(r.bytes / 1e6).toFixed(0)} MB)`, seconds: +(r.ms / 1000).toFixed(2), 'rows/s': rate(r.ms), 'vs \\copy': `${(copyMs / r.ms).toFixed(2)}x` });
    }
    const rss = { web: await peakRssMiB(web.pid!), worker: await peakRssMiB(worker.pid!) };

    // Two concurrent 1M-row uploads, on one worker and then on two.
    const file = join(tmpdir(), 'bench-two.csv');
    await writeContractFile(file, ROWS);
    const pair = async (tag: string) =>
      Promise.all([1, 2].map(async (n) => (await createDataset(pool, { accountId: account.id, mode: 'live' }, { externalRef: `${tag}-${n}` })).id));
    const oneWorker = await twoUploads(base, key, await pair('one'), file);
    const second = await startServer('dist/worker/main.js', env, /worker started/);
    const twoWorkers = await twoUploads(base, key, await pair('two'), file);
    await stopServers([second]);
    await rm(file);

    console.log(`\nbench export: ${ROWS} rows, same database, same run`);
    console.table(table);
    console.log(`peak RSS during exports: web ${rss.web.toFixed(0)} MiB, worker ${rss.worker.toFixed(0)} MiB (target <= 256 each)`);
    console.log(`two concurrent ${ROWS}-row uploads: one worker ${(oneWorker / 1000).toFixed(1)} s, two workers ${(twoWorkers / 1000).toFixed(1)} s (wall time, 2 cores)`);
  } finally {
    await stopServers([web, worker]);
    await pool.end();
    await database.drop();
  }
}
