// What the benchmarks share: starting the project's processes as the Procfile runs them,
// stopping them, reading their peak memory, and generated contract files to post.
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { createReadStream, createWriteStream } from 'node:fs';
import { readdir, readFile, stat } from 'node:fs/promises';
import { request } from 'node:http';
import { projectRoot } from '../../shared/platform/paths.ts';
import { CONTRACT_HEADER, contractBlocks } from '../support/contracts.ts';
import { createAccount } from '../../shared/tenancy/accounts.ts';
import { issueKey } from '../../shared/tenancy/apiKeys.ts';
import { createPool } from '../../shared/platform/db.ts';
import { createDataset } from '../../shared/domain/datasets.ts';
import { freePort } from '../../shared/platform/embeddedPostgres.ts';
import { createTestDatabase } from '../setup/database.ts';

/**
 * How the Procfile runs the process that runs `script`: the environment its line sets (`NAME=value`
 * words before `node`) and its node flags (neither for a script it does not run, such as the
 * benches' own servers), so that a bench measures the processes as they run in production;
 * BENCH_NODE_FLAGS (space-separated) replaces the flags, and the bench's own environment wins over
 * the line's, for experiments.
 */
async function procfileCommand(script: string): Promise<{ env: Record<string, string>; flags: string[] }> {
  const override = process.env['BENCH_NODE_FLAGS']?.split(' ').filter((flag) => flag !== '');
  const procfile = await readFile(`${projectRoot}/Procfile`, 'utf8');
  for (const line of procfile.split('\n')) {
    const words = line.replace(/^[\w-]+:/, '').trim().split(/\s+/);
    const node = words.indexOf('node');
    if (node < 0 || words.at(-1) !== script) continue;
    const env = Object.fromEntries(words.slice(0, node).map((word) => [word.slice(0, word.indexOf('=')), word.slice(word.indexOf('=') + 1)]));
    return { env, flags: override ?? words.slice(node + 1, -1) };
  }
  return { env: {}, flags: override ?? [] };
}

/**
 * Starts a process and waits until it is ready: a log line matching `ready`, or, for an HTTP
 * server, its /healthz answering on env.PORT. After that its stdout is read (and dropped, as a log
 * shipper would), each line also handed to `onLine`; with BENCH_STDOUT_DIR set, each process's
 * stdout is also written to a file there, named by its script (say, with `--trace-gc` in
 * BENCH_NODE_FLAGS, to see which of a worker's threads holds its heap).
 */
export async function startServer(
  script: string,
  env: Record<string, string>,
  ready: RegExp | 'healthz',
  onLine?: (line: string) => void,
): Promise<ChildProcess> {
  const command = await procfileCommand(script);
  const child = spawn(process.execPath, [...command.flags, script], { cwd: projectRoot, env: { ...command.env, ...process.env, ...env }, stdio: ['ignore', 'pipe', 'inherit'] });
  let output = '';
  let pending = '';
  const copyDir = process.env['BENCH_STDOUT_DIR'];
  if (copyDir) child.stdout!.pipe(createWriteStream(`${copyDir}/${script.replaceAll('/', '_')}.${child.pid}.log`));
  child.stdout!.on('data', (chunk: Buffer) => {
    if (ready !== 'healthz' && !ready.test(output)) output += chunk;
    pending += chunk;
    const lines = pending.split('\n');
    pending = lines.pop()!;
    if (onLine) for (const line of lines) onLine(line);
  });
  let exited = false;
  child.once('exit', () => (exited = true));
  const deadline = Date.now() + 30_000;
  while (!exited && Date.now() < deadline) {
    const up =
      ready === 'healthz'
        ? await fetch(`http://127.0.0.1:${env['PORT']}/healthz`).then((r) => r.ok, () => false)
        : ready.test(output);
    if (up) return child;
    await new Promise((r) => setTimeout(r, 50));
  }
  child.kill('SIGKILL');
  throw new Error(`${script} did not become ready`);
}

export async function stopServers(children: ChildProcess[]): Promise<void> {
  for (const child of children) child.kill('SIGTERM');
  await Promise.all(children.map((child) => (child.exitCode === null && child.signalCode === null ? once(child, 'exit') : undefined)));
}

/** Peak resident set size of a process so far (VmHWM), in MiB. */
export async function peakRssMiB(pid: number): Promise<number> {
  return Number(/VmHWM:\s+(\d+) kB/.exec(await readFile(`/proc/${pid}/status`, 'utf8'))![1]) / 1024;
}

