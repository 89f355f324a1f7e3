// The operator command line as a person sees it: run in a pseudo-terminal (util-linux `script`),
// its help per command, its tables, and its errors with their exit codes.
import { expect } from 'chai';
import { execFile } from 'node:child_process';
import { projectRoot } from '../shared/platform/paths.ts';
import { useService } from './support/service.ts';

/** Runs the operator in a pseudo-terminal; what the terminal showed (stdout and stderr together) and the exit code. */
function inTerminal(args: string[], env: Record<string, string>): Promise<{ code: number; screen: string }> {
  const quoted = [process.execPath, 'bin/operator.ts', ...args].map((a) => `'${a.replaceAll("'", "'\\''")}'`).join(' ');
  return new Promise((resolve) => {
    execFile('script', ['--quiet', '--return', '--command', quoted, '/dev/null'], { cwd: projectRoot, env: { ...process.env, ...env, COLUMNS: '100' } }, (error, stdout) => {
      resolve({ code: error ? ((error as { code?: number }).code ?? 1) : 0, screen: stdout.replaceAll('\r\n', '\n') });
    });
  });
}

describe('operator command line in a terminal', () => {
  const svc = useService({ worker: false });
  const run = (...args: string[]) => inTerminal(args, { DATABASE_URL: svc.databaseUrl });

  it('when help is asked of the program, a group or a command, then each shows its own usage, and exit 0', async () => {
    const top = await run('--help');
    expect(top.code).to.equal(0);
    expect(top.screen).to.match(/^Usage: operator <command> \[options\]/);
    expect(top.screen).to.include('Exit codes: 0 done, 1 failed, 2 bad usage, 3 not found.');
    const group = await run('help', 'keys');
    expect(group.code).to.equal(0);
    expect(group.screen).to.match(/Usage: operator keys/);
    expect(group.screen).to.match(/rotate \[options\] <key-id>/);
    const command = await run('keys', 'rotate', '--help');
    expect(command.code).to.equal(0);
    expect(command.screen).to.match(/Usage: operator keys rotate \[options\] <key-id>/);
    expect(command.screen).to.match(/--grace <duration>/);
    expect(command.screen).not.to.include('members');
  });

  it('when a command is wrong, then one error line says what, with exit 2; an unknown id is exit 3', async () => {
    const unknown = await run('acounts', 'list');
    expect(unknown.code).to.equal(2);
    expect(unknown.screen).to.match(/error: unknown command 'acounts'\n\(Did you mean accounts\?\)/);
    const missing = await run('keys', 'issue', '--mode', 'test');
    expect(missing.code).to.equal(2);
    expect(missing.screen.trim()).to.equal("error: required option '--account <id>' not specified");
    const twice = await run('keys', 'issue', '--account', 'acc_x', '--mode', 'test', '--mode', 'live');
    expect(twice.code).to.equal(2);
    expect(twice.screen).to.match(/--mode is given more than once/);
    const notFound = await run('keys', 'revoke', 'key_nope');
    expect(notFound.code).to.equal(3);
    expect(notFound.screen.trim()).to.equal('operator: no key key_nope');
  });

  it('when a list is shown, then it is a table with a header for people, and JSON with --json', async () => {
    const created = await run('accounts', 'create', '--name', 'Terminal Ltd');
    expect(created.code).to.equal(0);
    expect(created.screen).to.match(/^id\s+acc_\w+\nobject\s+account\nname\s+Terminal Ltd\n/);
    const listed = await run('accounts', 'list');
    expect(listed.screen.split('\n')[0]).to.match(/^id\s+object\s+name\s+createdAt$/);
    expect(listed.screen).to.match(/acc_\w+\s+account\s+Terminal Ltd\s+\d{4}-/);
    const json = await run('accounts', 'list', '--json');
    expect(JSON.parse(json.screen).some((a: { name: string }) => a.name === 'Terminal Ltd')).to.equal(true);
  });
});
