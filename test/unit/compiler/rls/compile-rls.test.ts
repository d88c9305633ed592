import { describe, expect, it } from 'vitest';
import type { ColumnTypes } from '../../../../compiler/types.js';
import { compilePolicySet } from '../../../../compiler/policy-set.js';
import { compileRls, rlsPolicyName, rlsPolicyNames } from '../../../../compiler/rls/compile-rls.js';
import { SESSION_SETTINGS, sessionSettingValues } from '../../../../compiler/rls/session-settings.js';
import { postgresDialect } from '../../../../compiler/sql/postgres-dialect.js';
import { ANONYMOUS, type PolicyRow } from '../../../../compiler/types.js';

const COLUMNS: ColumnTypes = new Map([
  ['id', 'integer'],
  ['user_id', 'integer'],
  ['title', 'text'],
] as const);
const row = (id: number, table_name: string, action: string, expression: string): PolicyRow => ({
  id,
  table_name,
  action,
  expression,
  description: `row ${id}`,
  columns: null,
});
const ROWS: readonly PolicyRow[] = [
  row(1, 'auth_users', 'all', 'auth_user.is_admin'),
  row(3, 'all', 'all', 'user_id = auth_user.id'),
  row(4, 'posts', 'read', ''),
  row(5, 'posts', 'create', 'auth_user.is_authenticated'),
];

const OWNER = `("user_id" = (select nullif(current_setting('rest.user_id', true), '')::bigint))`;
const AUTHENTICATED =
  "(select coalesce(nullif(current_setting('rest.is_authenticated', true), '')::boolean, false))";
const ACTION = "(select nullif(current_setting('rest.action', true), ''))";
const TO = 'TO "rest_anon", "rest_user"';

describe('compileRls', () => {
  it('emits ENABLE RLS, one restrictive policy per command (SELECT deferring to the write in progress) and a permissive one for everyone', () => {
    expect(
      compileRls({ table: 'posts', columns: COLUMNS, policies: ROWS, roles: ['rest_anon', 'rest_user'] }),
    ).toEqual([
      'ALTER TABLE "posts" ENABLE ROW LEVEL SECURITY',
      'DROP POLICY IF EXISTS "rest_posts_select" ON "posts"',
      `CREATE POLICY "rest_posts_select" ON "posts" AS RESTRICTIVE FOR SELECT ${TO} USING (((select case when ${ACTION} IN ('read') then 1 end) = 1 AND true) OR ` +
        `((select case when ${ACTION} IN ('read_mine', 'update', 'delete') then 1 end) = 1 AND ${OWNER}) OR ((select case when ${ACTION} IN ('create') then 1 end) = 1 AND ${AUTHENTICATED}))`,
      'DROP POLICY IF EXISTS "rest_posts_insert" ON "posts"',
      `CREATE POLICY "rest_posts_insert" ON "posts" AS RESTRICTIVE FOR INSERT ${TO} WITH CHECK (${AUTHENTICATED})`,
      'DROP POLICY IF EXISTS "rest_posts_update" ON "posts"',
      `CREATE POLICY "rest_posts_update" ON "posts" AS RESTRICTIVE FOR UPDATE ${TO} USING (${OWNER}) WITH CHECK (${OWNER})`,
      'DROP POLICY IF EXISTS "rest_posts_delete" ON "posts"',
      `CREATE POLICY "rest_posts_delete" ON "posts" AS RESTRICTIVE FOR DELETE ${TO} USING (${OWNER})`,
      'DROP POLICY IF EXISTS "rest_posts_others" ON "posts"',
      'CREATE POLICY "rest_posts_others" ON "posts" AS PERMISSIVE FOR ALL TO PUBLIC USING (true) WITH CHECK (true)',
    ]);
  });

  it('keeps one policy for every action a single conjunct an index can serve', () => {
    const ddl = compileRls({
      table: 'notes',
      columns: COLUMNS,
      policies: [row(3, 'all', 'all', 'user_id = auth_user.id')],
      roles: ['rest'],
    });
    expect(ddl[2]).toBe(
      `CREATE POLICY "rest_notes_select" ON "notes" AS RESTRICTIVE FOR SELECT TO "rest" USING (((select case when ${ACTION} IN ('read', 'read_mine', 'create', 'update', 'delete') then 1 end) = 1 AND ${OWNER}))`,
    );
  });

  it('turns a policy naming a missing column, and an action without policy, into false', () => {
    const ddl = compileRls({
      table: 'tags',
      columns: new Map([['id', 'integer']]),
      policies: [row(3, 'all', 'all', 'user_id = auth_user.id'), row(4, 'tags', 'read', '')],
      roles: ['rest'],
    });
    expect(ddl[4]).toBe(
      'CREATE POLICY "rest_tags_insert" ON "tags" AS RESTRICTIVE FOR INSERT TO "rest" WITH CHECK (false)',
    );
    expect(ddl[2]).toBe(
      `CREATE POLICY "rest_tags_select" ON "tags" AS RESTRICTIVE FOR SELECT TO "rest" USING (((select case when ${ACTION} IN ('read') then 1 end) = 1 AND true))`,
    );
  });

  it('accepts a compiled PolicySet and quotes table and role names', () => {
    const set = compilePolicySet([row(1, 'we"ird', 'all', '')], postgresDialect);
    const ddl = compileRls({ table: 'we"ird', columns: COLUMNS, policies: set, roles: ["o'role"] });
    expect(ddl[0]).toBe('ALTER TABLE "we""ird" ENABLE ROW LEVEL SECURITY');
    expect(ddl[8]).toBe(
      'CREATE POLICY "rest_we""ird_delete" ON "we""ird" AS RESTRICTIVE FOR DELETE TO "o\'role" USING (true)',
    );
  });

  it('is deterministic', () => {
    const input = { table: 'posts', columns: COLUMNS, policies: ROWS, roles: ['rest_user'] };
    expect(compileRls(input)).toEqual(compileRls({ ...input, policies: [...ROWS] }));
  });
});

