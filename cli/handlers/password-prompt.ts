// The new password of `auth user passwd <username>` when none is given (docs/cli.md): typed twice at a
// terminal without being echoed, or — when standard input is not a terminal — generated, for the
// command to print once.

import { createInterface } from 'node:readline';
import { Writable } from 'node:stream';
import { quoteValue } from '../../errors/quote-value.js';
import { RestError } from '../../errors/rest-error.js';
import { generatePassword, validatePassword } from '../../runtime/auth/passwords.js';
import type { Terminal } from '../context.js';

export type { Terminal } from '../context.js';

const cancelled = (): RestError => new RestError('cancelled', 'no password was entered');

/**
 * One line typed at `terminal` without echo: readline draws the prompt, then writes the echo of
 * each key to a sink that is muted once the prompt is out. Ctrl-C or the end of input cancels.
 */
export function readHidden(question: string, terminal: Terminal): Promise<string> {
  return new Promise((resolve, reject) => {
    let muted = false;
    const sink = new Writable({
      write(chunk: Buffer | string, _encoding, callback) {
        if (!muted) terminal.output.write(chunk);
        callback();
      },
    });
    const rl = createInterface({ input: terminal.input, output: sink, terminal: true });
    let answered = false;
    rl.on('SIGINT', () => rl.close());
    rl.on('close', () => {
      terminal.output.write('\n');
      if (!answered) reject(cancelled());
    });
    rl.question(question, (answer) => {
      answered = true;
      rl.close();
      resolve(answer);
    });
    muted = true;
  });
}

export interface NewPassword {
  readonly password: string;
  /** True when it was generated: the command prints it, once. */
  readonly generated: boolean;
}

/**
 * A password typed twice at the terminal (validated like register after the first: 400
 * `invalid_password`; two different ones: 400 `passwords_differ`), or a generated one when
 * standard input is not a terminal (scripts, pipes, CI).
 */
export async function newPassword(username: string, terminal: Terminal): Promise<NewPassword> {
  if (terminal.input.isTTY !== true) return { password: generatePassword(), generated: true };
  const password = validatePassword(await readHidden(`new password for ${quoteValue(username)}: `, terminal));
  const again = await readHidden('the same again: ', terminal);
  if (again !== password) {
    throw new RestError('passwords_differ', 'the two passwords typed are not the same');
  }
  return { password, generated: false };
}
