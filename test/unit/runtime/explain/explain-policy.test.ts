// explainPolicy without a database: the decision is the one the server's authorizer takes for the
// configured path — portable (predicate, and the check judged on the rows as stored) or native
// (deny in-process, else the table's RLS policy and its WITH CHECK) — with the 401/403 rule.

import { describe, expect, it } from 'vitest';
import { postgresDialect } from '../../../../compiler/sql/postgres-dialect.js';
import { sqliteDialect } from '../../../../compiler/sql/sqlite-dialect.js';
import {
  ANONYMOUS,
  type Action,
  type AuthUser,
  type ColumnType,
  type PolicyRow,
} from '../../../../compiler/types.js';
import type { SchemaSnapshot, TableInfo } from '../../../../runtime/db/adapter.js';
import { explainPolicy, type ExplainInput } from '../../../../runtime/explain/explain-policy.js';
import { compileTablesDdl } from '../../../../runtime/rls/rls-ddl.js';
import { fakeTable } from '../../../support/fake-schema.js';

const table = (name: string, columns: Readonly<Record<string, ColumnType>>): TableInfo =>
  fakeTable(name, columns);

const user = (id: number, is_admin = false): AuthUser => ({
  id,
  username: `u${id}`,
  is_admin,
  is_authenticated: true,
  claims: { user_id: id, is_admin },
});

const SEED: readonly PolicyRow[] = [
  {
    id: 1,
    table_name: 'auth_users',
    action: 'all',
    expression: 'auth_user.is_admin',
    description: 'users',
    columns: null,
  },
  {
    id: 2,
    table_name: 'all',
    action: 'all',
    expression: 'user_id = auth_user.id',
    description: 'owner',
    columns: null,
  },
];

const notes = table('notes', { id: 'integer', user_id: 'integer', body: 'text' });
const docs = table('docs', { id: 'integer', title: 'text' });
const users = table('auth_users', { id: 'integer', username: 'text', is_admin: 'boolean' });

const SCHEMA: SchemaSnapshot = { tables: new Map([notes, docs, users].map((t) => [t.name, t])) };

const portable = (t: TableInfo, action: Action, u: AuthUser): ExplainInput => ({
  rows: SEED,
  table: t,
  schema: SCHEMA,
  action,
  user: u,
  adapter: { kind: 'sqlite', dialect: sqliteDialect },
  authEnabled: true,
  nativeRls: false,
  rlsRole: undefined,
});

const native = (t: TableInfo, action: Action, u: AuthUser): ExplainInput => ({
  ...portable(t, action, u),
  adapter: { kind: 'postgres', dialect: postgresDialect },
  nativeRls: true,
  rlsRole: 'rest_request_app',
});

const OWNER_RLS = "(\"user_id\" = (select nullif(current_setting('rest.user_id', true), '')::bigint))";

describe('explainPolicy: denials follow runtime/enforce/denials.ts', () => {
  it.each([
    ['portable', portable],
    ['native', native],
  ])('%s: an anonymous request on an owner policy is denied 401', async (_path, input) => {
    const e = await explainPolicy(input(notes, 'read', ANONYMOUS));
    expect(e.decision).toEqual({
      kind: 'deny',
      status: 401,
      reason: 'auth_user alone makes the expression FALSE or unknown, whatever the row',
      error: { code: 'unauthenticated', message: 'log in to access notes' },
    });
  });

  it.each([
    ['portable', portable],
    ['native', native],
  ])('%s: a logged-in user the policy refuses is denied 403', async (_path, input) => {
    const e = await explainPolicy(input(users, 'update', user(2)));
    expect(e.decision).toMatchObject({
      kind: 'deny',
      status: 403,
      error: { code: 'forbidden', message: 'you are not allowed to do this on auth_users' },
    });
    expect((await explainPolicy(input(users, 'update', user(1, true)))).decision).toEqual({
      kind: 'allow',
      reason: 'auth_user alone makes the expression TRUE, whatever the row',
    });
  });

  it.each([
    ['portable', portable],
    ['native', native],
  ])('%s: a policy naming a column the table lacks is denied 403 naming it', async (_path, input) => {
    const e = await explainPolicy(input(docs, 'read', user(2)));
    expect(e.missing_columns).toEqual(['user_id']);
    expect(e.decision).toEqual({
      kind: 'deny',
      status: 403,
      reason: "the policy names column 'user_id', which table 'docs' lacks",
      error: {
        code: 'policy_column_missing',
        message: "the policy for docs uses column 'user_id', which table docs does not have",
        details: { table: 'docs', column: 'user_id' },
      },
    });
    const anonymous = await explainPolicy(input(docs, 'read', ANONYMOUS));
    expect(anonymous.decision).toMatchObject({ kind: 'deny', status: 401 });
    expect(anonymous.decision.reason).toMatch(/lacks; an anonymous user is told to log in first$/);
  });
});

