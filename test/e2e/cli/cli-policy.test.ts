// `rest policy explain` and `rest policy compile` through the built binary on every database:
// the resolution trace, the parsed expression, the predicate bound for the stored user (by id or
// name) or some admin, the RLS DDL on PostgreSQL and the decision; `--row` judged on the stored
// row; broken stored rows marked in explain and `auth policy list`; the DDL is valid PostgreSQL;
// error paths exit 1 or 2 quoting the value they reject.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DialectName } from '../../../compiler/types.js';
import { ALL_KINDS, isAvailable, withPg } from '../../support/databases.js';
import { EXAMPLE_TABLES_DDL, openCliDatabase, suiteName, type CliDatabase } from './cli-fixtures.js';
import { runCliProcess } from './run-cli.js';

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

/** `notes` for --row (its rows and policies are this file's own); `logs` has no primary key. */
const ROW_TABLES_DDL: readonly string[] = [
  'CREATE TABLE notes (id integer PRIMARY KEY, user_id integer, title varchar(100))',
  "INSERT INTO notes (id, user_id, title) VALUES (1, 2, 'mine'), (2, 3, 'x'), (3, NULL, 'public')",
  'CREATE TABLE logs (msg varchar(50))',
];
const NOTES_READ = "user_id = auth_user.id or (title = 'public' and auth_user.is_authenticated)";

