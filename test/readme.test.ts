// The guide as a newcomer follows it: `npm start` as the README says (and without the warning it
// once gave for nothing), then the README's first calls, the shell blocks marked `sh first-calls`,
// run in order by bash in a folder that stands for the clone; the worked example of
// docs/metrics.md against what the service answers for it; every link of the README and docs/
// resolving; every environment variable documented. So the guide cannot drift from the service.
import { expect } from 'chai';
import { type ChildProcess, spawn } from 'node:child_process';
import { chmod, mkdir, mkdtemp, readdir, readFile, rm, symlink } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative, resolve } from 'node:path';
import { FIGURE_WORDS } from '../shared/figures/definitions.ts';
import { freePort } from '../shared/platform/embeddedPostgres.ts';
import { projectRoot } from '../shared/platform/paths.ts';
import { runScript } from './support/processes.ts';

const read = (path: string) => readFile(join(projectRoot, path), 'utf8');

/** The fenced blocks of a Markdown text whose info string is `lang tag`, in order. */
export function fencedBlocks(markdown: string, lang: string, tag: string): string[] {
  const blocks: string[] = [];
  const fence = /^```(\S+)[ \t]*(\S*)[^\n]*\n([\s\S]*?)^```[ \t]*$/gm;
  for (const m of markdown.matchAll(fence)) if (m[1] === lang && m[2] === tag) blocks.push(m[3]!);
  return blocks;
}

/** The rows of the Markdown table that follows `marker` (a comment line), as objects by header. */
function tableAfter(markdown: string, marker: string): Record<string, string>[] {
  const at = markdown.indexOf(marker);
  expect(at, marker).to.be.at.least(0);
  const lines = markdown.slice(at).split('\n').slice(1);
  const rows = lines.slice(0, lines.findIndex((l) => !l.startsWith('|'))).map((l) => l.split('|').slice(1, -1).map((c) => c.trim()));
  const [header, , ...body] = rows;
  return body.map((cells) => Object.fromEntries(header!.map((h, i) => [h, cells[i]!])));
}

/** GitHub's anchor of a heading: lower case, punctuation dropped, spaces as hyphens. */
const anchorOf = (heading: string) =>
  heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s_-]/gu, '')
    .replace(/\s/g, '-');

/** Resolves once no process of group `pgid` is left (or after `timeoutMs`). */
async function groupGone(pgid: number, timeoutMs: number): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (Date.now() < until) {
    try {
      process.kill(-pgid, 0);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ESRCH') return;
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`processes of group ${pgid} still running after ${timeoutMs} ms`);
}

/** Runs bash with `script` in `cwd`: exit code and output. */
function bash(script: string, cwd: string, env: Record<string, string | undefined>): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((done, fail) => {
    const child = spawn('bash', ['-c', script], { cwd, env: env as NodeJS.ProcessEnv });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c) => (stdout += c));
    child.stderr.on('data', (c) => (stderr += c));
    child.on('error', fail);
    child.on('close', (code) => done({ code, stdout, stderr }));
  });
}