describe('explainPolicy: the portable path', () => {
  it('filters reads with the predicate bound for the user, without a check', async () => {
    const e = await explainPolicy(portable(notes, 'read', user(2)));
    expect(e.native_rls).toBe(false);
    expect(e.rls_ddl).toBeNull();
    expect(e.predicate).toEqual({ sql: '("user_id" = ?)', values: [2] });
    expect(e.decision).toEqual({
      kind: 'filter',
      enforced_by: 'where',
      reason: 'allowed on the rows where the predicate is TRUE',
      sql: '("user_id" = ?)',
      values: [2],
    });
  });

  it('gives create the check the database judges on the rows as stored, and fills the owner column', async () => {
    const e = await explainPolicy(portable(notes, 'create', user(2)));
    expect(e.decision).toMatchObject({ kind: 'filter', enforced_by: 'where', sql: '("user_id" = ?)' });
    if (e.decision.kind !== 'filter' || e.decision.enforced_by !== 'where') throw new Error('not a filter');
    expect(e.decision.check).toMatchObject({ sql: '("user_id" = ?)', values: [2] });
    expect(e.decision.check?.reason).toBe(
      'every new row must make it TRUE as the database stored it (defaults, coercions and triggers applied): ' +
        "the database evaluates it on each row it wrote, inside the write's transaction, and a row that fails " +
        'rolls the whole request back (deny 403 policy_check_failed); ' +
        "before that, 'user_id' left out of the body is filled with the user's id and another id is refused " +
        '(deny 403 owner_mismatch)',
    );
  });

  it('gives update a check on the changed rows, and delete none', async () => {
    const update = (await explainPolicy(portable(notes, 'update', user(2)))).decision;
    expect(update).toMatchObject({ check: { sql: '("user_id" = ?)', values: [2] } });
    expect(update.kind === 'filter' && update.check?.reason).toMatch(/^every changed row must make it TRUE/);
    expect(update.kind === 'filter' && update.check?.reason).not.toMatch(/owner_mismatch/);
    const del = (await explainPolicy(portable(notes, 'delete', user(2)))).decision;
    expect(del).toMatchObject({ kind: 'filter', enforced_by: 'where' });
    expect(del).not.toHaveProperty('check');
  });
});

describe('explainPolicy: the native path', () => {
  it("leaves the rows to the table's RLS policy, which reads auth_user from the session settings", async () => {
    const e = await explainPolicy(native(notes, 'read', user(2)));
    expect(e.native_rls).toBe(true);
    // The DDL `policy compile` prints for the table and role, as the reconciler applies it.
    expect(e.rls_ddl).toEqual(compileTablesDdl(SEED, [notes], 'rest_request_app', SCHEMA)[0]?.statements);
    expect(e.rls_ddl?.find((s) => s.startsWith('CREATE POLICY "rest_notes_select"'))).toContain(OWNER_RLS);
    expect(e.decision).toEqual({
      kind: 'filter',
      enforced_by: 'rls',
      reason: "allowed on the rows the table's row-level security policy lets through",
      sql: OWNER_RLS,
      settings: [
        { name: 'rest.user_id', value: '2' },
        { name: 'rest.username', value: '"u2"' },
        { name: 'rest.is_admin', value: 'false' },
        { name: 'rest.is_authenticated', value: 'true' },
        { name: 'rest.claims', value: '{"user_id":2,"is_admin":false}' },
        { name: 'rest.action', value: 'read' },
        { name: 'rest.table', value: 'notes' },
      ],
    });
  });

  it.each([
    [
      'create',
      'rest_notes_insert',
      /^every new row .*the WITH CHECK of policy 'rest_notes_insert' judges it.*owner_mismatch/,
    ],
    [
      'update',
      'rest_notes_update',
      /^every changed row .*the WITH CHECK of policy 'rest_notes_update' judges it/,
    ],
  ] as const)('names the WITH CHECK that judges a %s', async (action, policy, reason) => {
    const { decision } = await explainPolicy(native(notes, action, user(2)));
    expect(decision).toMatchObject({ kind: 'filter', enforced_by: 'rls', check: { policy, sql: OWNER_RLS } });
    expect(decision).not.toHaveProperty('values');
    expect(decision.kind === 'filter' && decision.check?.reason).toMatch(reason);
  });
});

