// dsvc, the SDK's command line, against the real service: `login` (typed without echo in a
// pseudo-terminal, or piped; checked, kept 0600, never when refused), datasets (each run its own
// operation), an upload watched in a pseudo-terminal (util-linux `script`) as a person sees its
// progress bars, its warnings, row errors as a table with how to mend the whole file, metrics,
// catalog, export, events, and `listen` forwarding events to a local receiver; with its exit
// codes. The upload's screen is kept in test/artifacts/cli/upload.txt.
import { expect } from 'chai';
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { mkdir, mkdtemp, readFile, stat, writeFile } from 'node:fs/promises';
import { createServer, request as httpRequest, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from '../shared/platform/embeddedPostgres.ts';
import { projectRoot } from '../shared/platform/paths.ts';
import { CONTRACT_HEADER, contractsCsv } from './support/contracts.ts';
import { eventually } from './support/eventually.ts';
import { useService } from './support/service.ts';
import { WebhookReceiver } from './support/webhookReceiver.ts';
import { closeNow, listenLocally, localUrl } from './support/localServer.ts';

const CLI = join(projectRoot, 'sdk/src/cli/main.ts');

type Outcome = { code: number; stdout: string; stderr: string };

describe('dsvc command line', () => {
  const svc = useService();
  let dir: string;
  let env: Record<string, string>;
  let key: string;
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'dsvc-'));
    key = (await svc.tenant()).key;
    env = { DSVC_CONFIG: join(dir, 'config', 'config.json'), DATASET_SERVICE_URL: svc.url, DATASET_SERVICE_API_KEY: '' };
  });

  /** Runs dsvc with pipes (as a script would); `input` goes to its standard input; `extraEnv` over the run's. */
  const run = (args: string[], input?: string, extraEnv: Record<string, string> = {}): Promise<Outcome> =>
    new Promise((resolve) => {
      const child = execFile(process.execPath, [CLI, ...args], { env: { ...process.env, ...env, ...extraEnv }, cwd: dir }, (error, stdout, stderr) =>
        resolve({ code: error ? ((error as { code?: number }).code ?? 1) : 0, stdout, stderr }),
      );
      child.stdin!.end(input ?? '');
    });

  /**
   * Runs dsvc in a pseudo-terminal and, once `prompt` is on the screen, types `typed` and Enter, as
   * a person would: what the screen showed and the exit code.
   */
  const typingInTerminal = (args: string[], prompt: RegExp, typed: string, extraEnv: Record<string, string> = {}): Promise<{ code: number; screen: string }> => {
    const quoted = [process.execPath, CLI, ...args].map((a) => `'${a.replaceAll("'", "'\\''")}'`).join(' ');
    return new Promise((resolve) => {
      const child = spawn('script', ['--quiet', '--return', '--command', quoted, '/dev/null'], { cwd: dir, env: { ...process.env, ...env, ...extraEnv, COLUMNS: '100' } });
      let screen = '';
      let typedYet = false;
      child.stdout.on('data', (chunk: Buffer) => {
        screen += chunk.toString();
        if (!typedYet && prompt.test(screen)) {
          typedYet = true;
          child.stdin.write(`${typed}\r`);
        }
      });
      child.on('close', (code) => {
        child.stdin.end();
        resolve({ code: code ?? 1, screen: screen.replaceAll('\r\n', '\n') });
      });
    });
  };

  /** Runs dsvc in a pseudo-terminal: what the screen showed (stdout and stderr together) and the exit code. */
  const inTerminal = (args: string[]): Promise<{ code: number; screen: string }> => {
    const quoted = [process.execPath, CLI, ...args].map((a) => `'${a.replaceAll("'", "'\\''")}'`).join(' ');
    return new Promise((resolve) => {
      execFile('script', ['--quiet', '--return', '--command', quoted, '/dev/null'], { cwd: dir, env: { ...process.env, ...env, COLUMNS: '100' } }, (error, stdout) =>
        resolve({ code: error ? ((error as { code?: number }).code ?? 1) : 0, screen: stdout.replaceAll('\r\n', '\n') }),
      );
    });
  };

  it('when no key is configured, then it says how to configure one, exit 2; `config set` keeps it in a file only its owner reads', async () => {
    const none = await run(['datasets', 'list']);
    expect(none.code).to.equal(2);
    expect(none.stderr).to.include('dsvc login');
    const set = await run(['config', 'set'], `${key}\n`);
    expect(set.code, set.stderr).to.equal(0);
    const file = await stat(env['DSVC_CONFIG']!);
    expect(file.mode & 0o777).to.equal(0o600);
    expect((await stat(join(dir, 'config'))).mode & 0o777).to.equal(0o700);
    const shown = await run(['config', 'show', '--json']);
    expect(JSON.parse(shown.stdout)).to.deep.include({ baseUrl: svc.url, keyFrom: 'config file', key: `${key.slice(0, 12)}…` });
    expect(shown.stdout).not.to.include(key);
    expect((await run(['config', 'set'], 'not-a-key\n')).code).to.equal(2);
  });

  it('when datasets are created, listed, read and deleted, then people get fields and tables and scripts get JSON', async () => {
    const created = await run(['datasets', 'create', '--external-ref', 'cli-crm', '--name', 'CLI CRM']);
    expect(created.code, created.stderr).to.equal(0);
    expect(created.stdout).to.match(/^id\s+ds_\w+\n/m).and.match(/externalRef\s+cli-crm/);
    const dataset = JSON.parse((await run(['datasets', 'get', 'cli-crm', '--json'])).stdout);
    expect(created.stdout).to.include(dataset.id);
    const listed = await run(['datasets', 'list']);
    expect(listed.stdout.split('\n')[0]).to.match(/^id\s+externalRef\s+name\s+activeVersionId\s+createdAt$/);
    expect(listed.stdout).to.match(new RegExp(`${dataset.id}\\s+cli-crm\\s+CLI CRM\\s+-`));
    expect(JSON.parse((await run(['datasets', 'get', 'cli-crm', '--json'])).stdout).id).to.equal(dataset.id);

    const missing = await run(['datasets', 'get', 'ds_nope']);
    expect(missing.code).to.equal(3);
    expect(missing.stderr).to.match(/^dsvc: Not found: .*\(request [\w-]+\)\n$/);
    const refused = await run(['datasets', 'delete', 'cli-crm']);
    expect(refused.code).to.equal(2);
    expect(refused.stderr).to.include('--yes');
    const deleted = await run(['datasets', 'delete', 'cli-crm', '--yes', '--json']);
    expect(JSON.parse(deleted.stdout)).to.include({ id: dataset.id, deleted: true });
  });

  it('when a file is uploaded in a terminal, then bars show the bytes sent and the rows built, and the active version is told', async function () {
    this.timeout(60_000);
    await run(['datasets', 'create', '--external-ref', 'cli-upload', '--name', 'Upload']);
    // What the bars count does not depend on the size: 50,000 rows (3 MB) keep two builds and an export quick.
    const file = join(dir, 'contracts.csv');
    const contents = contractsCsv(50_000);
    await writeFile(file, contents);
    const megabytes = (Buffer.byteLength(contents) / 1_000_000).toFixed(1).replace('.', '\\.');
    const shown = await inTerminal(['upload', file, '--dataset', 'cli-upload']);
    await mkdir(join(projectRoot, 'test/artifacts/cli'), { recursive: true });
    await writeFile(join(projectRoot, 'test/artifacts/cli/upload.txt'), shown.screen);
    expect(shown.code, shown.screen).to.equal(0);
    const screen = shown.screen.replace(/\x1b\[[0-9;?]*[A-Za-z]/g, '');
    expect(screen).to.match(new RegExp(`Uploading \\|█+\\| 100% \\| ${megabytes}/${megabytes} MB`));
    expect(screen).to.match(/Building  \|█+\| 100% \| 50,000 rows/);
    expect(screen).to.match(/Version ver_\w+ is active: 50000 rows \(50000 contributing\)\./);

    const piped = await run(['upload', file, '--dataset', 'cli-upload', '--json']);
    expect(piped.code).to.equal(0);
    expect(piped.stderr, 'no bars without a terminal').to.equal('');
    expect(JSON.parse(piped.stdout)).to.include({ object: 'version', status: 'active', rowCount: 50_000 });

    const metrics = await run(['metrics', 'cli-upload']);
    expect(metrics.code).to.equal(0);
    expect(metrics.stdout).to.match(/^rows\s+50000 \(50000 contributing/m).and.match(/currencies:\ncurrency\s+contracts\s+customers\s+totalValue\n/);
    const catalog = await run(['catalog', 'cli-upload']);
    expect(catalog.stdout).to.match(/fields:\nname\s+type\s+gating/).and.match(/products:\nproduct\s+contracts\s+customers/);
    const path = join(dir, 'export.jsonl');
    const exported = await run(['export', 'cli-upload', '--format', 'jsonl', '-o', path]);
    expect(exported.code, exported.stderr).to.equal(0);
    expect(exported.stdout).to.match(/^Saved 50000 rows \(\d+ bytes, jsonl\) to /);
    expect((await readFile(path, 'utf8')).trim().split('\n')).to.have.length(50_000);
  });

  it('when rows are rejected, then they are a table with where every error and the rejected rows are, and it says to fix the whole file and upload it whole; exit 4', async () => {
    const dataset = JSON.parse((await run(['datasets', 'create', '--external-ref', 'cli-bad', '--name', 'Bad', '--json'])).stdout);
    const file = join(dir, 'bad.csv');
    await writeFile(file, contractsCsv(1000, { badEvery: 4 }));
    const saved = join(dir, 'rejected.csv');
    const rejected = await run(['upload', file, '--dataset', 'cli-bad', '--errors-csv', saved]);
    expect(rejected.code).to.equal(4);
    expect(rejected.stdout).to.match(/^The file was rejected: 250 row errors; nothing was written \(version ver_\w+\)\.\n\nrow\s+field\s+code\s+message\n5\s+amount\s+not_a_number\s+/);
    const versionId = /version (ver_\w+)/.exec(rejected.stdout)![1]!;
    expect(rejected.stdout).to.include('… and 150 more.\n');
    expect(rejected.stdout).to.include(`Every error:       dsvc versions errors ${dataset.id} ${versionId} --all\n`);
    expect(rejected.stdout).to.include(`The rejected rows: saved in ${saved} (with their row numbers and problems), to find them in your file.\n`);
    expect(rejected.stdout).to.include(`Fix these rows in ${file} itself and upload the whole file again: a version replaces all of the dataset's data,\nit does not add to it`);
    expect(rejected.stdout).not.to.include('fix them and upload again');
    const rows = (await readFile(saved, 'utf8')).trim().split('\n');
    expect(rows).to.have.length(251);
    const all = await run(['versions', 'errors', 'cli-bad', versionId, '--all', '--json']);
    expect(JSON.parse(all.stdout)).to.have.length(250);

    // Without --errors-csv, it names the command that fetches them later; that command does.
    const again = await run(['upload', file, '--dataset', 'cli-bad']);
    expect(again.code).to.equal(4);
    const againId = /version (ver_\w+)/.exec(again.stdout)![1]!;
    const hint = `dsvc versions errors ${dataset.id} ${againId} --csv rejected.csv`;
    expect(again.stdout).to.include(`The rejected rows: ${hint}\n`);
    const later = await run([...hint.split(' ').slice(1, -1), join(dir, 'later.csv')]);
    expect(later.code, later.stderr).to.equal(0);
    expect((await readFile(join(dir, 'later.csv'), 'utf8')).trim().split('\n')).to.have.length(251);

    // The rejected rows uploaded on their own would replace the dataset with them: refused, nothing sent.
    const versionsBefore = JSON.parse((await run(['versions', 'list', 'cli-bad', '--json'])).stdout).length;
    const wrongFile = await run(['upload', saved, '--dataset', 'cli-bad']);
    expect(wrongFile.code).to.equal(2);
    expect(wrongFile.stderr).to.include(`${saved} holds rejected rows only`).and.include('fix those rows in your whole file and upload that');
    expect(JSON.parse((await run(['versions', 'list', 'cli-bad', '--json'])).stdout)).to.have.length(versionsBefore);

    const json = await run(['upload', file, '--dataset', 'cli-bad', '--json']);
    expect(json.code).to.equal(4);
    expect(JSON.parse(json.stderr)).to.include({ status: 422, errorCount: 250 });
  });

  it('when it is run as the package\'s bin (built or not), then it answers', async () => {
    const bin = await new Promise<Outcome>((resolve) =>
      execFile(process.execPath, [join(projectRoot, 'sdk/bin/dsvc.js'), '--help'], { env: { ...process.env, ...env } }, (error, stdout, stderr) =>
        resolve({ code: error ? ((error as { code?: number }).code ?? 1) : 0, stdout, stderr }),
      ),
    );
    expect(bin.code, bin.stderr).to.equal(0);
    expect(bin.stdout).to.match(/^Usage: dsvc <command> \[options\]/);
    // Read by a program that stops after a line: no broken-pipe trace.
    const piped = await new Promise<Outcome>((resolve) =>
      execFile('sh', ['-c', `'${process.execPath}' '${join(projectRoot, 'sdk/bin/dsvc.js')}' --help | head -1`], { env: { ...process.env, ...env } }, (error, stdout, stderr) =>
        resolve({ code: error ? ((error as { code?: number }).code ?? 1) : 0, stdout, stderr }),
      ),
    );
    expect(piped.stdout).to.equal('Usage: dsvc <command> [options]\n');
    expect(piped.stderr).to.equal('');
  });

  it('when a command or an option is wrong, then exit 2 with one line; --help shows each command with the exit codes', async () => {
    const top = await run(['--help']);
    expect(top.code).to.equal(0);
    expect(top.stdout).to.match(/^Usage: dsvc <command> \[options\]/).and.include('Exit codes: 0 done, 1 failed, 2 bad usage, 3 not found, 4 the file was rejected');
    const upload = await run(['upload', '--help']);
    expect(upload.stdout).to.include('--errors-csv <path>').and.include('--dataset <dataset>');
    const unknown = await run(['uplod', 'x.csv']);
    expect(unknown.code).to.equal(2);
    expect(unknown.stderr).to.match(/unknown command 'uplod'\n\(Did you mean upload\?\)/);
    expect((await run(['export', 'x', '--format', 'xml', '-o', 'f'])).code).to.equal(2);
    expect((await run(['events', 'list', '--limit', '0'])).code).to.equal(2);
  });

  it('when `listen` runs, then the events that happen are forwarded to the local URL, signed with the secret it showed', async () => {
    const receiver = await new WebhookReceiver().start();
    let child: ChildProcess | undefined;
    try {
      child = spawn(process.execPath, [CLI, 'listen', '--forward-to', receiver.url('/local'), '--interval', '200'], { env: { ...process.env, ...env } });
      let said = '';
      child.stdout!.on('data', (chunk: Buffer) => (said += chunk.toString()));
      const ready = await eventually(() => said, (s) => s.includes('Ready!'));
      const secret = /secret is (whsec_\S+)/.exec(ready)![1]!;
      receiver.expect('/local', secret);
      const created = await run(['datasets', 'create', '--external-ref', 'cli-listened', '--name', 'Listened', '--json']);
      const id = JSON.parse(created.stdout).id;
      const received = await eventually(() => receiver.at('/local'), (r) => r.some((d) => d.event.data.object.id === id));
      const delivery = received.find((d) => d.event.data.object.id === id)!;
      expect(delivery.event.type).to.equal('dataset.created');
      expect(receiver.unverified).to.deep.equal([]);
      // Events from before it started are not forwarded.
      expect(received.map((d) => d.event.data.object.externalRef)).not.to.include('cli-crm');
      await eventually(() => said, (s) => s.includes('<-- [200] POST'));
      expect(said).to.match(/--> dataset\.created \[evt_\w+\]\n.*<-- \[200\] POST http/);
      child.kill('SIGINT');
      const [code] = await new Promise<[number | null]>((resolve) => child!.once('exit', (c) => resolve([c])));
      expect(code).to.equal(0);
    } finally {
      child?.kill();
      await receiver.stop();
    }
  });

  it('when the key is in DATASET_SERVICE_API_KEY, then it wins over the file', async () => {
    const other = (await svc.tenant()).key;
    const saved = env['DATASET_SERVICE_API_KEY'];
    env['DATASET_SERVICE_API_KEY'] = other;
    try {
      const shown = JSON.parse((await run(['config', 'show', '--json'])).stdout);
      expect(shown).to.include({ keyFrom: 'environment', key: `${other.slice(0, 12)}…` });
      expect(JSON.parse((await run(['datasets', 'list', '--json'])).stdout)).to.deep.equal([]);
    } finally {
      env['DATASET_SERVICE_API_KEY'] = saved!;
    }
    expect(CONTRACT_HEADER).to.match(/^contractId/);
  });

  it('when `dsvc login` runs in a terminal, then the key typed is never shown, it is checked, its mode is said, and it is kept for its owner only; `config set` is the same', async () => {
    const config = join(dir, 'login-terminal', 'config.json');
    const shown = await typingInTerminal(['login'], /API key.*: $/, key, { DSVC_CONFIG: config });
    expect(shown.code, shown.screen).to.equal(0);
    expect(shown.screen).not.to.include(key).and.not.include(key.slice(12));
    expect(shown.screen).to.include(`Logged in to ${svc.url} with ${key.slice(0, 12)}…, in test mode`);
    expect(shown.screen).to.include(`Kept in ${config} (readable by you only).`);
    expect(JSON.parse(await readFile(config, 'utf8'))).to.deep.equal({ apiKey: key, baseUrl: svc.url });
    expect((await stat(config)).mode & 0o777).to.equal(0o600);

    const other = (await svc.tenant()).key;
    const alias = await typingInTerminal(['config', 'set'], /API key.*: $/, other, { DSVC_CONFIG: config });
    expect(alias.code, alias.screen).to.equal(0);
    expect(alias.screen).not.to.include(other.slice(12));
    expect(JSON.parse(await readFile(config, 'utf8'))).to.include({ apiKey: other });
  });

  it('when a key is piped to `dsvc login`, then one the service refuses or that cannot be checked is not kept, and a live key is said to be live; the environment wins over what is kept', async () => {
    const config = join(dir, 'login-piped', 'config.json');
    const unknown = `svc_test_${'A'.repeat(43)}`;
    for (const command of [['login'], ['config', 'set']]) {
      const refused = await run(command, `${unknown}\n`, { DSVC_CONFIG: config });
      expect(refused.code, refused.stderr).to.equal(1);
      expect(refused.stderr).to.include('Nothing was kept.').and.include('Unauthorized');
      expect(await stat(config).catch(() => 'absent')).to.equal('absent');
    }
    const port = await freePort();
    const away = await run(['login'], `${key}\n`, { DSVC_CONFIG: config, DATASET_SERVICE_URL: `http://127.0.0.1:${port}` });
    expect(away.code).to.equal(1);
    expect(away.stderr).to.include(`cannot reach the service at http://127.0.0.1:${port}`);
    expect(await stat(config).catch(() => 'absent')).to.equal('absent');

    const live = (await svc.tenant('live')).key;
    const loggedIn = await run(['login'], `${live}\n`, { DSVC_CONFIG: config });
    expect(loggedIn.code, loggedIn.stderr).to.equal(0);
    expect(loggedIn.stdout).to.include(`with ${live.slice(0, 12)}…, in live mode`);
    expect(JSON.parse((await run(['login', '--json'], `${live}\n`, { DSVC_CONFIG: config })).stdout)).to.include({ mode: 'live', baseUrl: svc.url });
    // A refused key later leaves the kept one as it was.
    await run(['login'], `${unknown}\n`, { DSVC_CONFIG: config });
    expect(JSON.parse(await readFile(config, 'utf8'))).to.include({ apiKey: live });

    const overridden = JSON.parse((await run(['config', 'show', '--json'], '', { DSVC_CONFIG: config, DATASET_SERVICE_API_KEY: key, DATASET_SERVICE_URL: 'http://127.0.0.1:1' })).stdout);
    expect(overridden).to.include({ keyFrom: 'environment', key: `${key.slice(0, 12)}…`, baseUrl: 'http://127.0.0.1:1' });
  });

  it('when a dataset is deleted and its externalRef created again, then a new dataset is made; creating one that exists names it (exit 1); a dropped answer is retried with the run\'s own key', async () => {
    const first = JSON.parse((await run(['datasets', 'create', '--external-ref', 'tmp-x', '--name', 'Tmp', '--json'])).stdout);
    expect((await run(['datasets', 'delete', 'tmp-x', '--yes'])).code).to.equal(0);
    const second = await run(['datasets', 'create', '--external-ref', 'tmp-x', '--name', 'Tmp', '--json']);
    expect(second.code, second.stderr).to.equal(0);
    const created = JSON.parse(second.stdout);
    expect(created.id).not.to.equal(first.id);
    expect(JSON.parse((await run(['datasets', 'get', 'tmp-x', '--json'])).stdout).id).to.equal(created.id);

    for (const name of ['Tmp', 'Another name']) {
      const taken = await run(['datasets', 'create', '--external-ref', 'tmp-x', '--name', name]);
      expect(taken.code).to.equal(1);
      expect(taken.stdout).to.equal('');
      expect(taken.stderr).to.match(new RegExp(`^dsvc: A dataset with externalRef "tmp-x" already exists: ${created.id}\\. Read it with \`dsvc datasets get ${created.id}\``));
      expect(taken.stderr).not.to.match(/idempotency/i);
    }
    const json = await run(['datasets', 'create', '--external-ref', 'tmp-x', '--name', 'Tmp', '--json']);
    expect(JSON.parse(json.stderr).error).to.include({ status: 409, existingId: created.id });

    // Its own retry: the answer to the first attempt is lost, the retry carries the same key and gets it.
    const proxy = await new ChangingProxy(svc.url).start();
    try {
      proxy.dropAnswer = (method, path) => method === 'POST' && path === '/v1/datasets';
      const retried = await run(['datasets', 'create', '--external-ref', 'tmp-retried', '--name', 'Retried', '--json'], '', { DATASET_SERVICE_URL: proxy.url });
      expect(retried.code, retried.stderr).to.equal(0);
      const posts = proxy.seen.filter((s) => s.method === 'POST');
      expect(posts).to.have.length(2);
      expect(posts[0]!.key).to.be.a('string').and.equal(posts[1]!.key);
      const again = await run(['datasets', 'create', '--external-ref', 'tmp-other', '--name', 'Other'], '', { DATASET_SERVICE_URL: proxy.url });
      expect(again.code).to.equal(0);
      expect(proxy.seen.filter((s) => s.method === 'POST')[2]!.key, 'another run, another key').not.to.equal(posts[0]!.key);
    } finally {
      await proxy.stop();
    }
  });

  it('when the file is missing or not a file, then exit 2 naming it; when the service cannot be reached, exit 1 naming its address', async () => {
    const missing = await run(['upload', 'nope.csv', '--dataset', 'cli-crm']);
    expect(missing.code).to.equal(2);
    expect(missing.stderr).to.equal('dsvc: nope.csv: no such file\n');
    const folder = await run(['upload', dir, '--dataset', 'cli-crm']);
    expect(folder.code).to.equal(2);
    expect(folder.stderr).to.equal(`dsvc: ${dir} is not a file\n`);
    const port = await freePort();
    const away = await run(['datasets', 'list'], '', { DATASET_SERVICE_URL: `http://127.0.0.1:${port}` });
    expect(away.code).to.equal(1);
    expect(away.stderr).to.match(new RegExp(`^dsvc: cannot reach the service at http://127\\.0\\.0\\.1:${port} \\(ECONNREFUSED\\)\\. Is it running there\\?`));
    expect(away.stderr).to.include('--base-url');
  });

  it('when no row of a file contributes, then the upload says so, and that the catalog shows what each column filled', async () => {
    await run(['datasets', 'create', '--external-ref', 'cli-columns', '--name', 'Columns']);
    const file = join(dir, 'columns.csv');
    await writeFile(file, 'customer,start,end,price,cur\nAcme,2024-01-01,2024-12-31,1200,EUR\nBeta,2024-02-01,2025-01-31,2400,EUR\n');
    const uploaded = await run(['upload', file, '--dataset', 'cli-columns']);
    expect(uploaded.code, uploaded.stderr).to.equal(0);
    expect(uploaded.stdout).to.match(/^Version ver_\w+ is active: 2 rows \(0 contributing\)\.\nWarning: /);
    expect(uploaded.stdout).to.match(/The fields each column filled: dsvc catalog ds_\w+\n$/);
  });

  it('when the service sends a version\'s warnings and columns, then the upload prints each warning with its code and field, and the ignored columns', async () => {
    const proxy = await new ChangingProxy(svc.url).start();
    proxy.change = (body) =>
      body['object'] === 'version' && body['status'] === 'active'
        ? {
            ...body,
            columns: { recognized: ['customer'], ignored: ['start', 'end', 'price', 'cur'], missing: ['contractId', 'product', 'startDate', 'endDate', 'amount', 'currency'] },
            warnings: [
              { code: 'column_missing', field: 'startDate', message: 'The header has no startDate column.' },
              { code: 'no_contributing_rows', message: 'Rows were stored but none contributes to the metrics.' },
            ],
          }
        : body;
    try {
      const file = join(dir, 'columns.csv');
      const uploaded = await run(['upload', file, '--dataset', 'cli-columns'], '', { DATASET_SERVICE_URL: proxy.url });
      expect(uploaded.code, uploaded.stderr).to.equal(0);
      expect(uploaded.stdout).to.match(
        /^Version ver_\w+ is active: 2 rows \(0 contributing\)\.\nWarning: The header has no startDate column\. \(column_missing, startDate\)\nWarning: Rows were stored but none contributes to the metrics\. \(no_contributing_rows\)\nColumns ignored: start, end, price, cur\n/,
      );
      const json = JSON.parse((await run(['upload', file, '--dataset', 'cli-columns', '--json'], '', { DATASET_SERVICE_URL: proxy.url })).stdout);
      expect(json.warnings).to.have.length(2);
    } finally {
      await proxy.stop();
    }
  });

  it('when events are listed or one is read, then `dsvc events` lists them (--type, --limit), `events get` shows one with its object, and an unknown one is exit 3', async () => {
    const listed = await run(['events']);
    expect(listed.code, listed.stderr).to.equal(0);
    expect(listed.stdout.split('\n')[0]).to.match(/^id\s+type\s+object\s+createdAt$/);
    expect(listed.stdout).to.match(/evt_\w+\s+dataset\.created\s+ds_\w+/);
    const deleted = JSON.parse((await run(['events', 'list', '--type', 'dataset.deleted', '--limit', '1', '--json'])).stdout);
    expect(deleted).to.have.length(1);
    expect(deleted[0]).to.include({ object: 'event', type: 'dataset.deleted' });
    const shown = await run(['events', 'get', deleted[0].id]);
    expect(shown.code, shown.stderr).to.equal(0);
    expect(shown.stdout).to.match(new RegExp(`^id\\s+${deleted[0].id}\\ntype\\s+dataset\\.deleted\\nmode\\s+test\\ncreatedAt\\s+\\S+\\n\\ndata\\.object:\\nid\\s+${deleted[0].data.object.id}\\n`));
    expect(shown.stdout).to.match(new RegExp(`^externalRef\\s+${deleted[0].data.object.externalRef}$`, 'm'));
    expect(JSON.parse((await run(['events', 'get', deleted[0].id, '--json'])).stdout)).to.deep.equal(deleted[0]);
    const missing = await run(['events', 'get', 'evt_nope']);
    expect(missing.code).to.equal(3);
  });


  it('when `dsvc trigger EVENT` runs with a test key, then it creates what makes that event happen and names the event; a live key is refused and nothing is made', async () => {
    for (const type of ['dataset.created', 'dataset.deleted', 'version.active', 'version.failed', 'version.superseded', 'export.ready']) {
      const triggered = await run(['trigger', type, '--json']);
      expect(triggered.code, `${type}: ${triggered.stderr}`).to.equal(0);
      const { event } = JSON.parse(triggered.stdout);
      expect(event, type).to.include({ object: 'event', type, mode: 'test' });
      expect(JSON.parse((await run(['events', 'get', event.id, '--json'])).stdout)).to.deep.equal(event);
    }
    const told = await run(['trigger', 'version.active']);
    expect(told.code, told.stderr).to.equal(0);
    expect(told.stdout).to.match(/^Triggered version\.active \(test mode\):\n {2}created dataset ds_\w+ \(dsvc-trigger-\w+\)\n {2}uploaded a file of 1 row: version ver_\w+ is active\nEvent evt_\w+: dsvc events get evt_\w+\n$/);

    const live = (await svc.tenant('live')).key;
    const refused = await run(['trigger', 'dataset.created'], '', { DATASET_SERVICE_API_KEY: live });
    expect(refused.code).to.equal(2);
    expect(refused.stderr).to.include('test mode only');
    expect(JSON.parse((await run(['datasets', 'list', '--json'], '', { DATASET_SERVICE_API_KEY: live })).stdout)).to.deep.equal([]);
    expect((await run(['trigger', 'export.failed'])).code).to.equal(2);
  });

  describe('the figures', () => {
    // The contract's example: a yearly contract renewed mid-month for less (500.00 a month, then
    // 400.00), another customer's 1,200.00 a month for 2025, and a USD customer.
    const EXAMPLE = [
      'contractId,customer,product,startDate,endDate,amount,currency',
      'a-2024,Acme,Pro,2024-01-15,2025-01-14,6000.00,EUR',
      'a-2025,Acme,Pro,2025-01-15,2026-01-14,4800.00,EUR',
      'b-2025,Beta,Team,2025-01-01,2025-12-31,14400.00,EUR',
      'u-2025,Uno,Lite,2025-03-01,2025-08-31,600.00,USD',
    ].join('\n');
    const plain = (screen: string) => screen.replace(/\x1b\[[0-9;?]*[A-Za-z]/g, '');
    before(async () => {
      expect((await run(['login'], `${key}\n`)).code).to.equal(0);
      await run(['datasets', 'create', '--external-ref', 'cli-figures', '--name', 'Figures']);
      await writeFile(join(dir, 'figures.csv'), EXAMPLE);
      const uploaded = await run(['upload', join(dir, 'figures.csv'), '--dataset', 'cli-figures']);
      expect(uploaded.code, uploaded.stderr).to.equal(0);
    });

    it('when `dsvc metrics` runs in a terminal, then each currency\'s MRR is a chart within its width, its movements as bars under the same months, then its table', async () => {
      const shown = await inTerminal(['metrics', 'cli-figures', '--currency', 'eur']);
      expect(shown.code, shown.screen).to.equal(0);
      expect(shown.screen, 'coloured in a terminal').to.include('\x1b[');
      const screen = plain(shown.screen);
      await mkdir(join(projectRoot, 'test/artifacts/cli'), { recursive: true });
      await writeFile(join(projectRoot, 'test/artifacts/cli/metrics.txt'), screen);
      expect(screen).not.to.include('USD');
      const lines = screen.split('\n');
      const top = lines.findIndex((l) => l.startsWith('EUR: MRR at each month end, 2024-01 to 2026-01'));
      const end = lines.findIndex((l) => l.startsWith('EUR monthly'));
      expect(top).to.be.greaterThan(0);
      const chart = lines.slice(top, end);
      for (const line of chart) expect(line.length, line).to.be.at.most(100);
      // The line: 1,600.00 at its top, from January 2025; the labels under the months.
      const mrrTop = chart.find((l) => /^\s+1,600\.00 ┼/.test(l))!;
      const months = chart.find((l) => /^\s+2024-01 /.test(l))!;
      expect(months).to.match(/2026-01$/);
      const firstMonth = months.indexOf('2024-01');
      const renewal = mrrTop.indexOf('╭');
      const width = (renewal - firstMonth) / 12;
      expect(width, 'whole columns a month').to.be.oneOf([1, 2, 3, 4]);
      // The bars: January 2025's new business above the axis and its contraction below, in the
      // renewal's columns; January 2026's churn of both customers at the bottom.
      const axis = chart.findIndex((l) => /^\s+0\.00 ┼─+$/.test(l));
      expect(chart[axis - 2]![renewal], 'new business').to.equal('█');
      expect(chart[axis + 1]![renewal], 'contraction').to.equal('░');
      expect(chart[axis + 3]).to.match(/^\s+-1,600\.00 ┤/);
      expect(chart[axis + 3]![firstMonth + 24 * width], 'churn').to.equal('█');
      expect(chart.join('\n')).to.include('█ new business').and.include('░ contraction').and.include('█ churn');
      // The table: the renewal month as the figures' definitions give it.
      expect(screen).to.match(/^month\s+customers\s+mrr\s+arr\s+arpa\s+newBusiness\s+expansion\s+contraction\s+churn\s+reactivation\s+netNewMrr\s+customerChurn\s+grossMrrChurn\s+nrr\s+grr$/m);
      expect(screen).to.match(/^2025-01\s+2\s+1600\.00\s+19200\.00\s+800\.00\s+1200\.00 \(1\)\s+-\s+100\.00 \(1\)\s+-\s+-\s+1100\.00\s+0\.0000\s+0\.2000\s+0\.8000\s+0\.8000$/m);
      expect(screen).to.match(/^2026-01\s+0\s+0\.00\s+0\.00\s+-\s+-\s+-\s+-\s+1600\.00 \(2\)\s+-\s+-1600\.00\s+/m);

      // Piped: the same chart, without colours; --json is the service's document.
      const piped = await run(['metrics', 'cli-figures']);
      expect(piped.stdout).not.to.include('\x1b[');
      expect(piped.stdout).to.include('EUR: MRR at each month end, 2024-01 to 2026-01').and.include('USD: MRR at each month end, 2025-03 to 2025-09');
      const dataset = JSON.parse((await run(['datasets', 'get', 'cli-figures', '--json'])).stdout);
      const json = await run(['metrics', 'cli-figures', '--json']);
      expect(JSON.parse(json.stdout)).to.deep.equal((await svc.request(`/v1/datasets/${dataset.id}/metrics`, { key })).json);
      const usd = JSON.parse((await run(['metrics', 'cli-figures', '--currency', 'USD', '--json'])).stdout);
      expect(usd.currencies.map((c: { currency: string }) => c.currency)).to.deep.equal(['USD']);
      expect(new Set(usd.monthly.map((m: { currency: string }) => m.currency))).to.deep.equal(new Set(['USD']));
      const none = await run(['metrics', 'cli-figures', '--currency', 'GBP']);
      expect(none.code).to.equal(3);
      expect(none.stderr).to.include('GBP').and.include('EUR, USD');
      expect((await run(['metrics', 'cli-figures', '--currency', 'euro'])).code).to.equal(2);
    });

    it('when `dsvc metrics --reporting-currency` runs, then the whole business is drawn and tabled in that currency, with fxImpact, and the months lacking a rate are marked', async () => {
      const none = await run(['metrics', 'cli-figures', '--reporting-currency', 'EUR']);
      expect(none.code).to.equal(1);
      expect(none.stderr).to.include('exchange-rates');
      // USD at 0.50 EUR from March to August 2025: not in September, Uno's churn month.
      const rates = ['03', '04', '05', '06', '07', '08'].map((mm) => ({ month: `2025-${mm}`, currency: 'USD', rate: '0.5' }));
      const set = await svc.request('/v1/exchange-rates', { key, json: { base: 'EUR', rates } });
      expect(set.status, set.text).to.equal(201);
      const shown = await run(['metrics', 'cli-figures', '--reporting-currency', 'eur']);
      expect(shown.code, shown.stderr).to.equal(0);
      expect(shown.stdout).to.include(`rates    ${set.json.id}`).and.include('EUR: MRR at each month end, 2024-01 to 2026-01');
      expect(shown.stdout).not.to.include('USD: MRR');
      expect(shown.stdout).to.match(/^month\s+customers\s+mrr\s+arr\s+arpa\s+newBusiness\s+expansion\s+contraction\s+churn\s+reactivation\s+netNewMrr\s+fxImpact\s+/m);
      // March 2025: Acme 400.00 + Beta 1,200.00 + Uno's 100.00 USD at 0.50.
      expect(shown.stdout).to.match(/^2025-03\s+3\s+1650\.00\s+19800\.00\s+550\.00\s+50\.00 \(1\)\s+-\s+-\s+-\s+-\s+50\.00\s+0\.00\s/m);
      expect(shown.stdout).to.match(/^2025-09\s+\?\s+\?\s+\?/m);
      expect(shown.stdout).to.include('lack a rate').and.include('USD 2025-09');
      const dataset = JSON.parse((await run(['datasets', 'get', 'cli-figures', '--json'])).stdout);
      const json = JSON.parse((await run(['metrics', 'cli-figures', '--reporting-currency', 'EUR', '--json'])).stdout);
      expect(json).to.deep.equal((await svc.request(`/v1/datasets/${dataset.id}/metrics?reportingCurrency=EUR`, { key })).json);
      expect((await run(['metrics', 'cli-figures', '--reporting-currency', 'EUR', '--currency', 'EUR'])).code).to.equal(2);

      // Cohorts and customers in it too: Uno's dollars at 0.50; September's rate is missing for Uno's churn.
      const cohorts = await run(['cohorts', 'cli-figures', '--reporting-currency', 'EUR']);
      expect(cohorts.code, cohorts.stderr).to.equal(0);
      expect(cohorts.stdout).to.include(`EUR (the whole business, each customer once, converted with ${set.json.id})`);
      expect(cohorts.stdout).to.match(/^2025-03\s+1\s+50\.00\s+100%/m);
      expect(cohorts.stdout).not.to.match(/^USD/m);
      const customers = await run(['customers', 'cli-figures', '--month', '2025-09', '--reporting-currency', 'EUR']);
      expect(customers.code, customers.stderr).to.equal(0);
      expect(customers.stdout).to.match(/^Acme\s+EUR\s+400\.00\s+400\.00\s+retained$/m);
      expect(customers.stdout).to.match(/^Uno\s+EUR\s+\?\s+\?\s+\?$/m);
      expect(customers.stdout + customers.stderr).to.include('lacks a rate');
      const customersJson = JSON.parse((await run(['customers', 'cli-figures', '--month', '2025-09', '--reporting-currency', 'EUR', '--json'])).stdout);
      expect(customersJson).to.deep.equal((await svc.request(`/v1/datasets/${dataset.id}/customers?month=2025-09&reportingCurrency=EUR&limit=100`, { key })).json.data);
      expect((await run(['cohorts', 'cli-figures', '--reporting-currency', 'EUR', '--currency', 'USD'])).code).to.equal(2);
    });

    it('when a series is longer than the terminal is wide, then the chart shows its latest months and says so', async () => {
      await run(['datasets', 'create', '--external-ref', 'cli-long', '--name', 'Long']);
      await writeFile(join(dir, 'long.csv'), 'customer,startDate,endDate,amount,currency\nLong,2000-01-01,2019-12-31,24000.00,EUR\n');
      expect((await run(['upload', join(dir, 'long.csv'), '--dataset', 'cli-long'])).code).to.equal(0);
      const screen = plain((await inTerminal(['metrics', 'cli-long'])).screen);
      const lines = screen.split('\n');
      const top = lines.findIndex((l) => l.startsWith('EUR: MRR at each month end'));
      const chart = lines.slice(top, lines.findIndex((l) => l.startsWith('EUR monthly')));
      for (const line of chart) expect(line.length, line).to.be.at.most(100);
      expect(chart[1]).to.match(/^\(the latest \d+ of its 241 months; --from and --to choose others\)$/);
      expect(chart.find((l) => /^\s+\d{4}-\d\d /.test(l))).to.match(/2020-01$/);
    });

    it('when `dsvc cohorts` and `dsvc customers` run, then cohorts are a table of the MRR each keeps, and customers of a month list their movement', async () => {
      const cohorts = await run(['cohorts', 'cli-figures', '--currency', 'EUR']);
      expect(cohorts.code, cohorts.stderr).to.equal(0);
      expect(cohorts.stdout).to.match(/^cohort\s+customers\s+mrr\s+\+0\s+\+1\s+.*\+12$/m);
      expect(cohorts.stdout).to.match(/^2024-01\s+1\s+500\.00\s+100%(\s+100%){11}\s+80%$/m);
      expect(cohorts.stdout).to.match(/^2025-01\s+1\s+1200\.00\s+100%(\s+100%){11}\s+0%$/m);
      expect(cohorts.stdout).not.to.include('USD');

      const january = await run(['customers', 'cli-figures', '--month', '2025-01']);
      expect(january.code, january.stderr).to.equal(0);
      expect(january.stdout).to.match(/^customer\s+currency\s+previousMrr\s+mrr\s+movement\nAcme\s+EUR\s+500\.00\s+400\.00\s+contraction\nBeta\s+EUR\s+0\.00\s+1200\.00\s+newBusiness\n$/);
      const churned = await run(['customers', 'cli-figures', '--month', '2026-01', '--movement', 'churn', '--json']);
      expect(JSON.parse(churned.stdout).map((c: { customer: string }) => c.customer)).to.deep.equal(['Acme', 'Beta']);
      const first = await run(['customers', 'cli-figures', '--month', '2026-01', '--limit', '1']);
      expect(first.stdout.trim().split('\n')).to.have.length(2);
      expect(first.stderr).to.include('--all');
      const all = await run(['customers', 'cli-figures', '--month', '2026-01', '--limit', '1', '--all', '--json']);
      expect(JSON.parse(all.stdout)).to.have.length(2);
      expect((await run(['customers', 'cli-figures', '--month', '2026-13'])).code).to.equal(2);
      expect((await run(['customers', 'cli-figures', '--month', '2026-01', '--movement', 'lost'])).code).to.equal(2);
    });

    it('when `dsvc changes` runs on a corrected upload, then it prints the contracts added, removed, changed and unchanged and the restated months; --contracts lists what changed in each', async () => {
      // Beta's amount corrected, Uno's contract gone, a new one for Zed.
      const corrected = [...EXAMPLE.split('\n').slice(0, 3), 'b-2025,Beta,Team,2025-01-01,2025-12-31,18000.00,EUR', 'z-2025,Zed,Pro,2025-06-01,2026-05-31,1200.00,EUR'].join('\n');
      await writeFile(join(dir, 'corrected.csv'), corrected);
      const uploaded = await run(['upload', join(dir, 'corrected.csv'), '--dataset', 'cli-figures', '--json']);
      expect(uploaded.code, uploaded.stderr).to.equal(0);
      const version = JSON.parse(uploaded.stdout).id as string;

      const summary = await run(['changes', version]);
      expect(summary.code, summary.stderr).to.equal(0);
      expect(summary.stdout).to.match(/^contracts\s+1 added, 1 removed, 1 changed, 2 unchanged$/m);
      expect(summary.stdout).to.match(/^currency\s+month\s+mrrBefore\s+mrrAfter\s+mrrChange\s+customersBefore\s+customersAfter$/m);
      expect(summary.stdout).to.match(/^EUR\s+2025-01\s+1600\.00\s+1900\.00\s+300\.00\s+2\s+2$/m);
      expect(summary.stdout).to.match(/^USD\s+2025-03\s+100\.00\s+0\.00\s+-100\.00\s+1\s+0$/m);
      const json = JSON.parse((await run(['changes', version, '--dataset', 'cli-figures', '--json'])).stdout);
      expect(json.contracts).to.deep.equal({ added: 1, removed: 1, changed: 1, unchanged: 2 });

      const contracts = await run(['changes', version, '--contracts']);
      expect(contracts.code, contracts.stderr).to.equal(0);
      expect(contracts.stdout).to.match(/^change\s+contractId\s+customer\s+what$/m);
      expect(contracts.stdout).to.match(/^changed\s+b-2025\s+Beta\s+amount 14400\.00 → 18000\.00$/m);
      expect(contracts.stdout).to.match(/^removed\s+u-2025\s+Uno\s+Lite 2025-03-01\.\.2025-08-31 600\.00 USD$/m);
      const added = JSON.parse((await run(['changes', version, '--contracts', '--change', 'added', '--json'])).stdout);
      expect(added.map((c: { contractId: string }) => c.contractId)).to.deep.equal(['z-2025']);
      const first = await run(['changes', '--json', version, '--contracts', '--limit', '1']);
      expect(JSON.parse(first.stdout)).to.have.length(1);
      expect(first.stderr).to.equal('');
      expect((await run(['changes', 'ver_nothing'])).code).to.equal(3);
      expect((await run(['changes', version, '--contracts', '--change', 'modified'])).code).to.equal(2);
    });
  });
});

/**
 * A proxy before the service that changes what it answers: `change` rewrites JSON answers (what a
 * newer service would send), `dropAnswer` lets the first matching request reach the service and
 * then cuts the connection before its answer (a lost answer). `seen` keeps each request's key.
 */
class ChangingProxy {
  change: ((body: Record<string, unknown>) => Record<string, unknown>) | undefined;
  dropAnswer: ((method: string, path: string) => boolean) | undefined;
  readonly seen: { method: string; path: string; key: string | undefined }[] = [];
  private readonly target: URL;
  private readonly server: Server;

  constructor(target: string) {
    this.target = new URL(target);
    this.server = createServer((req, res) => {
      this.seen.push({ method: req.method!, path: req.url!, key: req.headers['idempotency-key'] as string | undefined });
      const drop = this.dropAnswer?.(req.method!, req.url!) ?? false;
      if (drop) this.dropAnswer = undefined;
      const upstream = httpRequest({ host: this.target.hostname, port: this.target.port, method: req.method, path: req.url, headers: req.headers }, (answer) => {
        if (drop) {
          answer.resume();
          answer.on('end', () => res.socket?.destroy());
          return;
        }
        const json = /json/.test(answer.headers['content-type'] ?? '');
        if (!this.change || !json) {
          res.writeHead(answer.statusCode!, answer.headers);
          answer.pipe(res);
          return;
        }
        let text = '';
        answer.setEncoding('utf8');
        answer.on('data', (chunk: string) => (text += chunk));
        answer.on('end', () => {
          const body = JSON.stringify(this.change!(JSON.parse(text) as Record<string, unknown>));
          const headers = { ...answer.headers, 'content-length': String(Buffer.byteLength(body)) };
          delete headers['transfer-encoding'];
          res.writeHead(answer.statusCode!, headers).end(body);
        });
      });
      req.pipe(upstream);
    });
  }

  async start(): Promise<this> {
    await listenLocally(this.server);
    return this;
  }

  get url(): string {
    return localUrl(this.server);
  }

  stop(): Promise<void> {
    return closeNow(this.server);
  }
}