describe('the guide (README.md and docs/), followed as a newcomer would', function () {
  this.timeout(180_000);
  let home: string;
  let clone: string;
  let port: number;
  let start: ChildProcess;
  let startOutput = '';
  let serviceEnv: Record<string, string>;

  before(async () => {
    home = await mkdtemp(join(tmpdir(), 'dataset-service-guide-'));
    // PostgreSQL runs as its own user (we may be root here) and must reach its data folder.
    await chmod(home, 0o755);
    // The clone, as the README's commands see it: every entry of the project but its data and any file of a previous try.
    clone = join(home, 'clone');
    await mkdir(clone);
    for (const entry of await readdir(projectRoot)) {
      if (['.data', '.git', 'contracts.csv'].includes(entry)) continue;
      await symlink(join(projectRoot, entry), join(clone, entry));
    }
    port = await freePort();
    serviceEnv = { DATABASE_URL: '', BLOB_STORE: '', DATA_DIR: join(home, 'data'), PORT: String(port), LOG_LEVEL: 'info' };
    // `npm start`, exactly as the README says: the script of package.json, with its node flags.
    start = spawn('npm', ['start'], { cwd: projectRoot, env: { ...process.env, ...serviceEnv }, detached: true });
    await new Promise<void>((ready, fail) => {
      const timer = setTimeout(() => fail(new Error(`npm start not ready in time:\n${startOutput}`)), 90_000);
      const onData = (chunk: Buffer) => {
        startOutput += chunk;
        if (startOutput.includes('dataset service ready')) {
          clearTimeout(timer);
          ready();
        }
      };
      start.stdout!.on('data', onData);
      start.stderr!.on('data', onData);
      start.on('exit', (code) => fail(new Error(`npm start exited with ${code}:\n${startOutput}`)));
    });
  });

  after(async () => {
    if (start?.pid && start.exitCode === null) process.kill(-start.pid, 'SIGTERM');
    // npm exits before the service has stopped its PostgreSQL, which may still be writing its
    // shutdown checkpoint into the data folder: wait until every process of the group is gone.
    if (start?.pid) await groupGone(start.pid, 60_000);
    await rm(home, { recursive: true, force: true, maxRetries: 5 });
  });

  it('when `npm start` runs as the README says, then it is ready without a warning about the build threads\' heap', () => {
    const warnings = startOutput.split('\n').filter((l) => l.includes('"level":40'));
    expect(warnings.join('\n')).not.to.include('build threads do not get the heap');
    expect(startOutput).to.include('dataset service ready');
  });

  it('when the README\'s first calls are run in order, then each succeeds: an account, a key, the dsvc flow and the curl flow, into datasets of their own', async () => {
    const readme = await read('README.md');
    const blocks = fencedBlocks(readme, 'sh', 'first-calls');
    expect(blocks.length, 'the marked blocks').to.be.at.least(3);
    // The service listens on a free port here, not on 3000.
    const script = ['set -euo pipefail', ...blocks.map((b) => b.replaceAll('localhost:3000', `127.0.0.1:${port}`)), 'echo; echo "KEY=$KEY"'].join('\n');
    const env: Record<string, string | undefined> = { ...process.env, ...serviceEnv, HOME: home, DATASET_SERVICE_URL: `http://127.0.0.1:${port}`, DATASET_SERVICE_API_KEY: undefined, DSVC_CONFIG: undefined };
    // The project's Node.js first, as `npm install` brings it.
    env['PATH'] = `${dirname(process.execPath)}:${join(projectRoot, 'node_modules/.bin')}:${process.env['PATH']}`;
    const ran = await bash(script, clone, env);
    expect(ran.code, `${ran.stdout}\n${ran.stderr}`).to.equal(0);
    // dsvc: the upload, the chart and table of EUR, the customers of January 2025.
    expect(ran.stdout).to.match(/Version ver_\w+ is active: 3 rows \(3 contributing\)\./);
    expect(ran.stdout).to.include('EUR: MRR at each month end, 2024-01 to 2026-01');
    expect(ran.stdout).to.match(/^2025-01\s+2\s+1600\.00\s+19200\.00\s+800\.00\s+1200\.00 \(1\)\s+-\s+100\.00 \(1\)/m);
    expect(ran.stdout).to.match(/^Acme\s+EUR\s+500\.00\s+400\.00\s+contraction$/m);
    // curl: the version, January 2025's figures, its customers.
    expect(ran.stdout).to.match(/"object":"version"[^}]*"status":"active"/);
    expect(ran.stdout).to.include('"mrr":"1600.00"').and.include('"movement":"contraction"');
    // The two flows made two datasets, neither refused as taken.
    const key = /^KEY=(\S+)$/m.exec(ran.stdout)![1]!;
    const listed: any = await (await fetch(`http://127.0.0.1:${port}/v1/datasets`, { headers: { authorization: `Bearer ${key}` } })).json();
    const refs = listed.data.map((d: { externalRef: string }) => d.externalRef).sort();
    expect(refs).to.have.length(2);
    expect(new Set(refs).size).to.equal(2);
    expect(ran.stderr).not.to.match(/conflict|already/i);
  });

  it('when the worked example of docs/metrics.md is uploaded, then the service answers every figure its tables print', async () => {
    const doc = await read('docs/metrics.md');
    const [csv] = fencedBlocks(doc, 'csv', 'metrics-example');
    expect(csv).to.be.a('string');
    const account = JSON.parse((await runScript('bin/operator.ts', ['accounts', 'create', '--name', 'Guide', '--json'], serviceEnv)).stdout);
    const { key } = JSON.parse((await runScript('bin/operator.ts', ['keys', 'issue', '--account', account.id, '--mode', 'test', '--json'], serviceEnv)).stdout);
    const api = (path: string, init: RequestInit = {}) =>
      fetch(`http://127.0.0.1:${port}${path}`, { ...init, headers: { authorization: `Bearer ${key}`, ...init.headers } });
    const dataset: any = await (await api('/v1/datasets', { method: 'POST', body: JSON.stringify({ externalRef: 'metrics-example' }), headers: { 'idempotency-key': 'guide-1', 'content-type': 'application/json' } })).json();
    const built = await api(`/v1/datasets/${dataset.id}/versions`, { method: 'POST', body: csv!, headers: { 'idempotency-key': 'guide-2', 'content-type': 'text/csv' } });
    expect(built.status).to.equal(201);

    const metrics: any = await (await api(`/v1/datasets/${dataset.id}/metrics`)).json();
    const shown = (v: string | null) => (v === null ? '-' : v);
    const movement = (m: { customers: number; mrr: string }) => (m.customers === 0 ? '-' : `${m.mrr} (${m.customers})`);
    const printed = tableAfter(doc, '<!-- checked by test/readme.test.ts: metrics, EUR -->');
    expect(printed).to.have.length.above(3);
    for (const row of printed) {
      const m = metrics.monthly.find((f: { month: string; currency: string }) => f.month === row['month'] && f.currency === 'EUR');
      expect(m, row['month']).to.not.equal(undefined);
      expect(row, row['month']).to.deep.equal({
        month: m.month,
        customers: String(m.activeCustomers),
        mrr: m.mrr,
        arr: m.arr,
        arpa: shown(m.arpa),
        newBusiness: movement(m.movements.newBusiness),
        expansion: movement(m.movements.expansion),
        contraction: movement(m.movements.contraction),
        churn: movement(m.movements.churn),
        reactivation: movement(m.movements.reactivation),
        netNewMrr: m.movements.netNewMrr,
        customerChurn: shown(m.rates.customerChurn),
        grossMrrChurn: shown(m.rates.grossMrrChurn),
        netRevenueRetention: shown(m.rates.netRevenueRetention),
        grossRevenueRetention: shown(m.rates.grossRevenueRetention),
      });
    }
    const customers: any = await (await api(`/v1/datasets/${dataset.id}/customers?month=2025-01`)).json();
    expect(tableAfter(doc, '<!-- checked by test/readme.test.ts: customers, 2025-01 -->')).to.deep.equal(
      customers.data.map((c: Record<string, string>) => ({ customer: c['customer'], currency: c['currency'], previousMrr: c['previousMrr'], mrr: c['mrr'], movement: c['movement'] })),
    );
    const cohorts: any = await (await api(`/v1/datasets/${dataset.id}/cohorts?currency=EUR`)).json();
    for (const row of tableAfter(doc, '<!-- checked by test/readme.test.ts: cohorts, EUR -->')) {
      const at = cohorts.data.find((c: { cohort: string }) => c.cohort === row['cohort'])?.months.find((m: { month: string }) => m.month === row['month']);
      expect(at, `${row['cohort']} ${row['month']}`).to.deep.equal({ month: row['month'], customers: Number(row['customers']), mrr: row['mrr'] });
    }
    // The words under each figure are the definitions' own.
    for (const [name, words] of Object.entries(FIGURE_WORDS)) expect(doc, name).to.include(words);
  });

  it('when the README and docs/ are read, then every link to a file or heading of the repository resolves, the README stays short, and every environment variable is documented', async () => {
    const pages = ['README.md', 'sdk/README.md', ...(await readdir(join(projectRoot, 'docs'))).filter((f) => f.endsWith('.md')).map((f) => `docs/${f}`)];
    expect(pages).to.include.members(['docs/metrics.md', 'docs/operating.md', 'docs/architecture.md', 'docs/benchmarks.md']);
    const headingsOf = async (path: string) => new Set([...(await read(path)).matchAll(/^#{1,6} (.+)$/gm)].map((m) => anchorOf(m[1]!.replaceAll('`', ''))));
    const broken: string[] = [];
    for (const page of pages) {
      const text = (await read(page)).replace(/^```[\s\S]*?^```$/gm, '');
      for (const [, target] of text.matchAll(/\]\(([^)\s]+)\)/g)) {
        if (/^(https?|mailto):/.test(target!)) continue;
        const [file, anchor] = target!.split('#') as [string, string | undefined];
        const path = file === '' ? page : relative(projectRoot, resolve(projectRoot, dirname(page), file));
        if (!existsSync(join(projectRoot, path))) broken.push(`${page}: ${target} (no file ${path})`);
        else if (anchor && path.endsWith('.md') && !(await headingsOf(path)).has(anchor)) broken.push(`${page}: ${target} (no heading #${anchor})`);
      }
    }
    expect(broken).to.deep.equal([]);
    expect((await read('README.md')).split('\n').length, 'README lines').to.be.at.most(200);
    const variables = [...(await read('shared/platform/config.ts')).matchAll(/^ {2}([A-Z][A-Z0-9_]+): z/gm)].map((m) => m[1]!);
    expect(variables.length).to.be.above(30);
    const operating = await read('docs/operating.md');
    expect(variables.filter((v) => !operating.includes(`\`${v}\``))).to.deep.equal([]);
  });
});
