// The admin commands of docs/cli.md on every database, against a running server of the same database:
// `auth user remove|passwd|admin|unlock` change the account and end its sessions (the server
// refuses the user's token within 2 s, docs/authentication.md), `auth user list` shows lock-outs, `auth policy
// remove|edit` change one row with edit validated like add; an unknown user or policy is exit 2
// and changes nothing.

import bcrypt from 'bcrypt';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DialectName } from '../../../compiler/types.js';
import { ALL_KINDS, isAvailable } from '../../support/databases.js';
import { serverIt } from '../../support/server-only.js';
import { bearer, startAuthSuite, type PolicyContext } from '../http/policy-support.js';
import { runCli, runCliProcess, type CliResult } from './run-cli.js';
import { rollBackToFirstAuthVersion } from '../../support/auth-history.js';
import { openRawSql } from '../../support/server.js';
import { openCliDatabase, suiteName, type CliDatabase } from './cli-fixtures.js';

const TEAM = 'team_id in (select team_id from members where user_id = auth_user.id)';
const DDL = [
  'CREATE TABLE tasks (id integer PRIMARY KEY, team_id integer, title varchar(100))',
  'CREATE TABLE members (id integer PRIMARY KEY, team_id integer, user_id integer)',
];
const EXTRA_DDL: Readonly<Record<DialectName, readonly string[]>> = {
  postgres: DDL,
  mysql: DDL,
  sqlite: DDL,
};

/** A failed command: nothing on stdout, its last stderr line `rest: …`. */
function expectError(result: CliResult, code: number, message: RegExp): void {
  expect(result.code, result.stderr).toBe(code);
  expect(result.stdout).toBe('');
  expect(result.stderr.split('\n').at(-2)).toMatch(message);
}

