// `--columns` of `rest auth policy add|edit` and the columns of `auth policy list` on every
// database: stored as written (`*` as NULL), validated like the expression (caret under the error,
// exit 2, nothing written), a database set up by the previous version upgraded by the first
// command that writes a policy, and the column grants `policy compile` prints for a withheld column.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ALL_KINDS, isAvailable } from '../../support/databases.js';
import { rollBackPolicyColumns } from '../../support/auth-history.js';
import { openRawSql } from '../../support/server.js';
import { EXAMPLE_TABLES_DDL, openCliDatabase, suiteName, type CliDatabase } from './cli-fixtures.js';

describe.each(ALL_KINDS)('%s', (kind) => {
  describe.skipIf(!isAvailable(kind))(suiteName('rest auth policy --columns', kind), () => {
    let t: CliDatabase;
    beforeAll(async () => {
      t = await openCliDatabase(kind, { ddl: EXAMPLE_TABLES_DDL, authSetup: true });
    });
    afterAll(async () => {
      await t?.close();
    });

    const storedColumns = async (id: number): Promise<unknown> =>
      (await t.adapter.query({ text: `SELECT columns FROM auth_policies WHERE id = ${id}`, values: [] }))
        .rows[0]?.['columns'];
    const add = (columns: string) =>
      t.rest(['auth', 'policy', 'add', 'todos', 'read', '', 'column rule', '--columns', columns, '--json']);

    it('a database set up by the previous version gains the column when a policy is added', async () => {
      const sql = await openRawSql(t.db);
      try {
        await rollBackPolicyColumns(sql, kind);
        // Read-only commands work on it as it is: every row grants every column.
        const listed = await t.rest(['auth', 'policy', 'list', '--json']);
        expect(listed.code, listed.stderr).toBe(0);
        expect((JSON.parse(listed.stdout) as Array<{ columns: unknown }>).map((p) => p.columns)).toEqual([
          null,
          null,
          null,
        ]);
        const r = await add('id, title');
        expect(r.code, r.stderr).toBe(0);
        expect(JSON.parse(r.stdout)).toMatchObject({ table_name: 'todos', columns: 'id, title' });
        expect(await sql.rows('SELECT id, columns FROM auth_policies ORDER BY id')).toMatchObject([
          { columns: null },
          { columns: null },
          { columns: null },
          { columns: 'id, title' },
        ]);
      } finally {
        await sql.close();
      }
    });

    it('add stores the rule; list shows it, * for every column, in the table and as JSON', async () => {
      const r = await t.rest([
        'auth',
        'policy',
        'add',
        'todos',
        'read',
        '',
        'no owner',
        '--columns',
        '* except (user_id)',
      ]);
      expect(r).toMatchObject({ code: 0, stderr: '' });
      expect(r.stdout).toMatch(/^added policy \d+: todos read '' columns '\* except \(user_id\)'\n$/);
      const table = await t.rest(['auth', 'policy', 'list']);
      const lines = table.stdout.split('\n');
      expect(lines[0]).toMatch(/^id +table_name +action +expression +columns +description +status$/);
      expect(lines[2]).toMatch(/^ 1 +auth_users +all +auth_user\.is_admin +\* +users operations/);
      expect(lines[6]).toMatch(/^ 5 +todos +read +\* except \(user_id\) +no owner +ok$/);
      const json = JSON.parse((await t.rest(['auth', 'policy', 'list', '--json'])).stdout) as Array<{
        id: number;
        columns: string | null;
      }>;
      expect(json.map((p) => p.columns)).toEqual([null, null, null, 'id, title', '* except (user_id)']);
    });

    it('an unknown column is echoed with a caret under it; exit 2, nothing written', async () => {
      const before = await t.count('auth_policies');
      const r = await t.rest(['auth', 'policy', 'add', 'todos', 'read', '', 'x', '--columns', 'id, nope']);
      expect(r.code).toBe(2);
      expect(r.stdout).toBe('');
      expect(r.stderr).toBe(
        "  id, nope\n      ^\nrest: columns: column 'nope' does not exist in table 'todos' at 1:5\n",
      );
      const syntax = await t.rest([
        'auth',
        'policy',
        'add',
        'todos',
        'read',
        '',
        'x',
        '--columns',
        'id,, title',
      ]);
      expect(syntax.code).toBe(2);
      expect(syntax.stderr).toMatch(
        /^ {2}id,, title\n {5}\^\nrest: columns: expected a column name at 1:4, found ','\n$/,
      );
      expect(await t.count('auth_policies')).toBe(before);
    });

    it('a rule for table all ignores names a table lacks', async () => {
      const r = await t.rest([
        'auth',
        'policy',
        'add',
        'all',
        'read',
        '',
        'x',
        '--columns',
        'id, nope',
        '--json',
      ]);
      expect(r.code, r.stderr).toBe(0);
      const { id } = JSON.parse(r.stdout) as { id: number };
      expect(await storedColumns(id)).toBe('id, nope');
      expect((await t.rest(['auth', 'policy', 'remove', String(id)])).code).toBe(0);
    });

    it('list marks a stored rule that names a missing column (edited by hand) as broken', async () => {
      await t.adapter.exec(
        "INSERT INTO auth_policies (table_name, action, expression, description, columns) VALUES ('todos', 'delete', '', 'by hand', 'id, gone')",
      );
      try {
        const r = await t.rest(['auth', 'policy', 'list']);
        expect(r.stdout).toMatch(
          /^ *\d+ +todos +delete +id, gone +by hand +BROKEN: columns: column 'gone' does not exist in table 'todos' at 1:5$/m,
        );
      } finally {
        await t.adapter.exec("DELETE FROM auth_policies WHERE description = 'by hand'");
      }
    });

    it('policy explain lists the readable, masked and hidden columns with the deciding condition', async () => {
      const ids: string[] = [];
      for (const [expression, columns] of [
        ['', 'id'],
        ['id = auth_user.id', '*'],
      ] as const) {
        const r = await t.rest([
          'auth',
          'policy',
          'add',
          'docs',
          'read',
          expression,
          'x',
          '--columns',
          columns,
          '--json',
        ]);
        ids.push(String((JSON.parse(r.stdout) as { id: number }).id));
      }
      try {
        const portable = kind === 'postgres' ? ['-db.rls', 'off'] : [];
        const caller = await t.rest([
          ...portable,
          'policy',
          'explain',
          'docs',
          'read',
          '--claims',
          '{"user_id": 7}',
        ]);
        expect(caller.code, caller.stderr).toBe(0);
        const section = caller.stdout.split('\n\n').find((p) => p.startsWith('Columns for this user'));
        expect(section).toBe(
          [
            'Columns for this user (docs/policy-language.md "Columns"):',
            '  read: id',
            `  read masked (NULL in the other rows): title when id = auth_user.id (#${ids[1]})`,
            '  create: none (the create itself is denied)',
            '  update: none (the update itself is denied)',
          ].join('\n'),
        );
        const anonymous = await t.rest([
          ...portable,
          'policy',
          'explain',
          'docs',
          'read',
          '--anonymous',
          '--json',
        ]);
        expect(JSON.parse(anonymous.stdout)).toMatchObject({
          columns: { read: { denied: false, readable: ['id'], masked: [], hidden: ['title'] } },
        });
      } finally {
        for (const id of ids) await t.rest(['auth', 'policy', 'remove', id]);
      }
    });

    it("edit --columns changes the rule, validated against the row's table; '*' resets it to every column", async () => {
      const r = await add('title');
      const { id } = JSON.parse(r.stdout) as { id: number };
      const refused = await t.rest([
        'auth',
        'policy',
        'edit',
        String(id),
        '--table',
        'docs',
        '--columns',
        'user_id',
      ]);
      expect(refused.code).toBe(2);
      expect(refused.stderr).toBe(
        "  user_id\n  ^\nrest: columns: column 'user_id' does not exist in table 'docs' at 1:1\n",
      );
      expect(await storedColumns(id)).toBe('title');
      const edited = await t.rest(['auth', 'policy', 'edit', String(id), '--columns', 'id, user_id']);
      expect(edited).toMatchObject({ code: 0, stderr: '' });
      expect(edited.stdout).toBe(`changed policy ${id}: todos read '' columns 'id, user_id'\n`);
      const reset = await t.rest(['auth', 'policy', 'edit', String(id), '--columns', '*', '--json']);
      expect(JSON.parse(reset.stdout)).toMatchObject({ id, columns: null });
      expect(await storedColumns(id)).toBeNull();
      // Another field changed keeps the stored rule.
      await t.rest(['auth', 'policy', 'edit', String(id), '--columns', 'id']);
      await t.rest(['auth', 'policy', 'edit', String(id), '--description', 'renamed']);
      expect(await storedColumns(id)).toBe('id');
    });

    it('policy compile prints the column grants of a table whose column rules withhold a column', async () => {
      await t.adapter.exec('CREATE TABLE notes (id integer PRIMARY KEY, user_id integer, body varchar(100))');
      const ids: string[] = [];
      try {
        for (const action of ['read', 'read_mine']) {
          const r = await t.rest([
            'auth',
            'policy',
            'add',
            'notes',
            action,
            'user_id = auth_user.id',
            'no bodies',
            '--columns',
            'id, user_id',
            '--json',
          ]);
          expect(r.code, r.stderr).toBe(0);
          ids.push(String((JSON.parse(r.stdout) as { id: number }).id));
        }
        const compiled = await t.rest(['policy', 'compile', '--table', 'notes', '--role', 'app_user']);
        expect(compiled.code, compiled.stderr).toBe(0);
        expect(compiled.stdout).toContain(
          '-- table "notes"\nREVOKE ALL ON "notes" FROM "app_user";\n' +
            'GRANT SELECT ("id", "user_id"), INSERT, UPDATE, DELETE ON "notes" TO "app_user";\n' +
            'ALTER TABLE "notes" ENABLE ROW LEVEL SECURITY;\n',
        );
      } finally {
        for (const id of ids) await t.rest(['auth', 'policy', 'remove', id]);
      }
      // Without the rules the table keeps its table-wide grant: no column grant is printed.
      const plain = await t.rest(['policy', 'compile', '--table', 'notes', '--role', 'app_user']);
      expect(plain.stdout).not.toContain('GRANT SELECT (');
    });
  });
});
