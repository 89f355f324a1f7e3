// dsvc, the SDK's command line, against the real service: a key kept once (0600), datasets, an
// upload watched in a pseudo-terminal (util-linux `script`) as a person sees its progress bars, row
// errors as a table and the rejected rows saved, metrics, catalog, export, and `listen` forwarding
// events to a local receiver; with its exit codes. The upload's screen is kept in
// test/artifacts/cli/upload.txt.
import { expect } from 'chai';
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { mkdir, mkdtemp, readFile, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { projectRoot } from '../shared/platform/paths.ts';
import { CONTRACT_HEADER, contractsCsv } from './support/contracts.ts';
import { eventually } from './support/eventually.ts';
import { useService } from './support/service.ts';
import { WebhookReceiver } from './support/webhookReceiver.ts';

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

  /** Runs dsvc with pipes (as a script would); `input` goes to its standard input. */
  const run = (args: string[], input?: string): Promise<Outcome> =>
    new Promise((resolve) => {
      const child = execFile(process.execPath, [CLI, ...args], { env: { ...process.env, ...env }, cwd: dir }, (error, stdout, stderr) =>
        resolve({ code: error ? ((error as { code?: number }).code ?? 1) : 0, stdout, stderr }),
      );
      child.stdin!.end(input ?? '');
    });

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
    expect(none.stderr).to.include('dsvc config set');
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
    // The same command again is the same operation (its key comes from the externalRef).
    const again = await run(['datasets', 'create', '--external-ref', 'cli-crm', '--name', 'CLI CRM', '--json']);
    expect(again.code).to.equal(0);
    const dataset = JSON.parse(again.stdout);
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

  it('when a file is uploaded in a terminal, then bars show the bytes sent and the rows built, and the active version is told', async () => {
    await run(['datasets', 'create', '--external-ref', 'cli-upload', '--name', 'Upload']);
    const file = join(dir, 'contracts.csv');
    await writeFile(file, contractsCsv(200_000));
    const shown = await inTerminal(['upload', file, '--dataset', 'cli-upload']);
    await mkdir(join(projectRoot, 'test/artifacts/cli'), { recursive: true });
    await writeFile(join(projectRoot, 'test/artifacts/cli/upload.txt'), shown.screen);
    expect(shown.code, shown.screen).to.equal(0);
    const screen = shown.screen.replace(/\x1b\[[0-9;?]*[A-Za-z]/g, '');
    expect(screen).to.match(/Uploading \|█+\| 100% \| 1[0-9]\.\d\/1[0-9]\.\d MB/);
    expect(screen).to.match(/Building  \|█+\| 100% \| 200,000 rows/);
    expect(screen).to.match(/Version ver_\w+ is active: 200000 rows \(200000 contributing\)\./);

    const piped = await run(['upload', file, '--dataset', 'cli-upload', '--json']);
    expect(piped.code).to.equal(0);
    expect(piped.stderr, 'no bars without a terminal').to.equal('');
    expect(JSON.parse(piped.stdout)).to.include({ object: 'version', status: 'active', rowCount: 200_000 });

    const metrics = await run(['metrics', 'cli-upload']);
    expect(metrics.code).to.equal(0);
    expect(metrics.stdout).to.match(/^rows\s+200000 \(200000 contributing/m).and.match(/currencies:\ncurrency\s+contracts\s+customers\s+totalValue\n/);
    const catalog = await run(['catalog', 'cli-upload']);
    expect(catalog.stdout).to.match(/fields:\nname\s+type\s+gating/).and.match(/products:\nproduct\s+contracts\s+customers/);
    const path = join(dir, 'export.jsonl');
    const exported = await run(['export', 'cli-upload', '--format', 'jsonl', '-o', path]);
    expect(exported.code, exported.stderr).to.equal(0);
    expect(exported.stdout).to.match(/^Saved 200000 rows \(\d+ bytes, jsonl\) to /);
    expect((await readFile(path, 'utf8')).trim().split('\n')).to.have.length(200_000);
  });

  it('when rows are rejected, then they are a table, the rejected rows are saved with --errors-csv, and exit 4', async () => {
    await run(['datasets', 'create', '--external-ref', 'cli-bad', '--name', 'Bad']);
    const file = join(dir, 'bad.csv');
    await writeFile(file, contractsCsv(1000, { badEvery: 4 }));
    const saved = join(dir, 'rejected.csv');
    const rejected = await run(['upload', file, '--dataset', 'cli-bad', '--errors-csv', saved]);
    expect(rejected.code).to.equal(4);
    expect(rejected.stdout).to.match(/^The file was rejected: 250 row errors; nothing was written \(version ver_\w+\)\.\n\nrow\s+field\s+code\s+message\n5\s+amount\s+not_a_number\s+/);
    expect(rejected.stdout).to.include('… and 150 more: dsvc versions errors');
    expect(rejected.stdout).to.include(`The rejected rows are in ${saved}`);
    const rows = (await readFile(saved, 'utf8')).trim().split('\n');
    expect(rows).to.have.length(251);
    const versionId = /version (ver_\w+)/.exec(rejected.stdout)![1]!;
    const all = await run(['versions', 'errors', 'cli-bad', versionId, '--all', '--json']);
    expect(JSON.parse(all.stdout)).to.have.length(250);
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
});
