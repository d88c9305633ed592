// Relation policies through the built binary on every database: `auth policy add`
// refuses unknown subquery tables, outer-row references to missing columns, the server's own
// tables and cycles with exit 2 and writes nothing; `policy explain`
// shows the tables a subquery reads, the read policy it sees them through and missing indexes;
// `policy compile` prints the RLS with its subqueries.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ALL_KINDS, isAvailable } from '../../support/databases.js';
import { openCliDatabase, suiteName, type CliDatabase } from './cli-fixtures.js';

const TEAM = 'team_id in (select team_id from members where user_id = auth_user.id)';

describe.each(ALL_KINDS)('%s', (kind) => {
  describe.skipIf(!isAvailable(kind))(suiteName('rest relation policies', kind), () => {
    let t: CliDatabase;
    let policies: number;
    /** The ids of the `members all` row and the `tasks read` row. */
    let adminWrites: number;
    let team: number;
    beforeAll(async () => {
      t = await openCliDatabase(kind);
      await t.adapter.exec(
        'CREATE TABLE tasks (id integer PRIMARY KEY, team_id integer, title varchar(100))',
      );
      await t.adapter.exec('CREATE TABLE members (id integer PRIMARY KEY, team_id integer, user_id integer)');
      expect((await t.rest(['auth', 'setup'])).code).toBe(0);
      // `policy explain --user 2` loads a stored user.
      expect((await t.rest(['auth', 'user', 'add', 'bob', 'password123', 'false'])).code).toBe(0);
      // The documented team pattern: users read their memberships, admins write them.
      for (const [table, action, expression] of [
        ['members', 'read', 'user_id = auth_user.id'],
        ['members', 'all', 'auth_user.is_admin'],
        ['tasks', 'read', TEAM],
      ] as const) {
        const added = await t.rest(['auth', 'policy', 'add', table, action, expression, 'x']);
        expect(added.stderr).toBe('');
        expect(added.code).toBe(0);
      }
      policies = await t.count('auth_policies');
      const list = JSON.parse((await t.rest(['auth', 'policy', 'list', '--json'])).stdout) as Array<{
        id: number;
        table_name: string;
        action: string;
      }>;
      const idOf = (table: string, action: string): number =>
        list.find((p) => p.table_name === table && p.action === action)?.id ?? 0;
      adminWrites = idOf('members', 'all');
      team = idOf('tasks', 'read');
    });
    afterAll(async () => {
      await t?.close();
    });

    it.each([
      [
        'an unknown table in a subquery',
        ['tasks', 'read', 'team_id in (select team_id from teams where user_id = 1)', 'x'],
        /^rest: table 'teams' does not exist at 1:33$/,
      ],
      [
        'an unknown column in a subquery',
        ['tasks', 'read', 'exists (select from members where member = 1)', 'x'],
        /^rest: column 'member' does not exist in table 'members' at 1:35$/,
      ],
      [
        "an outer-row reference to a column the policy's table lacks",
        ['tasks', 'read', 'exists (select from members where members.team_id = tasks.nosuch_id)', 'x'],
        /^rest: column 'nosuch_id' does not exist in table 'tasks' at 1:53$/,
      ],
      [
        "one of the server's own tables in a subquery",
        ['tasks', 'read', 'exists (select from auth_sessions where user_id = auth_user.id)', 'x'],
        /^rest: table 'auth_sessions' is internal to rest and is not served: a policy cannot read it at 1:21$/,
      ],
      [
        "one of the server's own tables as the policy's table",
        ['auth_login_throttle', 'read', '', 'x'],
        /^rest: table 'auth_login_throttle' is internal to rest and is not served: a policy cannot name it$/,
      ],
      [
        'a cycle through subqueries',
        ['members', 'read', 'exists (select from tasks where tasks.team_id = members.team_id)', 'x'],
        /^rest: the policy's subqueries make a cycle: (members → tasks → members|tasks → members → tasks) \(with policy \d+\);/,
      ],
    ])('auth policy add refuses %s with exit 2 and writes nothing', async (_what, args, message) => {
      const r = await t.rest(['auth', 'policy', 'add', ...args]);
      expect(r.code).toBe(2);
      expect(r.stdout).toBe('');
      expect(r.stderr.split('\n').at(-2)).toMatch(message);
      expect(await t.count('auth_policies')).toBe(policies);
    });

    it("policy explain and policy compile refuse the server's own tables (exit 2), saying why", async () => {
      for (const args of [
        ['policy', 'explain', 'auth_sessions', 'read'],
        ['policy', 'compile', '--table', 'auth_sessions', '--role', 'app'],
      ]) {
        const r = await t.rest(args);
        expect(r.code).toBe(2);
        expect(r.stderr).toBe("rest: table 'auth_sessions' is internal to rest and is not served\n");
      }
    });

    it.runIf(kind === 'postgres')(
      'a partition or an inheritance child: refused by policy add, explain and compile (exit 2), saying why',
      async () => {
        await t.adapter.exec(
          'CREATE TABLE ev (id integer NOT NULL, user_id integer) PARTITION BY RANGE (id)',
        );
        await t.adapter.exec('CREATE TABLE ev_a PARTITION OF ev FOR VALUES FROM (1) TO (100)');
        await t.adapter.exec('CREATE TABLE child_t (extra text) INHERITS (members)');
        const partition = "table 'ev_a' is a partition of 'ev': it is reached only through 'ev'";
        const child =
          "table 'child_t' is an inheritance child of 'members': it is reached only through 'members'";
        for (const [args, message] of [
          [['auth', 'policy', 'add', 'ev_a', 'read', '', 'x'], `rest: ${partition}: a policy cannot name it`],
          [
            ['auth', 'policy', 'add', 'ev', 'read', 'exists (select from child_t where id = 1)', 'x'],
            `rest: ${child}: a policy cannot read it at 1:21`,
          ],
          [['policy', 'explain', 'ev_a', 'read'], `rest: ${partition}`],
          [['policy', 'compile', '--table', 'child_t', '--role', 'app'], `rest: ${child}`],
        ] as const) {
          const r = await t.rest(args);
          expect([args, r.code]).toEqual([args, 2]);
          expect(r.stderr.split('\n').at(-2)).toBe(message);
        }
        expect(await t.count('auth_policies')).toBe(policies);
        // The parent is served: its policy may be written and explained.
        expect((await t.rest(['policy', 'explain', 'ev', 'read'])).code).toBe(0);
      },
    );

    it('policy explain shows the table a subquery reads, its read policy and the missing index', async () => {
      const portable = kind === 'postgres' ? ['-db.rls', 'off'] : [];
      const r = await t.rest([...portable, 'policy', 'explain', 'tasks', 'read', '--user', '2']);
      expect(r.stderr).toBe('');
      expect(r.code).toBe(0);
      expect(r.stdout).toContain(
        "Subqueries (each sees its table through that table's own read policy):\n" +
          "  members ('team_id', 'user_id'): read policy: user_id = auth_user.id\n" +
          "    warning: no index on 'team_id', 'user_id' of table 'members'",
      );
      expect(r.stdout).toMatch(/^Decision: filter \(.+ IN \(SELECT .+members.+\) \[2,2\]$/m);
    });

    it('auth policy edit, remove, list and policy explain warn when non-admins can write members', async () => {
      const warning = (action: string, writer: number, writerTable: string): string =>
        `policy ${team} (tasks) grants access through rows of 'members', and policy ${writer} (${writerTable}) lets non-admins ${action} rows of 'members': a user may grant themselves that access`;
      const opened = await t.rest([
        'auth',
        'policy',
        'edit',
        String(adminWrites),
        '--expression',
        'user_id = auth_user.id',
      ]);
      expect(opened.code).toBe(0);
      expect(opened.stderr).toBe(
        `rest: warning: ${warning('create', adminWrites, 'members')}\n` +
          `rest: warning: ${warning('update', adminWrites, 'members')}\n`,
      );
      expect(opened.stdout).toMatch(/^changed policy \d+: members all 'user_id = auth_user.id'\n$/);

      const listed = await t.rest(['auth', 'policy', 'list']);
      expect(listed.code).toBe(0);
      const statusOf = (id: number): string | undefined =>
        listed.stdout.split('\n').find((l) => l.trimStart().startsWith(`${id} `));
      expect(statusOf(team)).toContain(`WARNING: ${warning('create', adminWrites, 'members')}`);
      expect(statusOf(adminWrites)).toContain('WARNING: ');
      const json = JSON.parse((await t.rest(['auth', 'policy', 'list', '--json'])).stdout) as Array<{
        id: number;
        warnings: string[];
      }>;
      expect(json.find((p) => p.id === team)?.warnings).toEqual([
        warning('create', adminWrites, 'members'),
        warning('update', adminWrites, 'members'),
      ]);
      expect(json.filter((p) => p.id !== team && p.id !== adminWrites).map((p) => p.warnings)).toEqual(
        json.filter((p) => p.id !== team && p.id !== adminWrites).map(() => []),
      );

      const explained = await t.rest(['policy', 'explain', 'tasks', 'read', '--user', '2']);
      expect(explained.code).toBe(0);
      expect(explained.stdout).toContain(
        'Escalation warnings (non-admins can write rows a relation policy grants access through):\n' +
          `  warning: ${warning('create', adminWrites, 'members')}\n` +
          `  warning: ${warning('update', adminWrites, 'members')}\n`,
      );
      const onWrite = await t.rest(['policy', 'explain', 'members', 'create', '--user', '2', '--json']);
      expect((JSON.parse(onWrite.stdout) as { escalations: Array<{ action: string }> }).escalations).toEqual([
        expect.objectContaining({ table: 'members', action: 'create', policy_id: adminWrites }),
      ]);

      const closed = await t.rest([
        'auth',
        'policy',
        'edit',
        String(adminWrites),
        '--expression',
        'auth_user.is_admin',
      ]);
      expect(closed.code).toBe(0);
      expect(closed.stderr).toBe('');
      expect((await t.rest(['policy', 'explain', 'tasks', 'read', '--user', '2'])).stdout).not.toContain(
        'Escalation warnings',
      );

      // Removed, members' writes fall back to setup's `all / all / user_id = auth_user.id`.
      const removed = await t.rest(['auth', 'policy', 'remove', String(adminWrites)]);
      expect(removed.code).toBe(0);
      const fallback = (
        JSON.parse((await t.rest(['auth', 'policy', 'list', '--json'])).stdout) as Array<{
          id: number;
          table_name: string;
        }>
      ).find((p) => p.table_name === 'all')?.id;
      expect(removed.stderr).toBe(
        `rest: warning: ${warning('create', fallback ?? 0, 'every table')}\n` +
          `rest: warning: ${warning('update', fallback ?? 0, 'every table')}\n`,
      );
      const added = await t.rest(['auth', 'policy', 'add', 'members', 'all', 'auth_user.is_admin', 'x']);
      expect(added.code).toBe(0);
      expect(added.stderr).toBe('');
      adminWrites = Number(/^added policy (\d+):/.exec(added.stdout)?.[1]);
    });

    it('policy compile prints the RLS with the subquery, an uncorrelated IN as = ANY (ARRAY(…))', async () => {
      const r = await t.rest(['policy', 'compile', '--table', 'tasks', '--role', 'app']);
      expect(r.code).toBe(0);
      expect(r.stdout).toContain(
        '("team_id" = ANY (ARRAY(SELECT "members"."team_id" FROM "members" WHERE ("members"."user_id" = (select nullif(current_setting(\'rest.user_id\', true), \'\')::bigint)))))',
      );
    });
  });
});