describe.each(ALL_KINDS)('%s', (kind) => {
  describe.skipIf(!isAvailable(kind))(
    suiteName('account commands on a database set up by the first version', kind),
    () => {
      let t: CliDatabase;
      beforeAll(async () => {
        t = await openCliDatabase(kind);
      });
      afterAll(async () => {
        await t?.close();
      });

      it('create the session and throttle tables first, as a server start does', async () => {
        expect((await t.rest(['auth', 'setup'])).code).toBe(0);
        expect((await t.rest(['auth', 'user', 'add', 'bob', 'password123', 'false'])).code).toBe(0);
        const sql = await openRawSql(t.db);
        try {
          await rollBackToFirstAuthVersion(sql, kind);
        } finally {
          await sql.close();
        }
        expect((await t.adapter.introspect()).tables.has('auth_sessions')).toBe(false);
        const listed = await t.rest(['auth', 'user', 'list', '--json']);
        expect(listed.code, listed.stderr).toBe(0);
        expect(JSON.parse(listed.stdout)).toContainEqual({
          id: 2,
          username: 'bob',
          is_admin: false,
          locked: false,
          locked_until: null,
        });
        const removed = await t.rest(['auth', 'user', 'remove', 'bob', '--json']);
        expect(removed.code, removed.stderr).toBe(0);
        expect(JSON.parse(removed.stdout)).toEqual({ removed: 'bob', id: 2, sessions_revoked: 0 });
        expect(await t.count('auth_users')).toBe(1);
      });
    },
  );

  describe.skipIf(!isAvailable(kind))(suiteName('rest auth admin commands', kind), () => {
    let ctx: PolicyContext;
    beforeAll(async () => {
      ctx = await startAuthSuite(kind, { ddl: EXTRA_DDL });
    });
    afterAll(async () => {
      await ctx?.server.handle.close();
      await ctx?.sql.close();
      await ctx?.db.drop();
    });

    const rest = (args: readonly string[]): Promise<CliResult> => runCli(['-db.url', ctx.db.url, ...args]);

    let seq = 0;
    /** A fresh user with a live session: its id, name, password and access token. */
    async function loggedInUser(): Promise<{
      id: number;
      username: string;
      password: string;
      token: string;
    }> {
      seq += 1;
      const username = `user${seq}`;
      const password = `pw-${username}-long`;
      const registered = await ctx.http.post('/auth/register', { username, password });
      expect(registered.status, registered.text).toBe(201);
      return {
        id: (registered.json as { id: number }).id,
        username,
        password,
        token: await login(username, password),
      };
    }

    async function login(username: string, password: string): Promise<string> {
      const reply = await ctx.http.post('/auth/login', { username, password });
      expect(reply.status, reply.text).toBe(200);
      return (reply.json as { token: string }).token;
    }

    /** A read any logged-in user may make (the default policy filters `notes` by user_id). */
    const read = (token: string) => ctx.http.get('/notes', bearer(token));

    /** docs/authentication.md: the token is refused with 401 "session revoked" within 2 s of the command. */
    async function expectRevokedWithin2s(token: string): Promise<void> {
      const deadline = Date.now() + 2000;
      let reply = await read(token);
      while (reply.status !== 401 && Date.now() < deadline) {
        await new Promise((r) => setTimeout(r, 50));
        reply = await read(token);
      }
      expect(reply.status, reply.text).toBe(401);
      expect(reply.json).toMatchObject({
        error: { code: 'invalid_token', message: expect.stringMatching(/revoked/) },
      });
    }

    const userRow = async (id: number) =>
      (await ctx.sql.rows(`SELECT username, password, is_admin FROM auth_users WHERE id = ${id}`))[0];
    const policyRows = () =>
      ctx.sql.rows(
        'SELECT id, table_name, action, expression, description, columns FROM auth_policies ORDER BY id',
      );

    describe('auth user remove', () => {
      // The server has the user cached when the command runs: it learns of the change by NOTIFY.
      serverIt(kind)('removes the user matched without regard to case and ends their sessions', async () => {
        const u = await loggedInUser();
        expect((await read(u.token)).status).toBe(200);
        const r = await rest(['auth', 'user', 'remove', u.username.toUpperCase()]);
        expect(r).toEqual({
          code: 0,
          stdout: `removed user ${u.id} '${u.username}'; 1 session revoked\n`,
          stderr: '',
        });
        expect(await userRow(u.id)).toBeUndefined();
        await expectRevokedWithin2s(u.token);
      });

      it('--json says who was removed and how many sessions ended', async () => {
        const u = await loggedInUser();
        await login(u.username, u.password);
        const r = await rest(['auth', 'user', 'remove', u.username, '--json']);
        expect(r.code, r.stderr).toBe(0);
        expect(JSON.parse(r.stdout)).toEqual({ removed: u.username, id: u.id, sessions_revoked: 2 });
        await expectRevokedWithin2s(u.token);
      });

      it('an unknown user is exit 2 quoting it, and nobody is removed', async () => {
        const before = await ctx.sql.count('auth_users');
        expectError(
          await rest(['auth', 'user', 'remove', 'nobody']),
          2,
          /^rest: user 'nobody' does not exist$/,
        );
        expect(await ctx.sql.count('auth_users')).toBe(before);
      });
    });

    describe('auth user passwd', () => {
      it('sets the password given, validated like register, and ends the sessions', async () => {
        const u = await loggedInUser();
        const r = await rest(['auth', 'user', 'passwd', u.username, 'a-new-password']);
        expect(r).toEqual({
          code: 0,
          stdout: `password of user ${u.id} '${u.username}' set; 1 session revoked\n`,
          stderr: '',
        });
        expect(await bcrypt.compare('a-new-password', String((await userRow(u.id))?.['password']))).toBe(
          true,
        );
        await expectRevokedWithin2s(u.token);
        expect((await read(await login(u.username, 'a-new-password'))).status).toBe(200);
        expect(
          (await ctx.http.post('/auth/login', { username: u.username, password: u.password })).status,
        ).toBe(401);
      });

      it('--json says whose password was set, without the password given', async () => {
        const u = await loggedInUser();
        const r = await rest(['auth', 'user', 'passwd', u.username, 'another-password', '--json']);
        expect(r.code, r.stderr).toBe(0);
        expect(JSON.parse(r.stdout)).toEqual({
          username: u.username,
          id: u.id,
          generated: false,
          sessions_revoked: 1,
        });
        await expectRevokedWithin2s(u.token);
      });

      it('refuses a password register would refuse (exit 2) and changes nothing', async () => {
        const u = await loggedInUser();
        const before = await userRow(u.id);
        expectError(await rest(['auth', 'user', 'passwd', u.username, 'short']), 2, /8 to 72 bytes/);
        expect(await userRow(u.id)).toEqual(before);
        expect((await read(u.token)).status).toBe(200);
      });

      it('an unknown user is exit 2 quoting it, and nothing changes', async () => {
        const before = await ctx.sql.rows('SELECT id, password FROM auth_users ORDER BY id');
        expectError(
          await rest(['auth', 'user', 'passwd', 'nobody', 'a-new-password']),
          2,
          /^rest: user 'nobody' does not exist$/,
        );
        expect(await ctx.sql.rows('SELECT id, password FROM auth_users ORDER BY id')).toEqual(before);
      });

      // Once with the built binary, whose stdin is not a terminal, then in-process (runCli's
      // terminal is not one either).
      it('without a password and no terminal: generates one and prints it once', async () => {
        const u = await loggedInUser();
        const r = await runCliProcess(['-db.url', ctx.db.url, 'auth', 'user', 'passwd', u.username]);
        expect(r.code, r.stderr).toBe(0);
        const m = new RegExp(
          `^password of user ${u.id} '${u.username}' set; 1 session revoked\\npassword: ([A-Za-z0-9_-]{24})\\n$`,
        ).exec(r.stdout);
        expect(m).not.toBeNull();
        expect(r.stderr).toMatch(/shown only this once/);
        await expectRevokedWithin2s(u.token);
        expect((await read(await login(u.username, m?.[1] ?? ''))).status).toBe(200);

        const j = await rest(['auth', 'user', 'passwd', u.username, '--json']);
        expect(j.code, j.stderr).toBe(0);
        const out = JSON.parse(j.stdout) as { password: string };
        expect(out).toEqual({
          username: u.username,
          id: u.id,
          password: expect.stringMatching(/^[A-Za-z0-9_-]{24}$/),
          generated: true,
          sessions_revoked: 1,
        });
        expect(out.password).not.toBe(m?.[1]);
        await login(u.username, out.password);
      });
    });

    describe('auth user admin', () => {
      // The server has the user cached when the command runs: it learns of the change by NOTIFY.
      serverIt(kind)('grants admin, ending the sessions; a new login has admin rights', async () => {
        const u = await loggedInUser();
        expect((await ctx.http.get('/auth_policies', bearer(u.token))).status).toBe(403);
        const r = await rest(['auth', 'user', 'admin', u.username, 'true']);
        expect(r).toEqual({
          code: 0,
          stdout: `user ${u.id} '${u.username}' is now an admin; 1 session revoked\n`,
          stderr: '',
        });
        expect(await userRow(u.id)).toMatchObject({ is_admin: kind === 'postgres' ? true : 1 });
        await expectRevokedWithin2s(u.token);
        const adminToken = await login(u.username, u.password);
        expect((await ctx.http.get('/auth_policies', bearer(adminToken))).status).toBe(200);

        const j = await rest(['auth', 'user', 'admin', u.username, 'false', '--json']);
        expect(j.code, j.stderr).toBe(0);
        expect(JSON.parse(j.stdout)).toEqual({
          username: u.username,
          id: u.id,
          is_admin: false,
          was_admin: true,
          sessions_revoked: 1,
        });
        expect(await userRow(u.id)).toMatchObject({ is_admin: kind === 'postgres' ? false : 0 });
        await expectRevokedWithin2s(adminToken);
      });

      it('an unknown user or a value other than true/false is exit 2, and nothing changes', async () => {
        const before = await ctx.sql.rows('SELECT id, is_admin FROM auth_users ORDER BY id');
        expectError(
          await rest(['auth', 'user', 'admin', 'nobody', 'true']),
          2,
          /^rest: user 'nobody' does not exist$/,
        );
        expectError(
          await rest(['auth', 'user', 'admin', 'alice', 'yes']),
          2,
          /is_admin must be true or false, not 'yes'/,
        );
        expect(await ctx.sql.rows('SELECT id, is_admin FROM auth_users ORDER BY id')).toEqual(before);
      });
    });

    describe('auth user unlock and the locked column of auth user list', () => {
      it('list shows the lock-out, unlock clears it and ends the sessions', async () => {
        const u = await loggedInUser();
        for (let i = 0; i < 5; i++) {
          expect(
            (await ctx.http.post('/auth/login', { username: u.username, password: 'wrong-password' })).status,
          ).toBe(401);
        }
        expect(
          (await ctx.http.post('/auth/login', { username: u.username, password: u.password })).status,
        ).toBe(429);

        const table = await rest(['auth', 'user', 'list']);
        expect(table.code, table.stderr).toBe(0);
        const lines = table.stdout.split('\n');
        expect(lines[0]).toMatch(/^id +username +is_admin +locked$/);
        expect(lines.find((l) => l.includes(` ${u.username} `))).toMatch(
          / false +until \d{4}-\d\d-\d\dT[\d:.]+Z$/,
        );
        expect(lines.find((l) => l.includes(' alice '))).toMatch(/ false +no$/);
        const listed = JSON.parse((await rest(['auth', 'user', 'list', '--json'])).stdout) as Array<
          Record<string, unknown>
        >;
        const mine = listed.find((x) => x['username'] === u.username);
        expect(mine).toEqual({
          id: u.id,
          username: u.username,
          is_admin: false,
          locked: true,
          locked_until: expect.any(String),
        });
        // The lock ends with the window of the first failure (15 minutes).
        const until = Date.parse(String(mine?.['locked_until']));
        expect(until - Date.now()).toBeGreaterThan(14 * 60_000);
        expect(until - Date.now()).toBeLessThanOrEqual(15 * 60_000);

        const r = await rest(['auth', 'user', 'unlock', u.username.toUpperCase(), '--json']);
        expect(r.code, r.stderr).toBe(0);
        expect(JSON.parse(r.stdout)).toEqual({
          unlocked: u.username,
          id: u.id,
          throttle_rows_cleared: 1,
          sessions_revoked: 1,
        });
        await expectRevokedWithin2s(u.token);
        const after = JSON.parse((await rest(['auth', 'user', 'list', '--json'])).stdout) as Array<
          Record<string, unknown>
        >;
        expect(after.find((x) => x['username'] === u.username)).toMatchObject({
          locked: false,
          locked_until: null,
        });
        expect((await read(await login(u.username, u.password))).status).toBe(200);

        const plain = await rest(['auth', 'user', 'unlock', u.username]);
        expect(plain).toEqual({
          code: 0,
          stdout: `unlocked user ${u.id} '${u.username}'; 1 session revoked\n`,
          stderr: '',
        });
      });

      it('an unknown user is exit 2, and no lock-out counter is touched', async () => {
        for (let i = 0; i < 2; i++)
          await ctx.http.post('/auth/login', { username: 'ghost', password: 'wrong-password' });
        const before = await ctx.sql.rows(
          'SELECT throttle_key, failures FROM auth_login_throttle ORDER BY throttle_key',
        );
        expect(before.some((row) => String(row['throttle_key']).endsWith(' ghost'))).toBe(true);
        expectError(
          await rest(['auth', 'user', 'unlock', 'ghost']),
          2,
          /^rest: user 'ghost' does not exist$/,
        );
        expect(
          await ctx.sql.rows('SELECT throttle_key, failures FROM auth_login_throttle ORDER BY throttle_key'),
        ).toEqual(before);
      });
    });

    describe('auth policy remove and edit', () => {
      let members = 0;
      let tasks = 0;
      let adminWrites = 0;
      beforeAll(async () => {
        const ids: number[] = [];
        for (const [table, expression] of [
          ['members', 'user_id = auth_user.id'],
          ['tasks', TEAM],
        ] as const) {
          const r = await rest([
            'auth',
            'policy',
            'add',
            table,
            'read',
            expression,
            `read ${table}`,
            '--json',
          ]);
          expect(r.code, r.stderr).toBe(0);
          ids.push((JSON.parse(r.stdout) as { id: number }).id);
        }
        [members = 0, tasks = 0] = ids;
        // Only admins write members (docs/policy-language.md): the team pattern warns of nothing.
        const added = await rest(['auth', 'policy', 'add', 'members', 'all', 'auth_user.is_admin', 'x']);
        expect(added).toEqual({ code: 0, stdout: expect.stringMatching(/^added policy \d+:/), stderr: '' });
        adminWrites = Number(/^added policy (\d+):/.exec(added.stdout)?.[1]);
      });

      it('edit changes the fields given, keeps the others, and prints the stored row', async () => {
        const r = await rest([
          'auth',
          'policy',
          'edit',
          String(members),
          '--description',
          'members read their rows',
        ]);
        expect(r).toEqual({
          code: 0,
          stdout: `changed policy ${members}: members read 'user_id = auth_user.id'\n`,
          stderr: '',
        });
        const j = await rest([
          'auth',
          'policy',
          'edit',
          String(members),
          '--action',
          'all',
          '--expression',
          'user_id = auth_user.id or auth_user.is_admin',
          '--json',
        ]);
        expect(j.code, j.stderr).toBe(0);
        const row = {
          id: members,
          table_name: 'members',
          action: 'all',
          expression: 'user_id = auth_user.id or auth_user.is_admin',
          description: 'members read their rows',
          columns: null,
        };
        expect(JSON.parse(j.stdout)).toEqual(row);
        expect((await policyRows()).find((p) => Number(p['id']) === members)).toEqual({
          ...row,
          id: expect.anything(),
        });
      });

      it.each([
        [
          'a bad expression, with a caret',
          ['--expression', 'user_id = = 1'],
          /at 1:11/,
          '  user_id = = 1\n            ^',
        ],
        [
          'an unknown action, quoted',
          ['--action', 'write'],
          /^rest: action 'write' is not one of create, read/,
          undefined,
        ],
        ['an unknown table, quoted', ['--table', 'nope'], /^rest: table 'nope' does not exist$/, undefined],
        // The stored expression is checked against the new table: docs has no team_id.
        [
          'a table the stored expression does not fit',
          ['--table', 'docs'],
          /^rest: column 'team_id' does not exist in table 'docs'/,
          `  ${TEAM}\n  ^`,
        ],
      ])('edit refuses %s with exit 2 and writes nothing', async (_what, options, message, caret) => {
        const before = await policyRows();
        const r = await rest(['auth', 'policy', 'edit', String(tasks), ...options]);
        expectError(r, 2, message);
        if (caret !== undefined) expect(r.stderr).toContain(caret);
        expect(await policyRows()).toEqual(before);
      });

      it('edit refuses a row that would close a cycle with the others (exit 2) and writes nothing', async () => {
        const before = await policyRows();
        const r = await rest([
          'auth',
          'policy',
          'edit',
          String(members),
          '--expression',
          'exists (select from tasks where tasks.team_id = members.team_id)',
        ]);
        expectError(
          r,
          2,
          new RegExp(`^rest: the policy's subqueries make a cycle: .+ \\(with policy ${tasks}\\);`),
        );
        expect(await policyRows()).toEqual(before);
      });

      it('edit warns like add when the row lets non-admins update auth_users (docs/authentication.md)', async () => {
        const added = await rest([
          'auth',
          'policy',
          'add',
          'auth_users',
          'update',
          'auth_user.is_admin',
          'x',
          '--json',
        ]);
        // An admin-only row of auth_users is not warned about (members, opened above, is).
        expect(added.stderr).not.toContain('auth_users');
        const id = String((JSON.parse(added.stdout) as { id: number }).id);
        try {
          const r = await rest([
            'auth',
            'policy',
            'edit',
            id,
            '--expression',
            'id = auth_user.id or auth_user.is_admin',
          ]);
          expect(r.code, r.stderr).toBe(0);
          expect(r.stderr).toMatch(
            /^rest: warning: this policy lets users who are not admins update rows of auth_users, but id, password, is_admin stay admin-only/,
          );
        } finally {
          expect((await rest(['auth', 'policy', 'remove', id])).code).toBe(0);
        }
      });

      it('edit without any option is a usage error (exit 1)', async () => {
        expectError(
          await rest(['auth', 'policy', 'edit', String(tasks)]),
          1,
          /needs at least one of --table, --action/,
        );
      });

      it('an unknown or malformed id is exit 2 quoting it, and nothing changes', async () => {
        const before = await policyRows();
        expectError(
          await rest(['auth', 'policy', 'edit', '999', '--description', 'x']),
          2,
          /^rest: policy '999' does not exist$/,
        );
        expectError(
          await rest(['auth', 'policy', 'remove', '999']),
          2,
          /^rest: policy '999' does not exist$/,
        );
        expectError(
          await rest(['auth', 'policy', 'remove', 'abc']),
          2,
          /^rest: policy id 'abc' is not a positive integer$/,
        );
        expect(await policyRows()).toEqual(before);
      });

      it('remove deletes the row and prints it', async () => {
        const r = await rest(['auth', 'policy', 'remove', String(tasks)]);
        expect(r).toEqual({ code: 0, stdout: `removed policy ${tasks}: tasks read '${TEAM}'\n`, stderr: '' });
        expect((await policyRows()).map((p) => Number(p['id']))).not.toContain(tasks);
        const j = await rest(['auth', 'policy', 'remove', String(members), '--json']);
        expect(j.code, j.stderr).toBe(0);
        expect(JSON.parse(j.stdout)).toEqual({
          removed: {
            id: members,
            table_name: 'members',
            action: 'all',
            expression: 'user_id = auth_user.id or auth_user.is_admin',
            description: 'members read their rows',
            columns: null,
          },
        });
        expect((await rest(['auth', 'policy', 'remove', String(adminWrites)])).code).toBe(0);
        expect(await ctx.sql.count('auth_policies')).toBe(3);
      });
    });
  });
});
