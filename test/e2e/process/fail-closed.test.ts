// docs/operations.md "Fail closed" with the real `rest` process: a secret given but empty exits 1 naming the
// setting; without a secret, a database where setup ran is refused unless auth is switched off
// explicitly (flag, environment or YAML), which serves it publicly and says so once.

import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../../support/databases.js';
import { describeEachDatabase } from '../../support/each-database.js';
import { runRest, spawnRest, type Exit } from './rest-process.js';

const SECRET = 'a-secret-that-is-long-enough-0123456789';
const ADDR = ['-addr', '127.0.0.1:0'];

let dir: string;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'rest-fail-closed-'));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function expectRefused(exit: Exit, message: RegExp): void {
  expect({ code: exit.code, stdout: exit.stdout }).toEqual({ code: 1, stdout: '' });
  expect(exit.stderr).toMatch(/^rest: [^\n]+\n$/);
  expect(exit.stderr).toMatch(message);
}

describe('a secret given but empty (real process)', () => {
  const yaml = (name: string, text: string): string => {
    const file = join(dir, name);
    writeFileSync(file, text);
    return file;
  };

  it.each([
    ['-auth.secret ""', ['-auth.secret', ''], {}, /^rest: -auth\.secret is empty; refusing to start/],
    ['-auth.secret=', ['-auth.secret='], {}, /^rest: -auth\.secret is empty/],
    ['--auth.secret of spaces', ['--auth.secret', '   '], {}, /^rest: -auth\.secret is empty/],
    ['REST_AUTH_SECRET=', [], { REST_AUTH_SECRET: '' }, /^rest: REST_AUTH_SECRET is empty/],
    ['REST_AUTH_SECRET of a tab', [], { REST_AUTH_SECRET: '\t' }, /^rest: REST_AUTH_SECRET is empty/],
  ])('%s exits 1 with one line naming the setting', async (_name, args, env, message) => {
    const url = `sqlite://${join(dir, 'empty-secret.db')}`;
    expectRefused(await runRest(['-db.url', url, ...ADDR, ...args], { env }), message);
  });

  it.each([
    ['secret: ""', 'auth: {secret: ""}\n'],
    ['secret: with no value', 'auth:\n  secret:\n'],
  ])('%s in the YAML file exits 1 naming the setting and the file', async (name, text) => {
    const file = yaml(`${name.length}.yml`, text);
    expectRefused(
      await runRest(['-config', file, ...ADDR], { cwd: dir }),
      new RegExp(`^rest: auth\\.secret in ${file.replaceAll('.', '\\.')} is empty`),
    );
  });

  it('an empty REST_AUTH_SECRET is not overridden by a secret in the file', async () => {
    const file = yaml('with-secret.yml', `auth: {secret: "${SECRET}"}\n`);
    expectRefused(
      await runRest(['-config', file, ...ADDR], { cwd: dir, env: { REST_AUTH_SECRET: '' } }),
      /^rest: REST_AUTH_SECRET is empty/,
    );
  });
});

describeEachDatabase('no secret on a database where setup ran', (kind) => {
  let db: TestDatabase;

  beforeAll(async () => {
    db = await createTestDatabase(kind);
    const setup = await runRest(['-db.url', db.url, 'auth', 'setup']);
    expect(setup.code).toBe(0);
  });
  afterAll(async () => {
    await db?.drop();
  });

  it('refuses to start: exit 1, one line saying to set a secret or -auth.enabled=false', async () => {
    const exit = await runRest(['-db.url', db.url, ...ADDR]);
    expectRefused(
      exit,
      /^rest: the database has auth_users \(auth setup was run\) but no auth\.secret is configured: set one \(-auth\.secret or REST_AUTH_SECRET\), or switch auth off explicitly with -auth\.enabled=false\n$/,
    );
  });

  it.each([
    ['-auth.enabled=false', ['-auth.enabled=false'], {}],
    ['-auth.enabled off', ['-auth.enabled', 'off'], {}],
    ['REST_AUTH_ENABLED=false', [], { REST_AUTH_ENABLED: 'false' }],
    ['auth: {enabled: false} in the YAML file', ['-config', 'off.yml'], {}],
  ])(
    'starts with %s, logs one warning that every endpoint is public, and serves auth_users publicly',
    async (_name, args, env) => {
      writeFileSync(join(dir, 'off.yml'), 'auth: {enabled: false}\n');
      const p = spawnRest(['-db.url', db.url, ...ADDR, ...args], { cwd: dir, env });
      const url = await p.started();
      const [warning, started, ...more] = p
        .stdoutLines()
        .map((l) => JSON.parse(l) as Record<string, unknown>);
      expect(warning).toMatchObject({
        level: 40,
        msg: 'auth is switched off (auth.enabled=false): every endpoint is public',
      });
      expect(started?.['msg']).toMatch(/^listening on .* auth off: every table is public, rls (on|off)\)$/);
      expect(more).toEqual([]);
      const users = await fetch(`${url}/auth_users`);
      expect(users.status).toBe(200);
      const rows = (await users.json()) as Array<Record<string, unknown>>;
      expect(rows.map((r) => r['username'])).toEqual(['admin']);
      expect(rows[0]).not.toHaveProperty('password');
      const exit = await p.stop();
      expect([exit.code, exit.stderr]).toEqual([0, '']);
    },
  );

  it('starts with auth on when a secret is configured: auth_users is not public', async () => {
    const p = spawnRest(['-db.url', db.url, ...ADDR], { env: { REST_AUTH_SECRET: SECRET } });
    const url = await p.started();
    expect(p.stdoutLines().find((l) => l.includes('"level":40'))).toBeUndefined();
    expect((await fetch(`${url}/auth_users`)).status).toBe(401);
    expect((await p.stop()).code).toBe(0);
  });
});
