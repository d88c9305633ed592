// The `rest` binary's own contract: help with usage and an example for every command, usage
// errors (exit 1), flag > env > YAML file > default end to end, and unreachable databases (exit 3).

import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli, runCliProcess, runNpmStart } from './run-cli.js';

const COMMANDS: readonly (readonly string[])[] = [
  [],
  ['serve'],
  ['auth'],
  ['auth', 'setup'],
  ['auth', 'user'],
  ['auth', 'user', 'list'],
  ['auth', 'user', 'add'],
  ['auth', 'user', 'remove'],
  ['auth', 'user', 'passwd'],
  ['auth', 'user', 'admin'],
  ['auth', 'user', 'unlock'],
  ['auth', 'policy'],
  ['auth', 'policy', 'list'],
  ['auth', 'policy', 'add'],
  ['auth', 'policy', 'remove'],
  ['auth', 'policy', 'edit'],
  ['policy'],
  ['policy', 'explain'],
  ['policy', 'compile'],
  ['example'],
];

describe('rest --help', () => {
  it.each(COMMANDS.map((c) => [c.join(' ') || '(no command)', c] as const))(
    'rest %s --help shows usage and an example',
    async (_name, command) => {
      const r = await runCli([...command, '--help']);
      expect(r.code).toBe(0);
      expect(r.stderr).toBe('');
      expect(r.stdout).toMatch(
        command.length === 0 ? /^Usage: rest / : new RegExp(`^rest ${command.join(' ')}`),
      );
      expect(r.stdout).toMatch(/\nExamples:\n {2}rest /);
      expect(r.stdout).toContain('-db.url');
    },
  );

  it('lists the command groups and the exit codes at the top level', async () => {
    const r = await runCli(['-h']);
    expect(r.stdout).toMatch(/rest auth +Set up authentication/);
    expect(r.stdout).toMatch(/rest policy +Explain policy decisions/);
    expect(r.stdout).toContain(
      'Exit codes: 0 ok, 1 usage, 2 invalid input, 3 database or runtime error, 4 a policy test failed.',
    );
  });
});

describe('usage errors', () => {
  it.each([
    ['an unknown command', ['bogus'], /^rest: Unknown argument: bogus/],
    ['an unknown subcommand', ['auth', 'bogus'], /^rest: Unknown command: bogus/],
    ['a group without a command', ['auth'], /^rest: auth needs a command: setup, anon-key, user or policy/],
    [
      'a nested group without a command',
      ['auth', 'policy'],
      /^rest: auth policy needs a command: list, add, remove or edit/,
    ],
    ['an unknown flag', ['auth', 'user', 'list', '--jsn'], /^rest: Unknown argument: jsn/],
    ['a bad database URL', ['-db.url', 'foo://x', 'auth', 'user', 'list'], /^rest: Invalid database URL/],
  ])('%s exits 1 with one line on stderr', async (_what, args, message) => {
    const r = await runCli(args);
    expect(r.code).toBe(1);
    expect(r.stdout).toBe('');
    expect(r.stderr).toMatch(/^rest: [^\n]+\n$/);
    expect(r.stderr).toMatch(message);
  });
});

describe('unreachable databases', () => {
  it.each([
    [
      'PostgreSQL',
      'postgres://postgres@127.0.0.1:1/nothing',
      /PostgreSQL database at postgres:\/\/postgres@127\.0\.0\.1:1\/nothing/,
    ],
    [
      'MariaDB',
      'mysql://root:hunter2@127.0.0.1:1/nothing',
      /MySQL\/MariaDB database at mysql:\/\/root:\*\*\*@127\.0\.0\.1:1\/nothing/,
    ],
    [
      'SQLite in a missing directory',
      'sqlite:///nonexistent-dir/rest.db',
      /SQLite database at sqlite:\/\/\/nonexistent-dir\/rest\.db: the directory \/nonexistent-dir does not exist/,
    ],
  ])('%s: exit 3, one line, no stack, no password', async (_what, url, message) => {
    for (const command of [
      ['auth', 'setup'],
      ['auth', 'user', 'list'],
      ['policy', 'compile'],
    ]) {
      const r = await runCli(['-db.url', url, ...command]);
      expect(r.code).toBe(3);
      expect(r.stdout).toBe('');
      expect(r.stderr).toMatch(/^rest: Cannot connect to the [^\n]+\n$/);
      expect(r.stderr).toMatch(message);
      expect(r.stderr).not.toContain('hunter2');
    }
  });
});

