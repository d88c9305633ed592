#!/usr/bin/env node
// The `rest` command line: Go-style flags normalised for yargs, one module per command under
// cli/commands/, and the one place that turns errors into a stderr line and an exit code.

import { realpathSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import yargs from 'yargs';
import { exitCodeOf, isRestError, RestError } from '../errors/rest-error.js';
import { authCommand } from './commands/auth-commands.js';
import { processContext } from './commands/command-context.js';
import { policyCommand } from './commands/policy-commands.js';
import { serveCommand } from './commands/serve.js';
import { GLOBAL_OPTIONS } from './config/global-options.js';
import { normalizeArgv } from './config/normalize-argv.js';

const EPILOGUE = [
  'Flags are Go-style (-db.url x, -db.url=x); --db.url x works too.',
  'Every flag also reads REST_* environment variables and the -config YAML file: flag > env > file > default.',
  'Exit codes: 0 ok, 1 usage, 2 invalid input, 3 database or runtime error.',
].join('\n');

export interface Output {
  write(text: string): void;
}

/** Runs the CLI; resolves with the exit code (the server resolves when it has shut down). */
export async function main(argv: readonly string[], stderr: Output = process.stderr): Promise<number> {
  const cli = yargs(normalizeArgv(argv))
    .scriptName('rest')
    .parserConfiguration({
      'dot-notation': false,
      'duplicate-arguments-array': false,
      'camel-case-expansion': false,
    })
    .usage('Usage: $0 [serve] [flags]\n       $0 <command> [flags]')
    .options(GLOBAL_OPTIONS)
    .command(serveCommand)
    .command(authCommand(processContext))
    .command(policyCommand(processContext))
    .example(
      '$0 -db.url postgres://app@localhost/app -addr :8080',
      'serve a PostgreSQL database on port 8080',
    )
    .example('$0 -db.url sqlite://./rest.db', 'serve a SQLite file (the default)')
    .epilogue(EPILOGUE)
    .strict()
    .help()
    .alias('h', 'help')
    .version(false)
    .wrap(Math.min(110, process.stdout.columns || 110))
    .exitProcess(false)
    .fail((message, error) => {
      throw error ?? new RestError('usage', 'usage', `${message} (see rest --help)`);
    });
  try {
    await cli.parseAsync();
    return 0;
  } catch (e) {
    const error = isRestError(e) ? e : undefined;
    const message = error?.message ?? (e instanceof Error ? e.message : String(e));
    stderr.write(`rest: ${message.replace(/\s*\n\s*/g, ' ')}\n`);
    return error === undefined ? exitCodeOf.internal : exitCodeOf[error.category];
  }
}

function isEntryPoint(): boolean {
  const script = process.argv[1];
  if (script === undefined) return false;
  try {
    return realpathSync(script) === fileURLToPath(import.meta.url);
  } catch {
    return false;
  }
}

// process.exit: the exit code must not wait for a stray timer or socket (stdout and stderr
// are synchronous for files and pipes on Linux, so nothing written is lost).
if (isEntryPoint()) process.exit(await main(process.argv.slice(2)));
