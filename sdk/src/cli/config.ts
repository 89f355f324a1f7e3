// Where dsvc finds its credential: DATASET_SERVICE_API_KEY, else the config file written by
// `dsvc config set` (readable by its owner only: 0600, in a 0700 directory). The service's URL:
// --base-url, else DATASET_SERVICE_URL, else the file, else http://localhost:3000.
import { chmod, mkdir, readFile, writeFile } from 'node:fs/promises';
import { homedir } from 'node:os';
import { dirname, join } from 'node:path';

export type Settings = { apiKey?: string; baseUrl?: string };
export type Resolved = { apiKey: string | undefined; baseUrl: string; keyFrom: 'environment' | 'config file' | 'nowhere' };

export const DEFAULT_BASE_URL = 'http://localhost:3000';

/** The config file: DSVC_CONFIG, else $XDG_CONFIG_HOME/dsvc/config.json (~/.config by default). */
export function configPath(env: NodeJS.ProcessEnv = process.env): string {
  return env['DSVC_CONFIG'] ?? join(env['XDG_CONFIG_HOME'] ?? join(homedir(), '.config'), 'dsvc', 'config.json');
}

export async function readSettings(path = configPath()): Promise<Settings> {
  try {
    return JSON.parse(await readFile(path, 'utf8')) as Settings;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return {};
    throw new Error(`cannot read ${path}: ${(error as Error).message}`);
  }
}

/** Writes the settings, readable by their owner only (also when the file existed with wider rights). */
export async function writeSettings(settings: Settings, path = configPath()): Promise<void> {
  await mkdir(dirname(path), { recursive: true, mode: 0o700 });
  await writeFile(path, `${JSON.stringify(settings, null, 2)}\n`, { mode: 0o600 });
  await chmod(path, 0o600);
}

export async function resolveSettings(flags: { baseUrl?: string }, env: NodeJS.ProcessEnv = process.env): Promise<Resolved> {
  const file = await readSettings(configPath(env));
  const fromEnv = env['DATASET_SERVICE_API_KEY'];
  return {
    apiKey: fromEnv || file.apiKey,
    baseUrl: flags.baseUrl ?? env['DATASET_SERVICE_URL'] ?? file.baseUrl ?? DEFAULT_BASE_URL,
    keyFrom: fromEnv ? 'environment' : file.apiKey ? 'config file' : 'nowhere',
  };
}

/** A key as it may be shown: its prefix and first characters, never the secret. */
export function keyLabel(key: string): string {
  return `${key.slice(0, 12)}…`;
}

/** The mode a credential acts in, from its prefix (as the service tells them apart); undefined for what is not one. */
export function keyMode(key: string): 'test' | 'live' | undefined {
  if (key.startsWith('svc_test_')) return 'test';
  if (key.startsWith('svc_oauth_rt_')) return undefined;
  if (key.startsWith('svc_live_') || key.startsWith('svc_oauth_')) return 'live';
  return undefined;
}
