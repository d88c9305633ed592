// `rest policy explain` and `rest policy compile` through the built binary on every database:
// the resolution trace, the parsed expression, the predicate bound for the user, the RLS DDL on
// PostgreSQL and the decision; the DDL is valid PostgreSQL; error paths exit 1 or 2.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DialectName } from '../../../compiler/types.js';
import { ALL_KINDS, isAvailable, withPg } from '../../support/databases.js';
import { EXAMPLE_TABLES_DDL, openCliDatabase, suiteName, type CliDatabase } from './cli-fixtures.js';

/** The owner predicate of the default policy as each database gets it for user 2 (portable path). */
const OWNER_FILTER: Readonly<Record<DialectName, string>> = {
  sqlite: 'filter ("user_id" = ?) [2]',
  postgres: 'filter ("user_id" = $1::bigint) [2]',
  mysql: 'filter (`user_id` = ?) [2]',
};
/** PostgreSQL defaults to native RLS; these flags select the portable path on every database. */
const PORTABLE: Readonly<Record<DialectName, readonly string[]>> = {
  sqlite: [],
  postgres: ['-db.rls', 'off'],
  mysql: [],
};

const decisionLine = (stdout: string): string | undefined =>
  stdout.split('\n').find((l) => l.startsWith('Decision: '));