describe('rlsPolicyName', () => {
  it('is rest_<table>_<command> when it fits in 63 bytes', () => {
    expect(rlsPolicyNames('posts')).toEqual([
      'rest_posts_select',
      'rest_posts_insert',
      'rest_posts_update',
      'rest_posts_delete',
      'rest_posts_others',
    ]);
  });

  it.each([
    ['x'.repeat(60), 'select', 'rest_xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx_37d12e35_select'],
    ['é'.repeat(40), 'others', 'rest_ééééééééééééééééééééé_da5a8f25_others'],
  ] as const)('cuts a long table name by UTF-8 bytes and tags it with a hash: %s', (table, command, name) => {
    expect(rlsPolicyName(table, command)).toBe(name);
    expect(new TextEncoder().encode(name).length).toBeLessThanOrEqual(63);
  });

  it('keeps long names that share a prefix distinct', () => {
    const a = rlsPolicyName(`${'t'.repeat(70)}_a`, 'update');
    const b = rlsPolicyName(`${'t'.repeat(70)}_b`, 'update');
    expect(a).not.toBe(b);
  });
});

describe('session settings', () => {
  it('are the only rest.* names, set per request from the user and the action', () => {
    expect(SESSION_SETTINGS.map((s) => s.name)).toEqual([
      'rest.user_id',
      'rest.username',
      'rest.is_admin',
      'rest.is_authenticated',
      'rest.claims',
      'rest.action',
    ]);
    expect(sessionSettingValues(ANONYMOUS, 'read')).toEqual([
      { name: 'rest.user_id', value: '' },
      { name: 'rest.username', value: 'null' },
      { name: 'rest.is_admin', value: 'false' },
      { name: 'rest.is_authenticated', value: 'false' },
      { name: 'rest.claims', value: '{}' },
      { name: 'rest.action', value: 'read' },
    ]);
    const user = {
      id: 7,
      username: '',
      is_admin: true,
      is_authenticated: true,
      claims: { org: 'a', bad: 'x\u0000', ['k\u0000']: 1 },
    };
    expect(sessionSettingValues(user, 'read_mine').map((s) => s.value)).toEqual([
      '7',
      '""',
      'true',
      'true',
      '{"org":"a","bad":null}',
      'read_mine',
    ]);
  });

  it("keep a frozen claims object's text, and read claims that are not frozen afresh each time", () => {
    const claimsOf = (claims: Record<string, unknown>) =>
      sessionSettingValues({ ...ANONYMOUS, claims }, 'read').find((s) => s.name === 'rest.claims')?.value;
    const open: Record<string, unknown> = { org: 'a' };
    expect(claimsOf(open)).toBe('{"org":"a"}');
    open['org'] = 'b';
    expect(claimsOf(open)).toBe('{"org":"b"}');
    let reads = 0;
    const frozen = Object.freeze({
      get org() {
        reads += 1;
        return 'c';
      },
    });
    expect(claimsOf(frozen)).toBe('{"org":"c"}');
    expect(claimsOf(frozen)).toBe('{"org":"c"}');
    expect(reads).toBe(1);
  });
});
