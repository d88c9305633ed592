// `rest auth …` through the built binary on every database: setup once, users and policies,
// every error path with its exit code and one stderr line, and nothing written on errors.

import bcrypt from 'bcrypt';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ALL_KINDS, isAvailable } from '../../support/databases.js';
import { EXAMPLE_TABLES_DDL, openCliDatabase, suiteName, type CliDatabase } from './cli-fixtures.js';
import { runCliProcess } from './run-cli.js';

/** A failed command: nothing on stdout, exactly one `rest: …` line on stderr. */
function expectOneLineError(
  result: { code: number | null; stdout: string; stderr: string },
  code: number,
  text: RegExp,
): void {
  expect(result.code).toBe(code);
  expect(result.stdout).toBe('');
  expect(result.stderr).toMatch(/^rest: [^\n]+\n$/);
  expect(result.stderr).toMatch(text);
}

describe.each(ALL_KINDS)('%s', (kind) => {
  describe.skipIf(!isAvailable(kind))(suiteName('rest auth', kind), () => {
    let t: CliDatabase;
    beforeAll(async () => {
      t = await openCliDatabase(kind, { ddl: EXAMPLE_TABLES_DDL });
    });
    afterAll(async () => {
      await t?.close();
    });

    it('refuses user and policy commands before setup, saying to run setup', async () => {
      for (const args of [
        ['auth', 'user', 'list'],
        ['auth', 'policy', 'list'],
        ['auth', 'user', 'add', 'bob', 'password123', 'false'],
      ]) {
        expectOneLineError(await t.rest(args), 2, /auth is not set up.*rest auth setup/);
      }
    });

    let adminPassword = '';
    it('auth setup prints the admin username and password once, stored as a bcrypt hash', async () => {
      const r = await t.rest(['auth', 'setup']);
      expect(r.code).toBe(0);
      const m = /^username: admin\npassword: (\S{20,})\n$/.exec(r.stdout);
      expect(m).not.toBeNull();
      adminPassword = m?.[1] ?? '';
      expect(r.stderr).toMatch(/shown only this once/);
      const { rows } = await t.adapter.query({
        text: "SELECT password, is_admin FROM auth_users WHERE username = 'admin'",
        values: [],
      });
      expect(rows).toHaveLength(1);
      const hash = String(rows[0]?.['password']);
      expect(hash).not.toBe(adminPassword);
      expect(await bcrypt.compare(adminPassword, hash)).toBe(true);
      expect(await t.count('auth_policies')).toBe(3);
    });

    it('a second auth setup exits 2 with "already set up" and changes nothing', async () => {
      expectOneLineError(await t.rest(['auth', 'setup']), 2, /already set up/);
      expect(await t.count('auth_users')).toBe(1);
      expect(await t.count('auth_policies')).toBe(3);
    });

    it('auth user list prints an aligned table without any password hash', async () => {
      const r = await t.rest(['auth', 'user', 'list']);
      expect(r.code).toBe(0);
      expect(r.stderr).toBe('');
      expect(r.stdout).toBe(
        'id  username  is_admin  locked\n--  --------  --------  ------\n 1  admin     true      no\n',
      );
    });

    it('auth user add validates like register and stores the user', async () => {
      const r = await t.rest(['auth', 'user', 'add', 'bob', 'password123', 'false']);
      expect(r).toMatchObject({ code: 0, stderr: '' });
      expect(r.stdout).toMatch(/^added user \d+ 'bob'\n$/);
      const j = await t.rest(['auth', 'user', 'add', 'Élise', 'pässwörd-long', 'true', '--json']);
      expect(j.code).toBe(0);
      expect(JSON.parse(j.stdout)).toEqual({ id: expect.any(Number), username: 'Élise', is_admin: true });
    });

    it('auth user list --json lists id, username, is_admin and the lock-out only', async () => {
      const r = await t.rest(['auth', 'user', 'list', '--json']);
      expect(r.code).toBe(0);
      const users = JSON.parse(r.stdout) as { id: number }[];
      const unlocked = { locked: false, locked_until: null };
      expect(users).toEqual([
        { id: 1, username: 'admin', is_admin: true, ...unlocked },
        { id: expect.any(Number), username: 'bob', is_admin: false, ...unlocked },
        { id: expect.any(Number), username: 'Élise', is_admin: true, ...unlocked },
      ]);
      expect(users.every((u) => Object.keys(u).join() === 'id,username,is_admin,locked,locked_until')).toBe(
        true,
      );
      expect(r.stdout).not.toMatch(/\$2[aby]\$|password/);
    });

    it.each([
      ['a taken username in another case', ['BOB', 'password123', 'false'], /already taken/],
      ['a taken non-ASCII username in another case', ['élise', 'password123', 'false'], /already taken/],
      ['a password under 8 bytes', ['dave', 'short', 'false'], /8 to 72 bytes/],
      ['a password over 72 bytes', ['dave', 'é'.repeat(37), 'false'], /8 to 72 bytes/],
      ['a username over 32 characters', ['d'.repeat(33), 'password123', 'false'], /username/],
      ['a username with a zero-width space', ['da\u200bve', 'password123', 'false'], /username/],
      ['a username with U+034F', ['ad\u034Fmin', 'password123', 'false'], /invisible characters/],
      ['a username with U+3164', ['admin\u3164', 'password123', 'false'], /invisible characters/],
      ['a username of U+2800 alone', ['\u2800', 'password123', 'false'], /blank-rendering/],
      ['a username with a no-break space', ['adm\u00A0in', 'password123', 'false'], /no-break spaces/],
      ['a username with a leading combining mark', ['\u0301dave', 'password123', 'false'], /combining mark/],
      ['is_admin other than true or false', ['dave', 'password123', 'yes'], /is_admin must be true or false/],
    ])('auth user add refuses %s with exit 2 and writes nothing', async (_what, args, message) => {
      expectOneLineError(await t.rest(['auth', 'user', 'add', ...args]), 2, message);
      expect(await t.count('auth_users')).toBe(3);
    });

    it('auth user add without its arguments is a usage error (exit 1)', async () => {
      expectOneLineError(
        await t.rest(['auth', 'user', 'add', 'dave']),
        1,
        /Not enough non-option arguments.*--help/,
      );
      expect(await t.count('auth_users')).toBe(3);
    });

    it('auth policy list prints the default policies as a table and as JSON', async () => {
      const r = await t.rest(['auth', 'policy', 'list']);
      expect(r.code).toBe(0);
      expect(r.stdout).toBe(
        [
          'id  table_name     action  expression              columns  description                                               status',
          '--  -------------  ------  ----------------------  -------  --------------------------------------------------------  ------',
          ' 1  auth_users     all     auth_user.is_admin      *        users operations are limited to admin user                ok',
          ' 2  auth_policies  all     auth_user.is_admin      *        policies operations are limited to admin user             ok',
          ' 3  all            all     user_id = auth_user.id  *        all tables/actions are limited to be filtered by user_id  ok',
          '',
        ].join('\n'),
      );
      const j = await t.rest(['auth', 'policy', 'list', '--json']);
      expect(JSON.parse(j.stdout)).toEqual([
        {
          id: 1,
          table_name: 'auth_users',
          action: 'all',
          expression: 'auth_user.is_admin',
          description: 'users operations are limited to admin user',
          columns: null,
          broken: false,
          error: null,
          warnings: [],
        },
        {
          id: 2,
          table_name: 'auth_policies',
          action: 'all',
          expression: 'auth_user.is_admin',
          description: 'policies operations are limited to admin user',
          columns: null,
          broken: false,
          error: null,
          warnings: [],
        },
        {
          id: 3,
          table_name: 'all',
          action: 'all',
          expression: 'user_id = auth_user.id',
          description: 'all tables/actions are limited to be filtered by user_id',
          columns: null,
          broken: false,
          error: null,
          warnings: [],
        },
      ]);
    });

    it('auth policy add stores a valid policy', async () => {
      const r = await t.rest(['auth', 'policy', 'add', 'docs', 'read', '', 'docs are public']);
      expect(r).toMatchObject({ code: 0, stderr: '' });
      expect(r.stdout).toMatch(/^added policy \d+: docs read ''\n$/);
      const j = await t.rest([
        'auth',
        'policy',
        'add',
        'todos',
        'read_mine',
        'user_id = auth_user.id',
        'my todos',
        '--json',
      ]);
      const row = {
        table_name: 'todos',
        action: 'read_mine',
        expression: 'user_id = auth_user.id',
        description: 'my todos',
      };
      expect(JSON.parse(j.stdout)).toEqual({ id: expect.any(Number), ...row, columns: null });
      const { rows } = await t.adapter.query({
        text: "SELECT table_name, action, expression, description FROM auth_policies WHERE action = 'read_mine'",
        values: [],
      });
      expect(rows).toEqual([row]);
      expect(await t.count('auth_policies')).toBe(5);
    });

    it('a bad expression is echoed with a caret under the error column, then what was expected; exit 2', async () => {
      const r = await t.rest([
        'auth',
        'policy',
        'add',
        'todos',
        'read',
        'user_id = = auth_user.id',
        'broken',
      ]);
      expect(r.code).toBe(2);
      expect(r.stdout).toBe('');
      const lines = r.stderr.split('\n');
      expect(lines[0]).toBe('  user_id = = auth_user.id');
      expect(lines[1]).toBe(`  ${' '.repeat(10)}^`);
      expect(lines[2]).toMatch(
        /^rest: expected .*a column, auth_user\.<attr> or a literal.* at 1:11, found '='$/,
      );
      expect(lines.slice(3)).toEqual(['']);
      expect(await t.count('auth_policies')).toBe(5);
    });

    it('an error on a later line of an expression shows that line with the caret', async () => {
      const r = await t.rest([
        'auth',
        'policy',
        'add',
        'todos',
        'read',
        "user_id = auth_user.id or\n  title !! 'x'",
        'x',
      ]);
      expect(r.code).toBe(2);
      expect(r.stderr).toBe(
        "    title !! 'x'\n  " + ' '.repeat(8) + "^\nrest: unexpected character '!' at 2:9\n",
      );
      expect(await t.count('auth_policies')).toBe(5);
    });

    it('an unknown column is shown with a caret under it; exit 2', async () => {
      const r = await t.rest([
        'auth',
        'policy',
        'add',
        'docs',
        'update',
        'auth_user.is_admin or owner = auth_user.id',
        'x',
      ]);
      expect(r.code).toBe(2);
      expect(r.stderr).toBe(
        '  auth_user.is_admin or owner = auth_user.id\n' +
          `  ${' '.repeat(22)}^\n` +
          "rest: column 'owner' does not exist in table 'docs' at 1:23\n",
      );
      expect(await t.count('auth_policies')).toBe(5);
    });

    it.each([
      ['an unknown table', ['nope', 'read', '', 'x'], /table 'nope' does not exist/],
      [
        'an unknown action',
        ['todos', 'reed', '', 'x'],
        /action 'reed' is not one of create, read, update, delete, read_mine, all/,
      ],
      [
        'a description over 256 characters',
        ['todos', 'read', '', 'd'.repeat(257)],
        /description must be at most 256 characters/,
      ],
      [
        'an expression over 128 characters',
        ['todos', 'read', `id = ${'1'.repeat(124)}`, 'x'],
        /expression must be at most 128 characters/,
      ],
      [
        'a comparison of a column with itself',
        ['todos', 'read', 'id = id', 'x'],
        /compares column 'id' with itself/,
      ],
    ])('auth policy add refuses %s with exit 2 and writes nothing', async (_what, args, message) => {
      const r = await t.rest(['auth', 'policy', 'add', ...args]);
      expect(r.code).toBe(2);
      expect(r.stdout).toBe('');
      expect(r.stderr.split('\n').at(-2)).toMatch(message);
      expect(await t.count('auth_policies')).toBe(5);
    });

    it('auth policy add with a missing argument is a usage error (exit 1)', async () => {
      expectOneLineError(
        await t.rest(['auth', 'policy', 'add', 'todos', 'read', '']),
        1,
        /Not enough non-option arguments/,
      );
    });
  });
});