describe('flag > environment > YAML file > default, end to end', () => {
  let dir: string;
  const url = (name: string): string => `sqlite://${join(dir, `${name}.db`)}`;
  /** The users of whichever database the CLI opened, by name. */
  const usernames = async (
    args: readonly string[],
    env: Readonly<Record<string, string>> = {},
  ): Promise<string[]> => {
    const r = await runCli([...args, 'auth', 'user', 'list', '--json'], { env });
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    return (JSON.parse(r.stdout) as { username: string }[]).map((u) => u.username);
  };

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'rest-cli-config-'));
    for (const name of ['from_file', 'from_env', 'from_flag']) {
      expect((await runCli(['-db.url', url(name), 'auth', 'setup'])).code).toBe(0);
      expect(
        (await runCli(['-db.url', url(name), 'auth', 'user', 'add', name, 'password123', 'false'])).code,
      ).toBe(0);
    }
    writeFileSync(join(dir, 'rest.yml'), `db:\n  url: ${url('from_file')}\n  rls: off\n`);
    writeFileSync(join(dir, 'secret.yml'), `auth:\n  secret: ${'s'.repeat(32)}\n`);
  });
  afterAll(() => {
    if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
  });

  it('reads the YAML file named by -config or by REST_CONFIG', async () => {
    expect(await usernames(['-config', join(dir, 'rest.yml')])).toEqual(['admin', 'from_file']);
    expect(await usernames([], { REST_CONFIG: join(dir, 'rest.yml') })).toEqual(['admin', 'from_file']);
  });

  it('REST_DB_URL beats the file', async () => {
    expect(await usernames(['-config', join(dir, 'rest.yml')], { REST_DB_URL: url('from_env') })).toEqual([
      'admin',
      'from_env',
    ]);
  });

  it('-db.url beats the environment and the file, in every spelling', async () => {
    const env = { REST_DB_URL: url('from_env'), REST_CONFIG: join(dir, 'rest.yml') };
    for (const flag of [
      ['-db.url', url('from_flag')],
      [`-db.url=${url('from_flag')}`],
      ['--db.url', url('from_flag')],
    ]) {
      expect(await usernames(flag, env)).toEqual(['admin', 'from_flag']);
    }
  });

  it('-db.rls follows the same order: flag off beats env on, which beats file off', async () => {
    const file = ['-config', join(dir, 'rest.yml')];
    const rlsOn = await runCli([...file, 'auth', 'user', 'list'], { env: { REST_DB_RLS: 'on' } });
    expect(rlsOn.code).toBe(1);
    expect(rlsOn.stderr).toMatch(/^rest: db\.rls on needs PostgreSQL[^\n]*\n$/);
    expect(await usernames([...file, '-db.rls', 'off'], { REST_DB_RLS: 'on' })).toEqual([
      'admin',
      'from_file',
    ]);
  });

  it('auth is on when a secret comes from the file, and explain says when it is off', async () => {
    const args = ['-db.url', url('from_file'), 'policy', 'explain', 'auth_users', 'read'];
    const off = await runCli(args);
    expect(off.stdout).toContain('Note: auth is off in this configuration');
    const on = await runCli(['-config', join(dir, 'secret.yml'), ...args]);
    expect(on.code).toBe(0);
    expect(on.stdout).not.toContain('Note: auth is off');
    expect(
      JSON.parse((await runCli([...args, '--json'], { env: { REST_AUTH_SECRET: 'e'.repeat(32) } })).stdout)
        .auth_enabled,
    ).toBe(true);
  });

  it('a secret that begins with a dash is the value of -auth.secret, in every spelling', async () => {
    const args = ['-db.url', url('from_file'), 'policy', 'explain', 'auth_users', 'read', '--json'];
    const secret = `-h-${'e'.repeat(32)}`;
    for (const flag of [['-auth.secret', secret], [`-auth.secret=${secret}`], ['--auth.secret', secret]]) {
      const r = await runCli([...flag, ...args]);
      expect(r.stderr).toBe('');
      expect((JSON.parse(r.stdout) as { auth_enabled: boolean }).auth_enabled).toBe(true);
    }
    const weak = await runCli(['-auth.secret', '-weak-secret', ...args]);
    expect(weak.code).not.toBe(0);
    expect(weak.stderr).toMatch(/at least 32 bytes/);
    expect(weak.stderr).not.toContain('weak-secret');
  });

  it('without any setting the database is ./rest.db in the working directory', async () => {
    const cwd = join(dir, 'cwd');
    mkdirSync(cwd);
    const r = await runCliProcess(['auth', 'setup'], { cwd });
    expect(r.code).toBe(0);
    expect(existsSync(join(cwd, 'rest.db'))).toBe(true);
  });
});

// The rest of this directory runs the CLI in-process; these check that the built binary is the same
// program and that its exit code is the process's.
describe('the built binary', () => {
  it.each([
    ['--help', 0, ['--help']],
    ['auth policy add --help', 0, ['auth', 'policy', 'add', '--help']],
    ['an unknown command', 1, ['bogus']],
    ['a bad database URL', 1, ['-db.url', 'foo://x', 'auth', 'user', 'list']],
    [
      'an unreachable database',
      3,
      ['-db.url', 'postgres://postgres@127.0.0.1:1/nothing', 'policy', 'compile'],
    ],
  ] as const)('%s: exit %i, and the same output as in-process', async (_what, code, args) => {
    const [spawned, inProcess] = await Promise.all([runCliProcess(args), runCli(args)]);
    expect(spawned.code).toBe(code);
    expect(spawned).toEqual(inProcess);
  });

  it('npm start -- --help prints the help', async () => {
    const r = await runNpmStart(['--help']);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain((await runCli(['--help'])).stdout);
  });
});
