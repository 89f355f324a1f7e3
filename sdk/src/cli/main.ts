// dsvc: the Dataset Service from a terminal (commander). Human output by default (fields and
// tables on stdout, progress bars and notes on stderr), `--json` for scripts: one JSON document on
// stdout, and a failure as one JSON document on stderr. Each command lives in commands/; this file
// assembles them, runs one, and turns its failure into one line and an exit code.
//
// Exit codes: 0 done; 1 failed (the service refused or could not be reached); 2 bad usage (an
// unknown command or option, a bad value, no API key configured); 3 not found; 4 the file was
// rejected (row errors; nothing was written).
import { Command, CommanderError } from 'commander';
import { ApiError, AuthenticationError, ConflictError, ConnectionError, DatasetServiceError, IngestValidationError, NotFoundError } from '../errors.ts';
import { loginCommands } from './commands/login.ts';
import { datasetsCommands } from './commands/datasets.ts';
import { eventsCommands } from './commands/events.ts';
import { exportCommand } from './commands/export.ts';
import { triggerCommand } from './commands/trigger.ts';
import { metricsCommands } from './commands/metrics.ts';
import { uploadCommand } from './commands/upload.ts';
import { versionsCommands } from './commands/versions.ts';
import { changesCommand } from './commands/changes.ts';
import { DEFAULT_BASE_URL } from './config.ts';
import { EXIT, Told, UsageError } from './context.ts';

function program(): Command {
  const root = new Command('dsvc')
    .description('The Dataset Service from your terminal: datasets, uploads with progress, row errors, metrics, catalog, exports, events.')
    .usage('<command> [options]')
    .option('--base-url <url>', `the service (default: DATASET_SERVICE_URL, the config file, or ${DEFAULT_BASE_URL})`)
    .option('--json', 'print one JSON document (for scripts)')
    .helpCommand('help [command]', 'show the help of a command')
    .showSuggestionAfterError(true)
    .addHelpText(
      'after',
      '\nThe API key comes from DATASET_SERVICE_API_KEY, else from `dsvc login` (a file only you can read).\n' +
        'Exit codes: 0 done, 1 failed, 2 bad usage, 3 not found, 4 the file was rejected (row errors).',
    );
  loginCommands(root);
  datasetsCommands(root);
  uploadCommand(root);
  versionsCommands(root);
  changesCommand(root);
  metricsCommands(root);
  exportCommand(root);
  eventsCommands(root);
  triggerCommand(root);

  // Every command: commander's own refusals become exit 2, never an exit from inside the parser.
  const quiet = (command: Command) => {
    command.exitOverride();
    command.commands.forEach(quiet);
  };
  quiet(root);
  return root;
}

export async function main(argv: string[]): Promise<number> {
  const root = program();
  const json = argv.includes('--json');
  try {
    if (argv.length === 0) {
      root.outputHelp();
      return EXIT.usage;
    }
    await root.parseAsync(argv, { from: 'user' });
    return EXIT.done;
  } catch (error) {
    if (error instanceof CommanderError) {
      return ['commander.helpDisplayed', 'commander.help', 'commander.version'].includes(error.code) ? EXIT.done : EXIT.usage;
    }
    if (error instanceof Told) return error.exitCode;
    const { code, message } = failure(error);
    if (json && error instanceof ApiError) process.stderr.write(`${JSON.stringify({ error: error.problem, requestId: error.requestId ?? null }, null, 2)}\n`);
    else if (json) process.stderr.write(`${JSON.stringify({ error: { message } })}\n`);
    else {
      const request = error instanceof ApiError && error.requestId ? ` (request ${error.requestId})` : '';
      process.stderr.write(`dsvc: ${message.split('\n').join(' ')}${request}\n`);
    }
    return code;
  }
}

/** A failure as its exit code and one line that names what the person can act on. */
function failure(error: unknown): { code: number; message: string } {
  if (error instanceof UsageError) return { code: EXIT.usage, message: error.message };
  const file = fileProblem(error);
  if (file) return { code: EXIT.usage, message: file };
  if (error instanceof NotFoundError) return { code: EXIT.notFound, message: error.message };
  if (error instanceof IngestValidationError) return { code: EXIT.rejected, message: error.message };
  if (error instanceof ConflictError && error.existingId?.startsWith('ds_')) {
    const id = error.existingId;
    return { code: EXIT.failed, message: `${error.detail.replace(/\.$/, '')}: ${id}. Read it with \`dsvc datasets get ${id}\`, or choose another --external-ref.` };
  }
  if (error instanceof ConnectionError) {
    return { code: EXIT.failed, message: `${error.message}. Is it running there? Another address: --base-url, DATASET_SERVICE_URL, or \`dsvc login --base-url URL\`.` };
  }
  if (error instanceof AuthenticationError) return { code: EXIT.failed, message: `${error.message} Log in with a valid key: \`dsvc login\`.` };
  if (error instanceof DatasetServiceError) return { code: EXIT.failed, message: error.message };
  return { code: EXIT.failed, message: `unexpected: ${(error as Error).message}` };
}

const FILE_PROBLEMS: Record<string, string> = {
  ENOENT: 'no such file or directory',
  ENOTDIR: 'a part of the path is not a directory',
  EISDIR: 'is a directory',
  EACCES: 'permission denied',
  EPERM: 'not permitted',
};

/** A file that cannot be read or written (a path the person gave): bad usage, named. */
function fileProblem(error: unknown): string | undefined {
  const { code, path } = error as NodeJS.ErrnoException;
  return code && path && FILE_PROBLEMS[code] ? `${path}: ${FILE_PROBLEMS[code]}` : undefined;
}

// A reader that stopped early (`dsvc events list | head -1`) is not a failure: stop quietly.
for (const stream of [process.stdout, process.stderr]) {
  stream.on('error', (error: NodeJS.ErrnoException) => {
    if (error.code === 'EPIPE') process.exit(0);
    throw error;
  });
}
process.exitCode = await main(process.argv.slice(2));