describe.each(ALL_KINDS)('%s', (kind) => {
  describe.skipIf(!isAvailable(kind))(suiteName('rest policy', kind), () => {
    // PostgreSQL-only behaviour is registered only where it applies (no skipped cases elsewhere).
    const onPostgres: typeof it = ((...args: Parameters<typeof it>) => {
      if (kind === 'postgres') it(...args);
    }) as typeof it;
    let t: CliDatabase;
    beforeAll(async () => {
      t = await openCliDatabase(kind);
      for (const ddl of EXAMPLE_TABLES_DDL) await t.adapter.exec(ddl);
      const setup = await t.rest(['auth', 'setup']);
      expect(setup.code).toBe(0);
    });
    afterAll(async () => {
      await t?.close();
    });

    const explain = (...args: string[]) => t.rest([...PORTABLE[kind], 'policy', 'explain', ...args]);

    it('explains the default owner policy for a logged-in user as a filter bound to their id', async () => {
      const r = await explain('todos', 'read', '--user', '2');
      expect(r.code).toBe(0);
      expect(r.stderr).toBe('');
      expect(r.stdout).toMatch(/^Request: read on table 'todos' by user 2 \(not admin\), /);
      expect(r.stdout).toMatch(/level: no row for table 'todos'; falling back to table_name 'all'/);
      expect(r.stdout).toMatch(
        / 3 +all +all +yes +user_id = auth_user\.id +chosen \(level all, action all\)/,
      );
      expect(r.stdout).not.toMatch(/auth_users/);
      expect(r.stdout).toContain('  #3: user_id = auth_user.id\n');
      expect(r.stdout).toContain('    =\n      column user_id\n      auth_user.id\n');
      expect(r.stdout).toContain(`values: [2]`);
      expect(decisionLine(r.stdout)).toBe(`Decision: ${OWNER_FILTER[kind]}`);
    });

    onPostgres(
      'with -db.rls on (the PostgreSQL default) the filter is the RLS policy reading session settings',
      async () => {
        const r = await t.rest(['policy', 'explain', 'todos', 'read', '--user', '2']);
        expect(r.stdout).toMatch(
          /^Request: read on table 'todos' by user 2 \(not admin\), postgres \(row-level security on\)\n/,
        );
        expect(decisionLine(r.stdout)).toBe(
          "Decision: filter by row-level security (\"user_id\" = (select nullif(current_setting('rest.user_id', true), '')::bigint))",
        );
        expect(r.stdout).toMatch(/\n {2}session settings: rest\.user_id='2' .*rest\.action='read' rest\.table='todos'\n$/);
        const e = JSON.parse(
          (await t.rest(['policy', 'explain', 'todos', 'read', '--user', '2', '--json'])).stdout,
        );
        expect(e.native_rls).toBe(true);
        expect(e.decision.enforced_by).toBe('rls');
        expect(e.decision.settings).toContainEqual({ name: 'rest.user_id', value: '2' });
      },
    );

    it('denies an anonymous request on an owner policy with 401 (the default user)', async () => {
      for (const args of [
        ['todos', 'read'],
        ['todos', 'read', '--anonymous'],
      ]) {
        const r = await explain(...args);
        expect(r.code).toBe(0);
        expect(r.stdout).toMatch(/by anonymous/);
        expect(r.stdout).toContain('values: [null]');
        expect(decisionLine(r.stdout)).toBe('Decision: deny 401');
      }
    });

    it('allows an admin and denies a non-admin with 403 on auth_users', async () => {
      expect(decisionLine((await explain('auth_users', 'update', '--user', '1', '--admin')).stdout)).toBe(
        'Decision: allow',
      );
      expect(decisionLine((await explain('auth_users', 'update', '--user', '2')).stdout)).toBe(
        'Decision: deny 403',
      );
    });

    it('denies with 403 naming the column when the policy names one the table lacks', async () => {
      const r = await explain('docs', 'read', '--user', '2');
      expect(r.stdout).toMatch(/missing columns: 'user_id'/);
      expect(decisionLine(r.stdout)).toBe('Decision: deny 403');
      expect(r.stdout).toMatch(/names column 'user_id', which table 'docs' lacks/);
      expect(decisionLine((await explain('docs', 'read')).stdout)).toBe('Decision: deny 401');
    });

    it('shows a table level beating all, an action beating all, and OR-ed rows', async () => {
      for (const [action, expression] of [
        ['read', 'auth_user.is_authenticated'],
        ['read', "title = 'public'"],
        ['all', 'auth_user.is_admin'],
      ] as const) {
        expect((await t.rest(['auth', 'policy', 'add', 'todos', action, expression, 'test'])).code).toBe(0);
      }
      const read = await explain('todos', 'read', '--user', '2', '--json');
      expect(read.code).toBe(0);
      const e = JSON.parse(read.stdout);
      expect(e).toMatchObject({
        database: kind,
        table: 'todos',
        action: 'read',
        level: 'table',
        matched_action: 'read',
      });
      expect(e.expression).toBe("auth_user.is_authenticated or title = 'public'");
      expect(e.ast.kind).toBe('or');
      expect(e.decision).toEqual({
        kind: 'allow',
        reason: 'auth_user alone makes the expression TRUE, whatever the row',
      });
      expect(e.candidates.map((c: { id: number; chosen: boolean }) => [c.id, c.chosen])).toEqual([
        [4, true],
        [5, true],
        [6, false],
        [3, false],
      ]);
      expect(e.candidates[2].reason).toBe("action 'read' rows beat action 'all'");
      expect(e.user).toEqual({
        id: 2,
        username: null,
        is_admin: false,
        is_authenticated: true,
        claims: { user_id: 2, is_admin: false },
      });

      const anonymous = JSON.parse((await explain('todos', 'read', '--json')).stdout);
      expect(anonymous.decision.kind).toBe('filter');
      // Booleans are bound as 1/0 on SQLite (no boolean type).
      expect(anonymous.decision.values).toEqual([kind === 'sqlite' ? 0 : false, 'public']);

      const del = JSON.parse((await explain('todos', 'delete', '--user', '2', '--json')).stdout);
      expect(del).toMatchObject({ level: 'table', matched_action: 'all', expression: 'auth_user.is_admin' });
      expect(del.decision).toMatchObject({ kind: 'deny', status: 403 });
    });

    it('binds claims and the username given on the command line', async () => {
      expect(
        (
          await t.rest([
            'auth',
            'policy',
            'add',
            'docs',
            'update',
            "id = auth_user.claims.doc_id and auth_user.username = 'bob'",
            'x',
          ])
        ).code,
      ).toBe(0);
      const e = JSON.parse(
        (
          await explain(
            'docs',
            'update',
            '--user',
            '2',
            '--username',
            'bob',
            '--claims',
            '{"doc_id": 7}',
            '--json',
          )
        ).stdout,
      );
      expect(e.decision.kind).toBe('filter');
      expect(e.decision.values).toEqual([7, 'bob', 'bob']);
      expect(e.predicate.values).toEqual([7, 'bob', 'bob']);
      const alice = await explain(
        'docs',
        'update',
        '--user',
        '2',
        '--username',
        'alice',
        '--claims',
        '{"doc_id": 7}',
      );
      expect(decisionLine(alice.stdout)).toBe('Decision: deny 403');
    });

    it('shows the RLS DDL of the table on PostgreSQL only', async () => {
      const r = await explain('todos', 'read', '--user', '2');
      if (kind === 'postgres') {
        expect(r.stdout).toContain(
          'Row-level security DDL (PostgreSQL):\n  ALTER TABLE "todos" ENABLE ROW LEVEL SECURITY;\n',
        );
        expect(r.stdout).toMatch(/CREATE POLICY "rest_todos_select" ON "todos" AS \w+ FOR SELECT/);
      } else {
        expect(r.stdout).not.toContain('Row-level security');
      }
    });

    it.each([
      ['an unknown table', ['nope', 'read'], 2, /table 'nope' does not exist/],
      [
        'an unknown action',
        ['todos', 'reed'],
        2,
        /action must be one of create, read, update, delete, read_mine/,
      ],
      ["the policy action 'all' (a request has one action)", ['todos', 'all'], 2, /action must be one of/],
      [
        'a user id that is not an integer',
        ['todos', 'read', '--user', 'abc'],
        1,
        /--user must be an integer/,
      ],
      ['--anonymous with --user', ['todos', 'read', '--user', '2', '--anonymous'], 1, /exclude each other/],
      ['--admin without --user', ['todos', 'read', '--admin'], 1, /give --user <id> too/],
      [
        '--claims that is not a JSON object',
        ['todos', 'read', '--user', '2', '--claims', '[1]'],
        1,
        /--claims must be a JSON object/,
      ],
      ['a missing action', ['todos'], 1, /Not enough non-option arguments/],
      ['an unknown option', ['todos', 'read', '--usr', '2'], 1, /Unknown argument/],
    ])('policy explain refuses %s', async (_what, args, code, message) => {
      const r = await explain(...args);
      expect(r.code).toBe(code);
      expect(r.stdout).toBe('');
      expect(r.stderr).toMatch(/^rest: [^\n]+\n$/);
      expect(r.stderr).toMatch(message);
    });

    it('policy compile prints the DDL of every table, or of one, for the request role', async () => {
      const all = await t.rest(['policy', 'compile']);
      expect(all.code).toBe(0);
      // The SQLite test file is <name>.db, so every database kind derives the same role name.
      const role = `rest_request_${t.db.name}`;
      expect(
        all.stdout.startsWith(
          `-- row-level security compiled by rest from auth_policies, for role "${role}"\n\n`,
        ),
      ).toBe(true);
      for (const table of ['auth_policies', 'auth_users', 'docs', 'todos']) {
        expect(all.stdout).toContain(
          `-- table "${table}"\nALTER TABLE "${table}" ENABLE ROW LEVEL SECURITY;\n`,
        );
      }
      expect(all.stderr).toBe(
        kind === 'postgres'
          ? ''
          : `note: PostgreSQL DDL for role "${role}" (--role to change it); on ${kind} the policies are enforced as compiled WHERE predicates\n`,
      );
      const one = await t.rest(['policy', 'compile', '--table', 'todos', '--role', 'app_user']);
      expect(one.stdout).toMatch(
        /^-- row-level security compiled by rest from auth_policies, for role "app_user"\n\n-- table "todos"\n/,
      );
      expect(one.stdout).not.toContain('"docs"');
      expect(one.stdout).toMatch(
        /CREATE POLICY "rest_todos_insert" ON "todos" AS \w+ FOR INSERT TO "app_user" WITH CHECK \(/,
      );
      const json = JSON.parse(
        (await t.rest(['policy', 'compile', '--table', 'todos', '--role', 'app_user', '--json'])).stdout,
      );
      expect(json.role).toBe('app_user');
      expect(json.tables.map((x: { table: string }) => x.table)).toEqual(['todos']);
      expect(one.stdout.split('\n\n')[1]).toBe(
        `-- table "todos"\n${json.tables[0].statements.map((s: string) => `${s};`).join('\n')}\n`,
      );
    });

    it('policy compile refuses an unknown table with exit 2', async () => {
      const r = await t.rest(['policy', 'compile', '--table', 'nope']);
      expect(r).toMatchObject({ code: 2, stdout: '' });
      expect(r.stderr).toMatch(/table 'nope' does not exist/);
    });

    onPostgres('the compiled DDL runs on PostgreSQL as printed', async () => {
      const r = await t.rest(['policy', 'compile']);
      const roles = [
        ...new Set(
          [...r.stdout.matchAll(/ TO ("[^"]+"(?:, "[^"]+")*)/g)].flatMap((m) => (m[1] ?? '').split(', ')),
        ),
      ];
      expect(roles.length).toBeGreaterThan(0);
      await withPg(t.db.url, async (c) => {
        await c.query('BEGIN');
        try {
          // Roles are cluster-wide: created inside this transaction, they vanish with its rollback.
          for (const role of roles) {
            const name = role.slice(1, -1);
            const exists = await c.query('SELECT 1 FROM pg_roles WHERE rolname = $1', [name]);
            if (exists.rowCount === 0) await c.query(`CREATE ROLE ${role} NOLOGIN`);
          }
          await c.query(r.stdout);
          const policies = await c.query(
            "SELECT count(*)::int AS n FROM pg_policies WHERE tablename = 'todos'",
          );
          expect(policies.rows[0].n).toBe(5);
        } finally {
          await c.query('ROLLBACK');
        }
      });
    });
  });
});
