// Running the project's real entry points as child processes.
import { spawn, type ChildProcess } from 'node:child_process';
import { projectRoot } from '../../shared/platform/paths.ts';

export type Outcome = { code: number | null; stdout: string; stderr: string };

export function runScript(script: string, args: string[], env: Record<string, string>): Promise<Outcome> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [script, ...args], { cwd: projectRoot, env: { ...process.env, ...env } });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c) => (stdout += c));
    child.stderr.on('data', (c) => (stderr += c));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

/** Starts a long-running entry point and resolves once a log line matches `ready`. */
export function startScript(
  script: string,
  env: Record<string, string>,
  ready: RegExp,
): Promise<{ child: ChildProcess; output: () => string; exited: Promise<number | null> }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [script], { cwd: projectRoot, env: { ...process.env, ...env } });
    let output = '';
    const exited = new Promise<number | null>((r) => child.on('exit', (code) => r(code)));
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`not ready in time:\n${output}`));
    }, 30_000);
    const onData = (chunk: Buffer) => {
      output += chunk;
      if (ready.test(output)) {
        clearTimeout(timer);
        resolve({ child, output: () => output, exited });
      }
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', onData);
    void exited.then((code) => {
      clearTimeout(timer);
      reject(new Error(`exited with ${code} before ready:\n${output}`));
    });
  });
}
