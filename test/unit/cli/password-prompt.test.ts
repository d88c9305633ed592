// The password prompt of `auth user passwd`: typed twice at a terminal and never echoed, validated
// like register, cancelled by the end of input; generated when stdin is not a terminal.

import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { newPassword, type Terminal } from '../../../cli/handlers/password-prompt.js';
import { isRestError } from '../../../errors/rest-error.js';

/** A terminal whose keys are `lines` (each ended by Enter), and everything written to it. */
function fakeTerminal(lines: readonly string[], options: { readonly end?: boolean } = {}) {
  const input = Object.assign(new PassThrough(), { isTTY: true, setRawMode: () => input });
  let written = '';
  const output = new PassThrough();
  output.on('data', (chunk: Buffer) => (written += chunk.toString('utf8')));
  const terminal: Terminal = { input, output };
  // Typed once the prompt is out, one line after the other, like a person.
  let i = 0;
  const typeNext = (): void => {
    const line = lines[i++];
    if (line !== undefined) input.write(`${line}\r`);
    else if (options.end === true) input.end();
  };
  output.on('data', () => setImmediate(typeNext));
  return { terminal, written: () => written };
}

describe('newPassword', () => {
  it('reads the password twice at a terminal without echoing it', async () => {
    const t = fakeTerminal(['s3cret-password', 's3cret-password']);
    await expect(newPassword('bob', t.terminal)).resolves.toEqual({
      password: 's3cret-password',
      generated: false,
    });
    expect(t.written()).toContain("new password for 'bob': ");
    expect(t.written()).toContain('the same again: ');
    expect(t.written()).not.toContain('s3cret');
  });

  it('refuses two different passwords (exit 2)', async () => {
    const t = fakeTerminal(['s3cret-password', 'other-password']);
    const error = await newPassword('bob', t.terminal).catch((e: unknown) => e);
    expect(isRestError(error) && [error.category, error.code]).toEqual(['invalid_input', 'passwords_differ']);
  });

  it('validates the first one like register before asking again', async () => {
    const t = fakeTerminal(['short', 'short']);
    const error = await newPassword('bob', t.terminal).catch((e: unknown) => e);
    expect(isRestError(error) && error.code).toBe('invalid_password');
    expect(t.written()).not.toContain('the same again');
  });

  it('the end of input cancels (exit 1)', async () => {
    const t = fakeTerminal([], { end: true });
    const error = await newPassword('bob', t.terminal).catch((e: unknown) => e);
    expect(isRestError(error) && [error.category, error.code]).toEqual(['usage', 'cancelled']);
  });

  it('generates 144 random bits in base64url when stdin is not a terminal, and asks nothing', async () => {
    let written = '';
    const output = new PassThrough().on('data', (c: Buffer) => (written += c.toString()));
    const terminal: Terminal = { input: new PassThrough(), output };
    const first = await newPassword('bob', terminal);
    const second = await newPassword('bob', terminal);
    expect(first).toEqual({ password: expect.stringMatching(/^[A-Za-z0-9_-]{24}$/), generated: true });
    expect(second.password).not.toBe(first.password);
    expect(written).toBe('');
  });
});