// The in-process runs above hash at cost 4 (run-cli.ts); the binary stores what rest stores.
describe('the built binary stores passwords at bcrypt cost 10 (real process, sqlite)', () => {
  let t: CliDatabase;
  beforeAll(async () => {
    t = await openCliDatabase('sqlite');
  });
  afterAll(async () => {
    await t?.close();
  });

  /** `rest …args` as a real process; then `username`'s stored hash is cost 10 and matches `password`. */
  const expectStored = async (
    args: readonly string[],
    username: string,
    password?: string,
  ): Promise<void> => {
    const r = await runCliProcess(['-db.url', t.db.url, ...args]);
    expect(r.code, r.stderr).toBe(0);
    const { rows } = await t.adapter.query({
      text: 'SELECT password FROM auth_users WHERE username = ?',
      values: [username],
    });
    const hash = String(rows[0]?.['password']);
    expect(hash).toMatch(/^\$2b\$10\$/);
    expect(await bcrypt.compare(password ?? /^password: (\S+)$/m.exec(r.stdout)?.[1] ?? '', hash)).toBe(true);
  };

  it('auth setup, auth user add and auth user passwd each store a $2b$10$ hash of the password given', async () => {
    await expectStored(['auth', 'setup'], 'admin');
    await expectStored(['auth', 'user', 'add', 'bob', 'password123', 'false'], 'bob', 'password123');
    await expectStored(['auth', 'user', 'passwd', 'bob', 'another one 456'], 'bob', 'another one 456');
  });
});