describe('explainPolicy: relations', () => {
  const members = table('members', { id: 'integer', team_id: 'integer', user_id: 'integer' });
  const tasks = table('tasks', { id: 'integer', team_id: 'integer' });
  const schema: SchemaSnapshot = { tables: new Map([members, tasks].map((t) => [t.name, t])) };
  const rows: readonly PolicyRow[] = [
    ...SEED,
    {
      id: 3,
      table_name: 'tasks',
      action: 'read',
      expression: 'team_id in (select team_id from members where user_id = auth_user.id)',
      description: 'team',
      columns: null,
    },
    {
      id: 4,
      table_name: 'members',
      action: 'read',
      expression: 'auth_user.is_admin',
      description: 'admins',
      columns: null,
    },
  ];
  const relational = (input: ExplainInput): ExplainInput => ({ ...input, rows, schema });

  it('lists each table a subquery reads with the read policy it is seen through, and unindexed columns', async () => {
    const e = await explainPolicy({
      ...relational(portable(tasks, 'read', user(2, true))),
      indexes: new Map([['members', new Set(['id'])]]),
    });
    expect(e.relations).toEqual([
      {
        table: 'members',
        columns: ['team_id', 'user_id'],
        read_policy: 'auth_user.is_admin',
        index_warning:
          "no index on 'team_id', 'user_id' of table 'members': the subquery scans it for every row it judges (CREATE INDEX ON members (team_id))",
      },
    ]);
    expect(e.predicate.sql).toContain('"members"');
    const indexed = await explainPolicy({
      ...relational(portable(tasks, 'read', user(2, true))),
      indexes: new Map([['members', new Set(['user_id'])]]),
    });
    expect(indexed.relations[0]?.index_warning).toBeNull();
  });

  it.each([
    ['portable', portable],
    ['native', native],
  ])('%s: a user the inner read policy shows nothing is denied before any SQL', async (_path, input) => {
    expect((await explainPolicy(relational(input(tasks, 'read', user(2))))).decision).toMatchObject({
      kind: 'deny',
      status: 403,
    });
    expect((await explainPolicy(relational(input(tasks, 'read', ANONYMOUS)))).decision).toMatchObject({
      kind: 'deny',
      status: 401,
    });
  });

  it('native: the RLS DDL writes the subquery (an uncorrelated IN as = ANY), and the settings carry rest.table', async () => {
    const e = await explainPolicy(relational(native(tasks, 'read', user(2, true))));
    expect(e.rls_ddl?.find((s) => s.startsWith('CREATE POLICY "rest_tasks_select"'))).toContain(
      '"team_id" = ANY (ARRAY(SELECT "members"."team_id" FROM "members" WHERE',
    );
    expect(e.decision).toMatchObject({ kind: 'filter', enforced_by: 'rls' });
    expect(e.decision.kind === 'filter' && 'settings' in e.decision && e.decision.settings.at(-1)).toEqual({
      name: 'rest.table',
      value: 'tasks',
    });
  });
});

describe('explainPolicy marks broken stored rows among the candidates', () => {
  const BROKEN: readonly PolicyRow[] = [
    ...SEED,
    {
      id: 7,
      table_name: 'notes',
      action: 'read',
      expression: 'user_id = = 1',
      description: 'by hand',
      columns: null,
    },
    {
      id: 8,
      table_name: 'notes',
      action: 'read',
      expression: 'owner = auth_user.id',
      description: 'by hand',
      columns: null,
    },
    {
      id: 9,
      table_name: 'notes',
      action: 'read',
      expression: 'user_id = auth_user.id',
      description: 'fine',
      columns: null,
    },
  ];

  it('with the error validation would give; valid rows are not marked', async () => {
    const e = await explainPolicy({ ...portable(notes, 'read', user(2)), rows: BROKEN });
    expect(e.candidates.map((c) => [c.id, c.chosen, c.broken, c.error])).toEqual([
      [7, true, true, "expected a column, auth_user.<attr> or a literal at 1:11, found '='"],
      [8, true, true, "column 'owner' does not exist in table 'notes' at 1:1"],
      [9, true, false, null],
      [2, false, false, null],
    ]);
    // The missing column makes the whole request deny, naming it (fail closed).
    expect(e.decision).toMatchObject({ kind: 'deny', status: 403 });
    expect(e.missing_columns).toEqual(['owner']);
  });

  it('a row that does not parse counts as FALSE: the valid row still decides', async () => {
    const rows = BROKEN.filter((r) => r.id !== 8);
    const e = await explainPolicy({ ...portable(notes, 'read', user(2)), rows });
    expect(e.expression).toBe('user_id = auth_user.id');
    expect(e.decision).toMatchObject({ kind: 'filter', values: [2] });
  });
});
