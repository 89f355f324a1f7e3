// `dsvc config set|show`: the API key and the service this terminal uses.
import type { Command } from 'commander';
import { configPath, keyLabel, readSettings, resolveSettings, writeSettings } from '../config.ts';
import { type Globals, UsageError } from '../context.ts';
import { output } from '../output.ts';

export function configCommands(root: Command): void {
  const config = root.command('config').description('the API key and the service this terminal uses');
  config
    .command('set')
    .description('keep an API key (read from standard input, so it stays out of your shell history) and a base URL')
    .option('--base-url <url>', 'the service to keep')
    .action(async function (this: Command) {
      const options = this.opts<{ baseUrl?: string }>();
      const path = configPath();
      const settings = await readSettings(path);
      if (process.stdin.isTTY) process.stderr.write('API key (svc_test_…, svc_live_… or svc_oauth_…): ');
      const key = (await readLine()).trim();
      if (key && !/^svc_(test|live|oauth)_/.test(key)) throw new UsageError('that is not an API key: it starts with svc_test_, svc_live_ or svc_oauth_');
      await writeSettings({ ...settings, ...(key && { apiKey: key }), ...(options.baseUrl && { baseUrl: options.baseUrl }) }, path);
      process.stderr.write(`Kept in ${path} (readable by you only).\n`);
    });
  config
    .command('show')
    .description('where the key comes from (never the key itself) and the service')
    .action(async function (this: Command) {
      const globals = this.optsWithGlobals<Globals>();
      const settings = await resolveSettings(globals.baseUrl ? { baseUrl: globals.baseUrl } : {});
      output(Boolean(globals.json)).result({ baseUrl: settings.baseUrl, key: settings.apiKey ? keyLabel(settings.apiKey) : null, keyFrom: settings.keyFrom, configFile: configPath() });
    });
}

function readLine(): Promise<string> {
  return new Promise((resolve, reject) => {
    let text = '';
    process.stdin.setEncoding('utf8');
    process.stdin.on('data', (chunk: string) => {
      text += chunk;
      if (text.includes('\n')) {
        process.stdin.pause();
        resolve(text.slice(0, text.indexOf('\n')));
      }
    });
    process.stdin.on('end', () => resolve(text));
    process.stdin.on('error', reject);
  });
}