/** The conditions of `--row` in JSON, reduced to what a test compares. */
interface Condition {
  readonly policy_id?: number;
  readonly expression: string;
  readonly value: boolean | null;
  readonly decides: boolean;
  readonly error?: string;
  readonly parts: readonly Condition[];
}
const leaf = (expression: string, value: boolean | null, decides = false): Condition => ({
  expression,
  value,
  decides,
  parts: [],
});

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
      for (const ddl of [...EXAMPLE_TABLES_DDL, ...ROW_TABLES_DDL]) await t.adapter.exec(ddl);
      const setup = await t.rest(['auth', 'setup']);
      expect(setup.code).toBe(0);
      // Stored users: the admin of setup is 1, bob 2, alice 3.
      for (const name of ['bob', 'alice']) {
        expect((await t.rest(['auth', 'user', 'add', name, 'password123', 'false'])).code).toBe(0);
      }
    });
    afterAll(async () => {
      await t?.close();
    });

    const explain = (...args: string[]) => t.rest([...PORTABLE[kind], 'policy', 'explain', ...args]);

    it('explains the default owner policy for a logged-in user as a filter bound to their id', async () => {
      const r = await explain('todos', 'read', '--user', '2');
      expect(r.code).toBe(0);
      expect(r.stderr).toBe('');
      expect(r.stdout).toMatch(/^Request: read on table 'todos' by user 2 'bob' \(not admin\), /);
      expect(r.stdout).toMatch(/level: no row for table 'todos'; falling back to table_name 'all'/);
      expect(r.stdout).toMatch(
        / 3 +all +all +yes +ok +user_id = auth_user\.id +chosen \(level all, action all\)/,
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
          /^Request: read on table 'todos' by user 2 'bob' \(not admin\), postgres \(row-level security on\)\n/,
        );
        expect(decisionLine(r.stdout)).toBe(
          "Decision: filter by row-level security (\"user_id\" = (select nullif(current_setting('rest.user_id', true), '')::bigint))",
        );
        expect(r.stdout).toMatch(
          /\n {2}session settings: rest\.user_id='2' .*rest\.action='read' rest\.table='todos'\n$/,
        );
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

    it('takes is_admin from the stored user: the admin of setup is allowed on auth_users, bob gets 403', async () => {
      const admin = await explain('auth_users', 'update', '--user', '1');
      expect(admin.stdout).toMatch(/^Request: update on table 'auth_users' by user 1 'admin' \(admin\), /);
      expect(decisionLine(admin.stdout)).toBe('Decision: allow');
      expect(decisionLine((await explain('auth_users', 'update', '--user', '2')).stdout)).toBe(
        'Decision: deny 403',
      );
    });

    it('loads the stored user by username too, whatever its case', async () => {
      for (const name of ['bob', 'BOB']) {
        const r = await explain('todos', 'read', '--user', name, '--json');
        expect(r.code).toBe(0);
        expect(JSON.parse(r.stdout).user).toEqual({
          id: 2,
          username: 'bob',
          is_admin: false,
          is_authenticated: true,
          claims: { user_id: 2, is_admin: false, username: 'bob' },
        });
      }
    });

    it('--claims alone decides for the caller of a token from another system (the built binary)', async () => {
      const rest = (...args: string[]) =>
        runCliProcess(['-db.url', t.db.url, ...PORTABLE[kind], 'policy', 'explain', ...args]);
      const r = await rest('todos', 'read', '--claims', '{"user_id":2}');
      expect(r.stderr).toBe('');
      expect(r.code).toBe(0);
      expect(decisionLine(r.stdout)).toMatch(/^Decision: filter .*\[2\]$/);
      const json = JSON.parse(
        (await rest('todos', 'read', '--claims', '{"user_id":"9","is_admin":true,"org":3}', '--json')).stdout,
      );
      // As such a token is judged: the id from user_id, is_admin only when true, every claim kept.
      expect(json.user).toEqual({
        id: 9,
        username: null,
        is_admin: true,
        is_authenticated: true,
        claims: { user_id: '9', is_admin: true, org: 3 },
      });
      expect(json.decision).toMatchObject({ kind: 'filter' });
      const refused = await rest('todos', 'read', '--claims', '{"user_id":"x"}');
      expect(refused.code).toBe(1);
      expect(refused.stdout).toBe('');
      expect(refused.stderr).toMatch(/would be refused as a token \(user_id claim is not an integer\)/);
    });

    it('--admin alone decides for some admin: allowed by is_admin, no id to match an owner column', async () => {
      const users = await explain('auth_users', 'read', '--admin');
      expect(users.code).toBe(0);
      expect(users.stdout).toMatch(
        /^Request: read on table 'auth_users' by some admin \(no particular user id/,
      );
      expect(decisionLine(users.stdout)).toBe('Decision: allow');
      const todos = JSON.parse((await explain('todos', 'read', '--admin', '--json')).stdout);
      expect(todos.user).toEqual({
        id: null,
        username: null,
        is_admin: true,
        is_authenticated: true,
        claims: { is_admin: true },
      });
      expect(todos.decision).toMatchObject({ kind: 'deny', status: 403 });
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
        username: 'bob',
        is_admin: false,
        is_authenticated: true,
        claims: { user_id: 2, is_admin: false, username: 'bob' },
      });

      const anonymous = JSON.parse((await explain('todos', 'read', '--json')).stdout);
      expect(anonymous.decision.kind).toBe('filter');
      // Booleans are bound as 1/0 on SQLite (no boolean type).
      expect(anonymous.decision.values).toEqual([kind === 'sqlite' ? 0 : false, 'public']);

      const del = JSON.parse((await explain('todos', 'delete', '--user', '2', '--json')).stdout);
      expect(del).toMatchObject({ level: 'table', matched_action: 'all', expression: 'auth_user.is_admin' });
      expect(del.decision).toMatchObject({ kind: 'deny', status: 403 });
    });

    it("binds the claims given on the command line and the stored user's username", async () => {
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
            'bob',
            '--claims',
            '{"doc_id": 7, "username": "eve"}',
            '--json',
          )
        ).stdout,
      );
      expect(e.decision.kind).toBe('filter');
      expect(e.decision.values).toEqual([7, 'bob', 'bob']);
      expect(e.predicate.values).toEqual([7, 'bob', 'bob']);
      const alice = await explain('docs', 'update', '--user', '3', '--claims', '{"doc_id": 7}');
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
        /^rest: action 'reed' is not one of create, read, update, delete, read_mine$/m,
      ],
      [
        "the policy action 'all' (a request has one action)",
        ['todos', 'all'],
        2,
        /action 'all' is not one of create, read/,
      ],
      [
        'an unknown user id',
        ['todos', 'read', '--user', '99'],
        2,
        /^rest: user '99' does not exist: no user of auth_users has this id or username$/m,
      ],
      ['an unknown username', ['todos', 'read', '--user', 'nobody'], 2, /user 'nobody' does not exist/],
      ['--anonymous with --user', ['todos', 'read', '--user', '2', '--anonymous'], 1, /exclude each other/],
      [
        '--admin with --user',
        ['todos', 'read', '--user', '2', '--admin'],
        1,
        /--user and --admin exclude each other/,
      ],
      [
        '--claims alone without a user_id (such a token is refused)',
        ['todos', 'read', '--claims', '{"org_id": 7}'],
        1,
        /^rest: --claims '\{"org_id":7\}' would be refused as a token \(user_id claim is missing\)/m,
      ],
      [
        '--claims with --anonymous',
        ['todos', 'read', '--anonymous', '--claims', '{"user_id": 2}'],
        1,
        /--anonymous and --claims exclude each other/,
      ],
      [
        '--claims that is not a JSON object',
        ['todos', 'read', '--user', '2', '--claims', '[1]'],
        1,
        /--claims '\[1\]' is not a JSON object/,
      ],
      [
        '--row of an unknown row',
        ['todos', 'read', '--user', '2', '--row', '999'],
        2,
        /^rest: row '999' does not exist in table 'todos'/m,
      ],
      [
        '--row that is not a key of the table',
        ['todos', 'read', '--user', '2', '--row', 'abc'],
        2,
        /^rest: --row 'abc' is not a key of table 'todos': id must be an integer/m,
      ],
      [
        '--row with create',
        ['todos', 'create', '--user', '2', '--row', '1'],
        1,
        /--row does not apply to create/,
      ],
      [
        '--row on a table without a primary key',
        ['logs', 'read', '--row', '1'],
        2,
        /table 'logs' has no primary key/,
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

    describe('--row: the stored row judged by the database for the user', () => {
      let readId = 0;
      beforeAll(async () => {
        const r = await t.rest([
          'auth',
          'policy',
          'add',
          'notes',
          'read',
          NOTES_READ,
          'own or public',
          '--json',
        ]);
        readId = JSON.parse(r.stdout).id;
        expect(
          (await t.rest(['auth', 'policy', 'add', 'notes', 'update', 'user_id = auth_user.id', 'own'])).code,
        ).toBe(0);
      });
      const rowOf = async (...args: string[]) => {
        const r = await explain('notes', ...args, '--json');
        expect(r.code, r.stderr).toBe(0);
        return JSON.parse(r.stdout).row;
      };
      /** The two arms of NOTES_READ and the parts of its AND, with these values and nothing marked as deciding. */
      const readParts = (
        mine: boolean | null,
        publicAnd: boolean | null,
        title: boolean | null,
        authenticated: boolean | null,
      ): Condition[] => [
        leaf('user_id = auth_user.id', mine),
        {
          expression: "title = 'public' and auth_user.is_authenticated",
          value: publicAnd,
          decides: false,
          parts: [leaf("title = 'public'", title), leaf('auth_user.is_authenticated', authenticated)],
        },
      ];

      it("is visible to its owner, decided by the owner arm: the stored values and every part's value", async () => {
        const row = await rowOf('read', '--user', 'bob', '--row', '1');
        expect(row).toMatchObject({
          table: 'notes',
          key: { column: 'id', value: '1' },
          values: { user_id: 2, title: 'mine' },
          allowed: true,
          value: true,
          evaluated: true,
          verdict: `visible to user 2: policy #${readId} is TRUE for it`,
        });
        // The owner arm settles the OR; inside the FALSE AND, its FALSE part settles the AND.
        expect(row.conditions).toEqual([
          {
            policy_id: readId,
            expression: "user_id = auth_user.id or title = 'public' and auth_user.is_authenticated",
            value: true,
            decides: true,
            parts: [
              leaf('user_id = auth_user.id', true, true),
              {
                expression: "title = 'public' and auth_user.is_authenticated",
                value: false,
                decides: false,
                parts: [leaf("title = 'public'", false, true), leaf('auth_user.is_authenticated', true)],
              },
            ],
          },
        ]);
      });

      it("is not visible to another user: every arm is FALSE, the AND's FALSE part decides it (text)", async () => {
        const r = await explain('notes', 'read', '--user', '2', '--row', '2');
        expect(r.code).toBe(0);
        expect(r.stdout.slice(r.stdout.indexOf('\nRow '))).toBe(
          [
            '',
            "Row id = '2' of table 'notes':",
            '  not visible to user 2: every chosen policy is FALSE for it',
            "  stored values the policy reads: user_id = 3, title = 'x'",
            '  evaluated on the row by the database:',
            '  FALSE  (the chosen policies, OR-ed)',
            `  FALSE    #${readId} user_id = auth_user.id or title = 'public' and auth_user.is_authenticated`,
            '  FALSE      user_id = auth_user.id',
            "  FALSE      title = 'public' and auth_user.is_authenticated",
            "  FALSE        title = 'public'   ← decides",
            '  TRUE         auth_user.is_authenticated',
            "  (NULL is SQL's unknown: it allows nothing, like FALSE)",
            '',
          ].join('\n'),
        );
      });

      it('is visible through the public arm when the owner arm is unknown (NULL owner)', async () => {
        const row = await rowOf('read', '--user', 'alice', '--row', '3');
        expect(row.allowed).toBe(true);
        const parts = readParts(null, true, true, true);
        expect(row.conditions[0].parts).toEqual([parts[0], { ...parts[1], decides: true }]);
      });

      it('is not visible to an anonymous user: denied before any SQL, the arms NULL and FALSE', async () => {
        const row = await rowOf('read', '--row', '3');
        expect(row.allowed).toBe(false);
        expect(row.verdict).toMatch(
          /^not visible to an anonymous user: the request is denied before any SQL \(deny 401\)/,
        );
        const parts = readParts(null, false, true, false);
        expect(row.conditions[0]).toMatchObject({ value: null, decides: true });
        expect(row.conditions[0].parts).toEqual([
          { ...parts[0], decides: true },
          {
            ...parts[1],
            parts: [leaf("title = 'public'", true), leaf('auth_user.is_authenticated', false, true)],
          },
        ]);
      });

      it('says whether an update may change the row, and that the changed row must still pass', async () => {
        const own = await rowOf('update', '--user', 'bob', '--row', '1');
        expect(own).toMatchObject({ allowed: true, values: { user_id: 2 } });
        expect(own.verdict).toMatch(
          /^changeable by user 2: policy #\d+ is TRUE for it; the changed row must still make the policy TRUE$/,
        );
        const other = await rowOf('update', '--user', 'bob', '--row', '2');
        expect(other).toMatchObject({ allowed: false, value: false });
        expect(other.verdict).toBe('not changeable by user 2: every chosen policy is FALSE for it');
      });

      onPostgres('with native RLS the row is judged the same, by the compiled WHERE predicate', async () => {
        const r = await t.rest(['policy', 'explain', 'notes', 'read', '--user', 'bob', '--row', '1']);
        expect(r.stdout).toContain(
          '  evaluated on the row by the database (as the compiled WHERE predicate, which means what the RLS policy means):\n',
        );
        expect(r.stdout).toContain(`\n  visible to user 2: policy #${readId} is TRUE for it\n`);
      });
    });

    describe('broken stored policies (written by hand in the database)', () => {
      beforeAll(async () => {
        await t.adapter.exec(
          "INSERT INTO auth_policies (table_name, action, expression, description) VALUES ('notes', 'read', 'user_id = = 1', 'by hand'), ('notes', 'update', 'owner = auth_user.id', 'by hand'), ('notes', 'write', '', 'by hand')",
        );
      });
      afterAll(async () => {
        await t.adapter.exec("DELETE FROM auth_policies WHERE description = 'by hand'");
      });

      it('auth policy list marks each with its error, in the table and in JSON', async () => {
        const r = await t.rest(['auth', 'policy', 'list']);
        expect(r.code).toBe(0);
        expect(r.stdout).toMatch(
          /^ *\d+ +notes +read +user_id = = 1 +\* +by hand +BROKEN: expected a column, auth_user\.<attr> or a literal at 1:11, found '='$/m,
        );
        expect(r.stdout).toMatch(
          /^ *\d+ +notes +update +owner = auth_user\.id +\* +by hand +BROKEN: column 'owner' does not exist in table 'notes' at 1:1$/m,
        );
        expect(r.stdout).toMatch(
          /^ *\d+ +notes +write +\* +by hand +BROKEN: action 'write' is not one of create, read, update, delete, read_mine, all$/m,
        );
        expect(r.stdout).toMatch(
          /^ *\d+ +notes +read +user_id = auth_user\.id or .* +\* +own or public +ok$/m,
        );
        const listed = JSON.parse((await t.rest(['auth', 'policy', 'list', '--json'])).stdout) as Array<{
          readonly description: string;
          readonly broken: boolean;
          readonly error: string | null;
        }>;
        expect(listed.filter((p) => p.broken).map((p) => p.error)).toEqual([
          "expected a column, auth_user.<attr> or a literal at 1:11, found '='",
          "column 'owner' does not exist in table 'notes' at 1:1",
          "action 'write' is not one of create, read, update, delete, read_mine, all",
        ]);
        expect(
          listed.filter((p) => p.description !== 'by hand').every((p) => !p.broken && p.error === null),
        ).toBe(true);
      });

      it('explain shows a broken candidate with its error; the valid row still decides', async () => {
        const r = await explain('notes', 'read', '--user', 'bob', '--row', '1');
        expect(r.code).toBe(0);
        expect(r.stdout).toMatch(/^ *\d+ +notes +read +yes +BROKEN +user_id = = 1 /m);
        expect(r.stdout).toMatch(
          /\nBroken policies \(each allows nothing until it is fixed\):\n {2}#\d+: expected a column, auth_user\.<attr> or a literal at 1:11, found '='\n {2}#\d+: column 'owner' does not exist in table 'notes' at 1:1\n {2}#\d+: action 'write' is not one of/,
        );
        expect(r.stdout).toMatch(
          /\n {2}FALSE {4}#\d+ BROKEN, counts as FALSE: expected a column, auth_user\.<attr> or a literal at 1:11, found '='\n/,
        );
        expect(decisionLine(r.stdout)).toMatch(/^Decision: filter /);
        const e = JSON.parse((await explain('notes', 'read', '--user', 'bob', '--json')).stdout);
        const broken = e.candidates.find((c: { expression: string }) => c.expression === 'user_id = = 1');
        expect(broken).toMatchObject({
          chosen: true,
          broken: true,
          parsed: null,
          error: expect.stringMatching(/at 1:11/),
        });
      });

      it('a chosen row naming a missing column denies the request with 403 naming it', async () => {
        const r = await explain('notes', 'update', '--user', 'bob', '--row', '1');
        expect(r.code).toBe(0);
        expect(r.stdout).toMatch(/^ *\d+ +notes +update +yes +BROKEN +owner = auth_user\.id /m);
        expect(decisionLine(r.stdout)).toBe('Decision: deny 403');
        expect(r.stdout).toContain(
          "\n  not changeable by user 2: the policy names column 'owner', which the table lacks\n",
        );
        const e = JSON.parse(
          (await explain('notes', 'update', '--user', 'bob', '--row', '1', '--json')).stdout,
        );
        expect(e.row).toMatchObject({
          allowed: false,
          value: null,
          evaluated: false,
          values: {},
          conditions: [],
        });
      });
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
      for (const table of ['auth_policies', 'docs', 'todos']) {
        expect(all.stdout).toContain(
          `-- table "${table}"\nALTER TABLE "${table}" ENABLE ROW LEVEL SECURITY;\n`,
        );
      }
      // No request reads the secret columns of auth_users: column privileges withhold them.
      expect(all.stdout).toContain(
        `-- table "auth_users"\nREVOKE ALL ON "auth_users" FROM "${role}";\n` +
          `GRANT SELECT ("id", "username", "is_admin"), INSERT, UPDATE, DELETE ON "auth_users" TO "${role}";\n` +
          `ALTER TABLE "auth_users" ENABLE ROW LEVEL SECURITY;\n`,
      );
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

    it('accepts a policy that lets non-admins update auth_users, warning that id, password and is_admin stay admin-only (docs/authentication.md)', async () => {
      const added = await t.rest([
        'auth',
        'policy',
        'add',
        'auth_users',
        'update',
        'id = auth_user.id or auth_user.is_admin',
        'users rename themselves',
      ]);
      expect(added.code, added.stderr).toBe(0);
      expect(added.stderr).toMatch(
        /^rest: warning: this policy lets users who are not admins update rows of auth_users, but id, password, is_admin stay admin-only/,
      );
      const id = Number(/added policy ([0-9]+)/.exec(added.stdout)?.[1]);
      try {
        const bob = await explain('auth_users', 'update', '--user', '2');
        expect(bob.code).toBe(0);
        expect(bob.stdout).toMatch(
          /\n {2}warning: this policy lets users who are not admins update rows of auth_users/,
        );
        const json = JSON.parse((await explain('auth_users', 'update', '--user', '2', '--json')).stdout);
        expect(json.warnings).toHaveLength(1);
        // Reads are not writes; an admin-only policy lets no non-admin write.
        expect(
          JSON.parse((await explain('auth_users', 'read', '--user', '2', '--json')).stdout).warnings,
        ).toEqual([]);
        const adminOnly = await t.rest([
          'auth',
          'policy',
          'add',
          'auth_users',
          'create',
          'auth_user.is_admin',
          'admins add users',
        ]);
        expect(adminOnly.code, adminOnly.stderr).toBe(0);
        expect(adminOnly.stderr).toBe('');
        const second = Number(/added policy ([0-9]+)/.exec(adminOnly.stdout)?.[1]);
        await t.adapter.exec(`DELETE FROM auth_policies WHERE id = ${second}`);
      } finally {
        await t.adapter.exec(`DELETE FROM auth_policies WHERE id = ${id}`);
      }
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
