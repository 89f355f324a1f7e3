// `npm run bench -- fairness [--rows N] [--files F] [--samples S] [--runs R]`: builds shared between accounts
// (contract, "Sharing the service fairly"), one worker and one web process at the default
// settings, as the Procfile runs them (dist/). A small file's POST → 201 (a 1 MiB file and a
// 10-row one, each posted S times, one after another) with nothing else queued, and again while
// another account has a backlog of F large builds (N rows each) queued and building. Then the
// backlog's total time, from the first file sent to the last build done: F files of one account
// (in one account, fair order is creation order: first come, first served), beside the same F
// files from two accounts taking turns, R runs of each, alternating, medians; and the backlog with
// the small files posted during it (which adds their builds' work). Same database, same run.
import { randomUUID } from 'node:crypto';
import { rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createAccount } from '../../shared/tenancy/accounts.ts';
import { issueKey } from '../../shared/tenancy/apiKeys.ts';
import { createPool, type Pool } from '../../shared/platform/db.ts';
import { freePort } from '../../shared/platform/embeddedPostgres.ts';
import { createTestDatabase } from '../setup/database.ts';
import { CONTRACT_HEADER, contractBlocks } from '../support/contracts.ts';
import { peakRssMiB, postFile, startServer, stopServers, writeContractFile } from './support.ts';

