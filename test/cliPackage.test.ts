// dsvc as someone outside the repository gets it: the SDK packed (`npm pack`, whose prepack builds
// dist/), the tarball installed into a folder of its own in the temporary directory, and its `dsvc`
// run from there (its shebang, its bin entry, its declared dependencies) against the real service.
import { expect } from 'chai';
import { execFile } from 'node:child_process';
import { mkdtemp, readdir, realpath, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { projectRoot } from '../shared/platform/paths.ts';
import { useService } from './support/service.ts';

const exec = promisify(execFile);

describe('dsvc installed from the packed SDK, outside the repository', () => {
  const svc = useService();
  let dir: string;
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'dsvc-package-'));
  });
  after(() => rm(dir, { recursive: true, force: true }));

  it('when the SDK is packed and its tarball installed in another folder, then its dsvc answers --help and works against the service', async function () {
    this.timeout(240_000);
    await exec('npm', ['pack', '--silent', '--pack-destination', dir], { cwd: join(projectRoot, 'sdk') });
    const tarball = (await readdir(dir)).find((f) => f.endsWith('.tgz'));
    expect(tarball, 'a tarball').to.be.a('string');
    const app = join(dir, 'app');
    // --prefer-offline: the dependencies come from npm's cache when it has them, else from the registry.
    await exec('npm', ['install', '--prefix', app, '--prefer-offline', '--no-audit', '--no-fund', '--loglevel=error', join(dir, tarball!)], { cwd: dir });
    const installed = join(app, 'node_modules/@dataset-service/sdk');
    expect(await realpath(installed), 'a copy, not a link into the repository').to.equal(join(await realpath(dir), 'app/node_modules/@dataset-service/sdk'));
    expect(await readdir(installed)).to.include('dist').and.not.include('src');

    // Run through its shebang, from the temporary folder, with a config file of its own.
    const dsvc = join(app, 'node_modules/.bin/dsvc');
    const env = { ...process.env, DSVC_CONFIG: join(dir, 'config.json'), DATASET_SERVICE_URL: svc.url, DATASET_SERVICE_API_KEY: (await svc.tenant()).key };
    const help = await exec(dsvc, ['--help'], { cwd: dir, env });
    expect(help.stdout).to.match(/^Usage: dsvc <command> \[options\]/).and.include('login');
    const created = JSON.parse((await exec(dsvc, ['datasets', 'create', '--external-ref', 'packaged', '--name', 'Packaged', '--json'], { cwd: dir, env })).stdout);
    expect(created).to.include({ object: 'dataset', externalRef: 'packaged' });
    const listed = JSON.parse((await exec(dsvc, ['datasets', 'list', '--json'], { cwd: dir, env })).stdout);
    expect(listed.map((d: { id: string }) => d.id)).to.deep.equal([created.id]);
  });
});
