// What every command is given: the environment, where to print and where to prompt. Light on
// purpose: the command definitions import it, and `rest --help` loads every definition (the
// database helpers the handlers share are in cli/handlers/database.ts).

import type { Env } from './config/load-config.js';
import type { PasswordHasher } from '../runtime/auth/passwords.js';

export interface CommandIo {
  readonly stdout: (text: string) => void;
  readonly stderr: (text: string) => void;
}

/** Where a prompt reads and writes: the process's stdin and stderr (stdout stays for results). */
export interface Terminal {
  readonly input: NodeJS.ReadableStream & { readonly isTTY?: boolean };
  readonly output: NodeJS.WritableStream;
}

export interface CommandContext {
  /** Where the REST_* settings are read (docs/cli.md), and the settings outside Config (`serve`'s log level, shutdown grace). */
  readonly env: Env;
  readonly io: CommandIo;
  /** Where a command asks for what is not given on the command line (a password). */
  readonly terminal: Terminal;
  /**
   * How the commands that store a password hash it (`auth setup`, `auth user add`, `auth user
   * passwd`); undefined: rest's own (bcrypt, cost 10). The in-process CLI tests give a cheaper one.
   */
  readonly hasher?: PasswordHasher | undefined;
}

export const processIo: CommandIo = {
  stdout: (text) => void process.stdout.write(text),
  stderr: (text) => void process.stderr.write(text),
};

export const processTerminal: Terminal = { input: process.stdin, output: process.stderr };

/** A context over the given environment and output (cli/main.ts; tests run the CLI in-process). */
export function commandContext(
  env: Env,
  io: CommandIo,
  terminal: Terminal = processTerminal,
  hasher?: PasswordHasher,
): CommandContext {
  return { env, io, terminal, hasher };
}

/** The real process: its environment, standard output and error. */
export const processContext: CommandContext = commandContext(process.env, processIo);

/**
 * A command's handler in its own module, loaded when the command runs: `rest --help` and the
 * other commands never load its services, the compiler or a database driver.
 */
export const lazyHandler =
  <A>(
    load: () => Promise<{ readonly run: (ctx: CommandContext, argv: A) => Promise<void> }>,
    ctx: CommandContext,
  ) =>
  async (argv: A): Promise<void> =>
    (await load()).run(ctx, argv);

/** The `<username>` of the account commands: matched like a login (case-insensitive key). */
export const USERNAME_POSITIONAL = {
  type: 'string',
  demandOption: true,
  describe: 'Matched without regard to case, like a login',
} as const;

/** `--json` of the commands that report what they did. */
export const JSON_DONE_OPTION = {
  type: 'boolean',
  default: false,
  describe: 'Print what was done as JSON',
} as const;