const MIB = 1024 * 1024;
const median = (values: number[]) => {
  const sorted = values.toSorted((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
};
const pct = (values: number[], p: number) => values.toSorted((a, b) => a - b)[Math.min(values.length - 1, Math.floor((p / 100) * values.length))]!;

/** A contract file of as many generated rows as fit in `bytes`. */
function fileOf(bytes: number): string {
  let text = CONTRACT_HEADER;
  for (const block of contractBlocks(0, bytes)) {
    for (const line of block.split('\n')) {
      if (line === '') continue;
      if (text.length + line.length + 1 > bytes) return text;
      text += `${line}\n`;
    }
  }
  return text;
}

type Tenant = { accountId: string; key: string };

export async function benchFairness(args: string[]): Promise<void> {
  const option = (name: string) => (args.includes(name) ? args[args.indexOf(name) + 1] : undefined);
  const rows = Number(option('--rows') ?? 300_000);
  const files = Number(option('--files') ?? 6);
  const samples = Number(option('--samples') ?? 20);
  const runs = Number(option('--runs') ?? 3);
  const database = await createTestDatabase();
  const pool = createPool(database.url, 2, 'bench');
  const tenant = async (name: string): Promise<Tenant> => {
    const account = await createAccount(pool, name);
    return { accountId: account.id, key: (await issueKey(pool, account.id, 'live')).key };
  };
  const port = await freePort();
  const env = { DATABASE_URL: database.url, PORT: String(port), LOG_LEVEL: 'warn' };
  const worker = await startServer('dist/worker/main.js', { ...env, LOG_LEVEL: 'info' }, /worker started/);
  const web = await startServer('dist/api/main.js', env, 'healthz');
  const base = `http://127.0.0.1:${port}`;
  const large = join(tmpdir(), `bench-fairness-${rows}.csv`);
  const largeBytes = await writeContractFile(large, rows);
  const smallFiles = { '1 MiB': fileOf(MIB), '10 rows': CONTRACT_HEADER + [...contractBlocks(0, 10)].join('') };

  const newDataset = async (who: Tenant): Promise<string> => {
    const res = await fetch(`${base}/v1/datasets`, {
      method: 'POST',
      headers: { authorization: `Bearer ${who.key}`, 'idempotency-key': randomUUID(), 'content-type': 'application/json' },
      body: JSON.stringify({ externalRef: randomUUID() }),
    });
    if (res.status !== 201) throw new Error(`dataset: ${res.status} ${await res.text()}`);
    return ((await res.json()) as { id: string }).id;
  };
  /** POSTs a small file until 201; its time in ms. */
  const postSmall = async (who: Tenant, datasetId: string, csv: string): Promise<number> => {
    const started = performance.now();
    const res = await fetch(`${base}/v1/datasets/${datasetId}/versions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${who.key}`, 'idempotency-key': randomUUID(), 'content-type': 'text/csv', prefer: 'wait=60' },
      body: csv,
    });
    await res.arrayBuffer();
    if (res.status !== 201) throw new Error(`small file: ${res.status}`);
    return performance.now() - started;
  };
  /** Sends the large file once per entry of `from` (Prefer: wait=0), each to a dataset of its own; their version ids. */
  const sendBacklog = async (from: Tenant[]): Promise<string[]> => {
    const sent: string[] = [];
    for (const who of from) {
      const ds = await newDataset(who);
      const posted = await postFile(`${base}/v1/datasets/${ds}/versions`, who.key, large, randomUUID(), 'wait=0');
      if (posted.status !== 202) throw new Error(`large file: ${posted.status} ${posted.body.slice(0, 300)}`);
      sent.push((JSON.parse(posted.body) as { id: string }).id);
    }
    return sent;
  };
  const unfinished = async (db: Pool, ids: string[]) =>
    Number((await db.query(`SELECT count(*) AS n FROM versions WHERE id = ANY($1) AND status IN ('queued', 'building')`, [ids])).rows[0].n);
  const untilBuilt = async (ids: string[]) => {
    while ((await unfinished(pool, ids)) > 0) await new Promise((r) => setTimeout(r, 50));
  };

  const table: Record<string, string | number>[] = [];
  const backlogTable: Record<string, string | number>[] = [];
  try {
    const quiet = await tenant('quiet');
    const smallDataset = await newDataset(quiet);
    // Warm: the first builds start the threads' pools and compile the paths.
    for (const csv of Object.values(smallFiles)) for (let i = 0; i < 3; i++) await postSmall(quiet, smallDataset, csv);

    // Alone: nothing else queued.
    const alone: Record<string, number[]> = {};
    for (const [name, csv] of Object.entries(smallFiles)) {
      alone[name] = [];
      for (let i = 0; i < samples; i++) alone[name].push(await postSmall(quiet, smallDataset, csv));
    }

    // First come, first served (one account's backlog: its own builds keep their order), and two
    // accounts taking turns, alternating.
    const firstCome = await tenant('first come');
    const left = await tenant('left');
    const right = await tenant('right');
    const timed = async (from: Tenant[]) => {
      const started = performance.now();
      await untilBuilt(await sendBacklog(from));
      return performance.now() - started;
    };
    const fcfs: number[] = [];
    const turns: number[] = [];
    for (let run = 0; run < runs; run++) {
      fcfs.push(await timed(Array(files).fill(firstCome)));
      turns.push(await timed(Array.from({ length: files }, (_, i) => (i < files / 2 ? left : right))));
    }
    const fcfsMs = median(fcfs);
    const turnsMs = median(turns);
    const secondsOf = (values: number[]) => values.map((ms) => (ms / 1000).toFixed(1)).join(', ');
    backlogTable.push({ backlog: `${files} × ${rows.toLocaleString('en')} rows, one account (first come, first served)`, 'median s': (fcfsMs / 1000).toFixed(1), runs: secondsOf(fcfs), 'vs FCFS': '1.00x' });
    backlogTable.push({ backlog: `${files} × ${rows.toLocaleString('en')} rows, two accounts taking turns`, 'median s': (turnsMs / 1000).toFixed(1), runs: secondsOf(turns), 'vs FCFS': `${(turnsMs / fcfsMs).toFixed(2)}x` });

    // Another account's backlog, with the small files posted while it is queued and building.
    const noisy = await tenant('noisy');
    const started = performance.now();
    const backlog = await sendBacklog(Array(files).fill(noisy));
    const during: Record<string, number[]> = Object.fromEntries(Object.keys(smallFiles).map((name) => [name, []]));
    let busy = 0;
    for (let i = 0; i < samples; i++) {
      for (const [name, csv] of Object.entries(smallFiles)) {
        if ((await unfinished(pool, backlog)) === 0) break;
        busy++;
        during[name]!.push(await postSmall(quiet, smallDataset, csv));
      }
    }
    await untilBuilt(backlog);
    const besideMs = performance.now() - started;
    backlogTable.push({
      backlog: `${files} × ${rows.toLocaleString('en')} rows, one account, and ${busy} small files of another built meanwhile (more work)`,
      'median s': (besideMs / 1000).toFixed(1),
      runs: secondsOf([besideMs]),
      'vs FCFS': `${(besideMs / fcfsMs).toFixed(2)}x`,
    });

    for (const name of Object.keys(smallFiles)) {
      const row = (label: string, values: number[]) => ({
        'small file': name,
        while: label,
        n: values.length,
        'p50 ms': values.length ? pct(values, 50).toFixed(0) : '-',
        'p99 ms': values.length ? pct(values, 99).toFixed(0) : '-',
        'max ms': values.length ? Math.max(...values).toFixed(0) : '-',
      });
      table.push(row('nothing else queued', alone[name]!), row(`another account's backlog of ${files} × ${(largeBytes / 1e6).toFixed(0)} MB builds`, during[name]!));
    }
    console.log(`\nbench fairness: one worker, one web process, default settings (dist/), same database, same run; ${busy} small posts during the backlog`);
    console.log('a small file from an account with nothing else queued, POST text/csv (Prefer: wait) → 201 (target: within 2 s whatever others have queued):');
    console.table(table);
    console.log('the backlog, from the first file sent to the last build done (target: within 10% of first come, first served):');
    console.table(backlogTable);
    console.log(`peak RSS: web ${(await peakRssMiB(web.pid!)).toFixed(0)} MiB, worker ${(await peakRssMiB(worker.pid!)).toFixed(0)} MiB`);
  } finally {
    await stopServers([web, worker]);
    await rm(large, { force: true });
    await pool.end();
    await database.drop();
  }
}
