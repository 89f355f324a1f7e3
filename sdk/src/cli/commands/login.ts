// `dsvc login` (and its alias `config set`): an API key read without echo (or from standard input,
// as `gh auth login --with-token` reads it), checked against the service, and kept only when the
// service takes it, in a file its owner alone can read. `dsvc config show`: where the key comes
// from (never the key) and the service.
import type { Command } from 'commander';
import { DatasetService } from '../../client.ts';
import { configPath, keyLabel, keyMode, readSettings, resolveSettings, writeSettings } from '../config.ts';
import { type Globals, UsageError } from '../context.ts';
import { output } from '../output.ts';
import { readSecret } from '../prompt.ts';

/** The key's mode, or why it cannot be one. */
function modeOf(key: string): 'test' | 'live' {
  if (key.startsWith('svc_oauth_rt_')) throw new UsageError('that is a refresh token: exchange it at /oauth/token for an access token (svc_oauth_…), or use an API key');
  const mode = keyMode(key);
  if (!mode) throw new UsageError('that is not an API key: it starts with svc_test_, svc_live_ or svc_oauth_');
  return mode;
}

const MODES = {
  test: 'test mode: test datasets only, never billed',
  live: 'live mode: your own data, metered',
};

async function login(this: Command): Promise<void> {
  const globals = this.optsWithGlobals<Globals>();
  const out = output(Boolean(globals.json));
  const settings = await resolveSettings(globals.baseUrl ? { baseUrl: globals.baseUrl } : {});
  const key = await readSecret(`API key for ${settings.baseUrl} (svc_test_…, svc_live_… or svc_oauth_…; not shown as you type): `);
  if (!key) throw new UsageError('no key was given: paste it at the prompt, or send it on standard input (dsvc login < key.txt)');
  const mode = modeOf(key);
  // One read proves the key: a key the service refuses (401) or that cannot be checked is not kept.
  const service = new DatasetService({ apiKey: key, baseUrl: settings.baseUrl, maxRetries: 1 });
  await service.datasets.list({ limit: 1 }).catch((error: unknown) => {
    out.note('Nothing was kept.');
    throw error;
  });
  const path = configPath();
  await writeSettings({ ...(await readSettings(path)), apiKey: key, baseUrl: settings.baseUrl }, path);
  out.result({ baseUrl: settings.baseUrl, key: keyLabel(key), mode, configFile: path }, () =>
    `Logged in to ${settings.baseUrl} with ${keyLabel(key)}, in ${MODES[mode]}.\nKept in ${path} (readable by you only).\n` +
    (process.env['DATASET_SERVICE_API_KEY'] ? 'Note: DATASET_SERVICE_API_KEY is set, and wins over the kept key while it is.\n' : ''),
  );
}

export function loginCommands(root: Command): void {
  root
    .command('login')
    .description('check an API key against the service and keep it (typed without echo, or from standard input)')
    .option('--base-url <url>', 'the service (kept with the key)')
    .action(login);

  const config = root.command('config').description('the API key and the service this terminal uses');
  config
    .command('set')
    .description('the same as `dsvc login`')
    .option('--base-url <url>', 'the service (kept with the key)')
    .action(login);
  config
    .command('show')
    .description('where the key comes from (never the key itself) and the service')
    .action(async function (this: Command) {
      const globals = this.optsWithGlobals<Globals>();
      const settings = await resolveSettings(globals.baseUrl ? { baseUrl: globals.baseUrl } : {});
      output(Boolean(globals.json)).result({ baseUrl: settings.baseUrl, key: settings.apiKey ? keyLabel(settings.apiKey) : null, keyFrom: settings.keyFrom, configFile: configPath() });
    });
}
