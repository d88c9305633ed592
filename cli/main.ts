#!/usr/bin/env node
// The `rest` command line: Go-style flags normalised for yargs, one module per command under
// cli/commands/, and the one place that turns errors into a stderr line and an exit code.

import { realpathSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import yargs from 'yargs';
import { exitCodeOf, isRestError, RestError } from '../errors/rest-error.js';
import { ExitStatus } from './exit-status.js';
import { authCommand } from './commands/auth-commands.js';
import { commandContext, processIo, processTerminal, type Terminal } from './context.js';
import { policyCommand } from './commands/policy-commands.js';
import { exampleCommand } from './commands/example.js';
import { serveCommand } from './commands/serve.js';
import { GLOBAL_OPTIONS } from './config/global-options.js';
import type { Env } from './config/load-config.js';
import type { PasswordHasher } from '../runtime/auth/passwords.js';
import { normalizeArgv } from './config/normalize-argv.js';
import { skipHelpCache } from './skip-help-cache.js';

/** Every global flag takes a value (the next argument, even one that begins with '-'). */
/** The exit code of a command that did what it was asked. */
const EXIT_SUCCESS = 0;

const VALUE_FLAGS: ReadonlySet<string> = new Set(Object.keys(GLOBAL_OPTIONS));

const EPILOGUE = [
  'Flags are Go-style (-db.url x, -db.url=x); --db.url x works too.',
  'Every flag also reads REST_* environment variables and the -config YAML file: flag > env > file > default.',
  'Exit codes: 0 ok, 1 usage, 2 invalid input, 3 database or runtime error, 4 a policy test failed.',
].join('\n');

export interface Output {
  write(text: string): void;
  /** A terminal's width; help wraps to it (at most 110 columns). */
  readonly columns?: number | undefined;
}

export interface MainOptions {
  readonly stdout?: Output;
  readonly stderr?: Output;
  /** Where the REST_* settings are read (docs/cli.md). */
  readonly env?: Env;
  /** Where a command prompts (`auth user passwd` without a password). */
  readonly terminal?: Terminal;
  /** How commands that store a password hash it; default rest's own (CommandContext.hasher). */
  readonly hasher?: PasswordHasher;
}

/**
 * Runs the CLI; resolves with the exit code (the server resolves when it has shut down). Output
 * and environment default to the real process; tests inject their own and run it in-process.
 */
export async function main(argv: readonly string[], options: MainOptions = {}): Promise<number> {
  const {
    stdout = process.stdout,
    stderr = process.stderr,
    env = process.env,
    terminal = processTerminal,
    hasher,
  } = options;
  const io =
    stdout === process.stdout && stderr === process.stderr
      ? processIo
      : { stdout: (text: string) => stdout.write(text), stderr: (text: string) => stderr.write(text) };
  const ctx = commandContext(env, io, terminal, hasher);
  const cli = yargs()
    .scriptName('rest')
    .parserConfiguration({
      'dot-notation': false,
      'duplicate-arguments-array': false,
      'camel-case-expansion': false,
    })
    .usage('Usage: $0 [serve] [flags]\n       $0 <command> [flags]')
    .options(GLOBAL_OPTIONS)
    .command(serveCommand(ctx))
    .command(authCommand(ctx))
    .command(policyCommand(ctx))
    .command(exampleCommand(ctx))
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
    // The CLI speaks English; yargs' own words too, whatever LANG says (the bundled binary carries no locales).
    .locale('en')
    .wrap(Math.min(110, stdout.columns || 110))
    .exitProcess(false)
    .fail((message, error) => {
      throw error ?? new RestError('usage', `${message} (see rest --help)`);
    });
  skipHelpCache(cli);
  // With a parse callback yargs prints nothing itself and hands over what it would have printed:
  // with .version(false) and the throwing .fail above that is only help, which goes to stdout.
  let said = '';
  try {
    await cli.parseAsync(normalizeArgv(argv, VALUE_FLAGS), {}, (_error, _argv, output) => {
      said = output;
    });
    if (said !== '') stdout.write(`${said}\n`);
    return EXIT_SUCCESS;
  } catch (e) {
    if (e instanceof ExitStatus) return e.code;
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