/** A generated contract file of `rows` rows (every `badEvery`th one broken); its size in bytes. */
export function writeContractFile(path: string, rows: number, badEvery?: number): Promise<number> {
  return writeBlocks(path, CONTRACT_HEADER, contractBlocks(0, rows, badEvery === undefined ? {} : { badEvery }));
}

/** A file of a header and blocks of text, written with backpressure; its size in bytes. */
export async function writeBlocks(path: string, header: string, blocks: Iterable<string>): Promise<number> {
  const out = createWriteStream(path);
  out.write(header);
  for (const block of blocks) {
    if (!out.write(block)) await once(out, 'drain');
  }
  out.end();
  await once(out, 'finish');
  return (await stat(path)).size;
}

/** POSTs a file as a new version (text/csv, streamed from disk) and waits up to 300 s for the outcome (or as `prefer` says). */
export function postFile(url: string, key: string, path: string, idempotencyKey: string, prefer = 'wait=300'): Promise<{ status: number; body: string; ms: number }> {
  const started = performance.now();
  return new Promise((resolve, reject) => {
    const req = request(url, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'idempotency-key': idempotencyKey, 'content-type': 'text/csv', prefer },
    }, (res) => {
      let body = '';
      res.on('data', (c) => (body += c));
      res.on('end', () => resolve({ status: res.statusCode!, body, ms: performance.now() - started }));
    });
    req.on('error', reject);
    createReadStream(path).pipe(req);
  });
}

/**
 * CPU seconds (user + system) used so far by each group of processes: the given pids (their
 * threads included) and every PostgreSQL process, with the exited backends its postmaster reaped.
 * `ownCluster`: only the PostgreSQL this process started (the embedded one: its postmaster is a
 * child of this process) and its backends, not another cluster on a shared machine.
 */
export async function cpuSeconds(pids: Record<string, number>, { ownCluster = false } = {}): Promise<Record<string, number>> {
  const ticks = Number(process.env['CLK_TCK'] ?? 100);
  const read = async (pid: number | string): Promise<{ comm: string; ppid: number; own: number; reaped: number } | undefined> => {
    try {
      const stat = await readFile(`/proc/${pid}/stat`, 'utf8');
      const comm = stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      // ppid is field 4 (1-based), here 1; utime, stime, cutime, cstime are fields 14 to 17, here 11 to 14 (0-based after the state).
      return { comm, ppid: Number(fields[1]), own: (Number(fields[11]) + Number(fields[12])) / ticks, reaped: (Number(fields[13]) + Number(fields[14])) / ticks };
    } catch {
      return undefined; // gone meanwhile
    }
  };
  const out: Record<string, number> = {};
  for (const [name, pid] of Object.entries(pids)) out[name] = (await read(pid))?.own ?? NaN;
  const postgres: { pid: number; ppid: number; cpu: number }[] = [];
  for (const entry of await readdir('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const stat = await read(entry);
    if (stat?.comm === 'postgres') postgres.push({ pid: Number(entry), ppid: stat.ppid, cpu: stat.own + stat.reaped });
  }
  const postmasters = new Set(postgres.filter((p) => p.ppid === process.pid).map((p) => p.pid));
  const counted = ownCluster ? postgres.filter((p) => postmasters.has(p.pid) || postmasters.has(p.ppid)) : postgres;
  out['postgres'] = counted.reduce((sum, p) => sum + p.cpu, 0);
  return out;
}

/** What each group used between two readings of cpuSeconds. */
export function cpuSpent(before: Record<string, number>, after: Record<string, number>): Record<string, number> {
  return Object.fromEntries(Object.keys(after).map((name) => [name, after[name]! - (before[name] ?? 0)]));
}

/**
 * A database of its own with an account, a live key and one dataset, served by the project's web
 * and worker processes as the Procfile runs them. `stop` stops both and drops the database.
 */
export async function startBenchService(externalRef: string) {
  const database = await createTestDatabase();
  const pool = createPool(database.url, 2, 'bench');
  const account = await createAccount(pool, 'Bench');
  const { key } = await issueKey(pool, account.id, 'live');
  const dataset = await createDataset(pool, { accountId: account.id, mode: 'live' }, { externalRef });
  await pool.end();
  const port = await freePort();
  const env = { DATABASE_URL: database.url, PORT: String(port), LOG_LEVEL: 'warn' };
  const worker = await startServer('dist/worker/main.js', { ...env, LOG_LEVEL: 'info' }, /worker started/);
  const web = await startServer('dist/api/main.js', env, 'healthz');
  return {
    key,
    databaseUrl: database.url,
    datasetId: dataset.id,
    base: `http://127.0.0.1:${port}`,
    web,
    worker,
    async stop() {
      await stopServers([web, worker]);
      await database.drop();
    },
  };
}
