// Relations in the compiler: analysis per table, cycles, the SQL of subqueries on
// every dialect (pinned), the portable inlining of inner read policies, decisions and the memo.

import { describe, expect, it } from 'vitest';
import { analyze } from '../../../compiler/analyze.js';
import type { ColumnTypes } from '../../../compiler/types.js';
import { findCycles } from '../../../compiler/cycles.js';
import { evaluate } from '../../../compiler/evaluate.js';
import { compilePolicySet } from '../../../compiler/policy-set.js';
import { compileRls, nativePredicateSql } from '../../../compiler/rls/compile-rls.js';
import { SESSION_BINDING, sessionSettingValues } from '../../../compiler/rls/session-settings.js';
import type { SchemaTypes } from '../../../compiler/scope.js';
import { compileToSql } from '../../../compiler/sql/compile-predicate.js';
import { dialects } from '../../../compiler/sql/dialects.js';
import { renderInlinePostgres, renderSql } from '../../../compiler/sql/fragment.js';
import { ANONYMOUS, type AuthUser, type DialectName, type PolicyRow } from '../../../compiler/types.js';
import { parsePolicy } from '../../../grammar/parse-policy.js';

const SCHEMA: SchemaTypes = new Map<string, ColumnTypes>([
  [
    'docs',
    new Map([
      ['id', 'integer'],
      ['team_id', 'integer'],
      ['owner', 'integer'],
      ['title', 'text'],
    ]),
  ],
  [
    'members',
    new Map([
      ['team_id', 'integer'],
      ['user_id', 'integer'],
      ['role', 'text'],
    ]),
  ],
  [
    'shares',
    new Map([
      ['doc_id', 'integer'],
      ['user_id', 'integer'],
    ]),
  ],
]);
const DOCS = SCHEMA.get('docs') as ColumnTypes;
const ALICE: AuthUser = { id: 5, username: 'alice', is_admin: false, is_authenticated: true, claims: {} };

let nextId = 1;
const row = (table_name: string, action: string, expression: string): PolicyRow => ({
  id: nextId++,
  table_name,
  action,
  expression,
  description: '',
  columns: null,
});

describe('analysis of subqueries', () => {
  it('lists the tables and columns an expression touches, per table', () => {
    const a = analyze(
      parsePolicy(
        'team_id in (select team_id from members where user_id = auth_user.id) or exists (select from shares where doc_id = docs.id)',
      ),
      DOCS,
      { table: 'docs', schema: SCHEMA },
    );
    expect(a.problems).toEqual([]);
    expect(a.columns).toEqual(['team_id', 'id']);
    expect([...a.relations]).toEqual([
      ['members', ['team_id', 'user_id']],
      ['shares', ['doc_id']],
    ]);
    expect(a.authOnly).toBe(false);
    expect(a.rowParts).toHaveLength(1);
  });

  it('names unknown tables and columns inside subqueries with their position', () => {
    const problems = (text: string): readonly string[] =>
      analyze(parsePolicy(text), DOCS, { table: 'docs', schema: SCHEMA }).problems.map(
        (p) => `${p.message} at ${p.pos.line}:${p.pos.column}`,
      );
    expect(problems('exists (select from teams where id = 1)')).toEqual([
      "table 'teams' does not exist at 1:21",
    ]);
    expect(problems('exists (select from members where nope = 1)')).toEqual([
      "column 'nope' does not exist in table 'members' at 1:35",
    ]);
    expect(problems('owner in (select nope from members)')).toEqual([
      "column 'nope' does not exist in table 'members' at 1:18",
    ]);
    expect(problems('exists (select from members where shares.user_id = 1)')).toEqual([
      "table 'shares' is neither the policy's table nor that of an enclosing subquery at 1:35",
    ]);
    expect(problems('owner in (select role from members)')).toEqual([
      'cannot compare a number with a text at 1:1',
    ]);
    // The outer table's missing columns stay missingColumns (policies for `all`: per table).
    const a = analyze(parsePolicy('exists (select from members where user_id = docs.nope)'), DOCS, {
      table: 'docs',
      schema: SCHEMA,
    });
    expect(a.problems).toEqual([]);
    expect(a.missingColumns).toEqual(['nope']);
    // … each located where it is first named: validation refuses them in a policy for one table.
    expect(a.missingAt).toEqual([
      {
        message: "column 'nope' does not exist in table 'docs'",
        pos: { offset: 44, line: 1, column: 45 },
      },
    ]);
    const bare = analyze(
      parsePolicy('nope = 1 or exists (select from members where user_id = docs.id)'),
      DOCS,
      {
        table: 'docs',
        schema: SCHEMA,
      },
    );
    expect(bare.missingAt.map((p) => `${p.message} at ${p.pos.column}`)).toEqual([
      "column 'nope' does not exist in table 'docs' at 1",
    ]);
    // For `all` (no table given) nothing is missing until a table is known.
    expect(analyze(parsePolicy('exists (select from members where user_id = docs.nope)')).missingAt).toEqual(
      [],
    );
  });

  it('without a schema, types subqueries as unknown and reports no problem', () => {
    const a = analyze(parsePolicy('exists (select from anything where x = docs.y)'), DOCS);
    expect(a.problems).toEqual([]);
    expect([...a.relations]).toEqual([['anything', ['x']]]);
    expect(a.missingColumns).toEqual(['y']);
  });
});

describe('cycles through subqueries', () => {
  const parse = (r: PolicyRow) => parsePolicy(r.expression);
  const tables = ['docs', 'members', 'shares'];

  it('finds A reads B, B reads A, spelled out with the rows that make each step', () => {
    const a = row('docs', 'read', 'exists (select from members where members.team_id = docs.team_id)');
    const b = row('members', 'all', 'exists (select from docs where docs.team_id = members.team_id)');
    const report = findCycles([a, b, row('shares', 'all', '')], tables, parse);
    expect(report.cycles.map((c) => c.path)).toEqual(['docs → members → docs']);
    expect(report.cycles[0]?.policyIds).toEqual([a.id, b.id]);
    expect(report.isBroken(a.id, 'docs')).toBe(true);
    expect(report.isBroken(b.id, 'members')).toBe(true);
  });

  it('finds A reads A, also through another action than read', () => {
    const a = row('docs', 'create', 'exists (select from docs where owner = 1)');
    expect(findCycles([a], tables, parse).cycles.map((c) => c.path)).toEqual(['docs → docs']);
  });

  it('follows rows of `all` for exactly the tables that fall back to them', () => {
    const all = row('all', 'all', 'exists (select from members where user_id = auth_user.id)');
    const own = row('members', 'all', 'user_id = auth_user.id');
    // members has rows of its own: docs and shares read members, nothing reads back.
    expect(findCycles([all, own], tables, parse).cycles).toEqual([]);
    // Without them members falls back to `all` and reads itself.
    const report = findCycles([all], tables, parse);
    expect(report.cycles.map((c) => c.path)).toEqual(['members → members']);
    expect(report.isBroken(all.id, 'members')).toBe(true);
    expect(report.isBroken(all.id, 'docs')).toBe(false);
  });

  it('accepts chains and repeated inner tables without a cycle', () => {
    const rows = [
      row(
        'docs',
        'all',
        'exists (select from shares where doc_id = docs.id and exists (select from members where members.user_id = shares.user_id))',
      ),
      row('shares', 'all', 'user_id in (select user_id from members)'),
      row('members', 'all', 'user_id = auth_user.id'),
    ];
    expect(findCycles(rows, tables, parse).cycles).toEqual([]);
  });

  it('refuses a cyclic row in a compiled set: it denies, the issue names the cycle', () => {
    const a = row('docs', 'all', 'exists (select from members where members.team_id = docs.team_id)');
    const b = row('members', 'all', 'team_id in (select team_id from docs)');
    const set = compilePolicySet([a, b], dialects.sqlite);
    const p = set.policyFor('docs', 'read', DOCS, SCHEMA);
    expect(p.issues.map((i) => [i.kind, i.message])).toEqual([
      ['cycle', "the policy's subqueries make a cycle: docs → members → docs"],
    ]);
    expect(p.decide(ALICE)).toEqual({ kind: 'deny' });
    expect(set.cycles(SCHEMA).cycles.map((c) => c.path)).toEqual(['docs → members → docs']);
  });
});

const PINNED_SQL: Readonly<Record<DialectName, string>> = {
  sqlite:
    '(("team_id" IN (SELECT "members"."team_id" FROM "members" WHERE ("members"."user_id" = ?) AND ("members"."user_id" = ?))) OR EXISTS (SELECT 1 FROM "shares" WHERE ("shares"."doc_id" = "docs"."id") AND ("shares"."user_id" = ?)))',
  postgres:
    '(("team_id" IN (SELECT "members"."team_id" FROM "members" WHERE ("members"."user_id" = $1::bigint) AND ("members"."user_id" = $2::bigint))) OR EXISTS (SELECT 1 FROM "shares" WHERE ("shares"."doc_id" = "docs"."id") AND ("shares"."user_id" = $3::bigint)))',
  mysql:
    '((`team_id` IN (SELECT `members`.`team_id` FROM `members` WHERE (`members`.`user_id` = ?) AND (`members`.`user_id` = ?))) OR EXISTS (SELECT 1 FROM `shares` WHERE (`shares`.`doc_id` = `docs`.`id`) AND (`shares`.`user_id` = ?)))',
};

describe('SQL of subqueries', () => {
  const rows = [
    row(
      'docs',
      'all',
      'team_id in (select team_id from members where user_id = auth_user.id) or exists (select from shares where doc_id = docs.id)',
    ),
    row('members', 'all', 'user_id = auth_user.id'),
    row('shares', 'all', 'user_id = auth_user.id'),
  ];

  it.each(['sqlite', 'postgres', 'mysql'] as const)(
    'inlines the inner read policies, values bound (%s)',
    (kind) => {
      const p = compilePolicySet(rows, dialects[kind]).policyFor('docs', 'read', DOCS, SCHEMA);
      expect(p.issues).toEqual([]);
      expect(renderSql(dialects[kind], p.predicate, ALICE)).toEqual({
        text: PINNED_SQL[kind],
        values: [5, 5, 5],
      });
      expect([...p.inlined.keys()]).toEqual(['members', 'shares']);
    },
  );

  it('writes the subquery on the native path without the inner policy, auth_user from the settings', () => {
    const p = compilePolicySet(rows, dialects.postgres).policyFor('docs', 'read', DOCS, SCHEMA);
    expect(nativePredicateSql(p, DOCS)).toBe(
      `(("team_id" = ANY (ARRAY(SELECT "members"."team_id" FROM "members" WHERE ("members"."user_id" = (select nullif(current_setting('rest.user_id', true), '')::bigint))))) OR EXISTS (SELECT 1 FROM "shares" WHERE ("shares"."doc_id" = "docs"."id")))`,
    );
  });

  it('keeps IN on the portable path of every dialect, uncorrelated or not', () => {
    const e = parsePolicy('team_id not in (select team_id from members where user_id = auth_user.id)');
    for (const kind of ['sqlite', 'postgres', 'mysql'] as const) {
      const sql = renderSql(
        dialects[kind],
        compileToSql(e, dialects[kind], { columns: DOCS, table: 'docs', schema: SCHEMA }),
        ALICE,
      );
      expect(sql.text).toContain(' NOT IN (SELECT ');
      expect(sql.text).not.toContain('ARRAY');
    }
  });

  it('refuses the array form in a dialect without arrays', () => {
    const e = parsePolicy('team_id in (select team_id from members)');
    expect(() =>
      compileToSql(e, dialects.sqlite, {
        columns: DOCS,
        table: 'docs',
        schema: SCHEMA,
        arrayMembership: true,
      }),
    ).toThrow('the sqlite dialect has no arrays');
  });

  it('compares text by code point inside subqueries and quotes every identifier', () => {
    const e = parsePolicy(`title not in (select "ro""le" from "my members" where "my members".x = 'a')`);
    const schema: SchemaTypes = new Map([
      ...SCHEMA,
      [
        'my members',
        new Map([
          ['ro"le', 'text'],
          ['x', 'text'],
        ]),
      ],
    ]);
    const sql = (kind: DialectName): string =>
      renderSql(dialects[kind], compileToSql(e, dialects[kind], { columns: DOCS, table: 'docs', schema }))
        .text;
    expect(sql('postgres')).toBe(
      `(("title") COLLATE "C" NOT IN (SELECT ("my members"."ro""le") COLLATE "C" FROM "my members" WHERE (("my members"."x") COLLATE "C" = ($1::text) COLLATE "C")))`,
    );
    expect(sql('mysql')).toBe(
      '(CAST(`title` AS BINARY) NOT IN (SELECT CAST(`my members`.`ro"le` AS BINARY) FROM `my members` WHERE (CAST(`my members`.`x` AS BINARY) = CAST(? AS BINARY))))',
    );
  });

  it('inlines a denying inner policy as FALSE and nothing for one that allows everyone', () => {
    const set = compilePolicySet(
      [
        row('docs', 'all', 'exists (select from members where user_id = docs.owner)'),
        row('members', 'read', 'auth_user.is_admin'),
      ],
      dialects.sqlite,
    );
    const p = set.policyFor('docs', 'read', DOCS, SCHEMA);
    expect(renderSql(dialects.sqlite, p.predicate, ALICE)).toEqual({
      text: 'EXISTS (SELECT 1 FROM "members" WHERE ("members"."user_id" = "docs"."owner") AND ?)',
      values: [0],
    });
    expect(p.decide(ALICE)).toEqual({ kind: 'deny' });
    expect(p.decide({ ...ALICE, is_admin: true }).kind).toBe('filter');
  });
});

describe('decisions and checks with subqueries', () => {
  const rows = [
    row('docs', 'all', 'team_id in (select team_id from members where user_id = auth_user.id)'),
    row('members', 'all', ''),
  ];
  const set = compilePolicySet(rows, dialects.sqlite);

  it('denies an anonymous user when every arm needs auth_user.id inside a subquery (401)', () => {
    const p = set.policyFor('docs', 'read', DOCS, SCHEMA);
    expect(p.decide(ANONYMOUS)).toEqual({ kind: 'deny' });
    expect(p.decide(ALICE).kind).toBe('filter');
  });

  it('answers check with undefined when other tables decide, false when no row can match', () => {
    const p = set.policyFor('docs', 'create', DOCS, SCHEMA);
    expect(p.check({ team_id: 1 }, ALICE)).toBeUndefined();
    expect(p.check({ team_id: 1 }, ANONYMOUS)).toBe(false);
    expect(
      evaluate(
        parsePolicy('owner not in (select user_id from members where 1 = 2)'),
        ALICE,
        { owner: null },
        DOCS,
      ),
    ).toBe(true);
  });

  it('denies policies with subqueries when the schema is not given', () => {
    const p = set.policyFor('docs', 'read', DOCS);
    expect(p.issues.map((i) => i.kind)).toEqual(['relation']);
    expect(p.decide(ALICE)).toEqual({ kind: 'deny' });
  });

  it('recompiles when a table the subqueries reach changes its columns, not otherwise', () => {
    const p = set.policyFor('docs', 'read', DOCS, SCHEMA);
    const same: SchemaTypes = new Map(SCHEMA);
    expect(set.policyFor('docs', 'read', DOCS, same)).toBe(p);
    const changed: SchemaTypes = new Map([...SCHEMA, ['members', new Map([['team_id', 'integer']])]]);
    const q = set.policyFor('docs', 'read', DOCS, changed);
    expect(q).not.toBe(p);
    expect(q.issues.map((i) => i.message)).toEqual(["column 'user_id' does not exist in table 'members'"]);
  });

  it('recompiles when a table the subqueries read comes back after it was renamed away or dropped', () => {
    const set = compilePolicySet(rows, dialects.sqlite);
    const gone: SchemaTypes = new Map([...SCHEMA].filter(([t]) => t !== 'members'));
    const without = set.policyFor('docs', 'read', DOCS, gone);
    expect(without.issues.map((i) => i.message)).toEqual(["table 'members' does not exist"]);
    expect(without.decide(ALICE)).toEqual({ kind: 'deny' });
    const back = set.policyFor('docs', 'read', DOCS, new Map(SCHEMA));
    expect(back).not.toBe(without);
    expect(back.issues).toEqual([]);
    expect(back.decide(ALICE).kind).toBe('filter');
  });

  it('recompiles when a table an inner read policy reads comes back', () => {
    const nested = [
      row('docs', 'all', 'team_id in (select team_id from members where user_id = auth_user.id)'),
      row('members', 'read', 'exists (select from shares where shares.user_id = members.user_id)'),
      row('shares', 'all', ''),
    ];
    const set = compilePolicySet(nested, dialects.sqlite);
    const gone: SchemaTypes = new Map([...SCHEMA].filter(([t]) => t !== 'shares'));
    const sql = (schema: SchemaTypes): string =>
      renderSql(dialects.sqlite, set.policyFor('docs', 'read', DOCS, schema).predicate, ALICE).text;
    expect(sql(gone)).not.toContain('"shares"');
    expect(sql(new Map(SCHEMA))).toContain('"shares"');
  });
});

describe('native RLS of a table read by subqueries', () => {
  const rows = [
    row('docs', 'all', 'exists (select from members where members.team_id = docs.team_id)'),
    row('members', 'read', 'user_id = auth_user.id'),
    row('members', 'create', 'auth_user.is_admin'),
  ];

  it('serves the read arm to requests on other tables, the others only to its own', () => {
    const ddl = compileRls({
      table: 'members',
      columns: SCHEMA.get('members') as ColumnTypes,
      policies: rows,
      roles: ['r'],
      schema: SCHEMA,
    });
    const select = ddl.find((s) => s.startsWith('CREATE POLICY "rest_members_select"')) ?? '';
    expect(select).toContain(
      `((select case when (select nullif(current_setting('rest.action', true), '')) IN ('read') OR (select nullif(current_setting('rest.table', true), '')) <> 'members' then 1 end) = 1 AND ("user_id" = `,
    );
    expect(select).toContain(
      `((select case when (select nullif(current_setting('rest.action', true), '')) IN ('create') AND (select nullif(current_setting('rest.table', true), '')) = 'members' then 1 end) = 1 AND `,
    );
    // Without the schema (a runtime that does not serve subqueries) the DDL is as before.
    const plain = compileRls({
      table: 'members',
      columns: SCHEMA.get('members') as ColumnTypes,
      policies: rows,
      roles: ['r'],
    });
    expect(plain.join('\n')).not.toContain('rest.table');
  });

  it('sets rest.table when given the request table', () => {
    expect(sessionSettingValues(ALICE, 'read', 'docs').at(-1)).toEqual({ name: 'rest.table', value: 'docs' });
    expect(sessionSettingValues(ALICE, 'read').map((s) => s.name)).not.toContain('rest.table');
  });
});

describe('native IN-subqueries: an array when they name no enclosing row', () => {
  const native = (expression: string): string =>
    renderInlinePostgres(
      compileToSql(parsePolicy(expression), dialects.postgres, {
        columns: DOCS,
        table: 'docs',
        schema: SCHEMA,
        auth: SESSION_BINDING,
        arrayMembership: true,
      }),
    );

  it.each([
    [
      'IN, uncorrelated',
      "team_id in (select team_id from members where role = 'admin')",
      `("team_id" = ANY (ARRAY(SELECT "members"."team_id" FROM "members" WHERE (("members"."role") COLLATE "C" = ('admin'::text) COLLATE "C"))))`,
    ],
    [
      'NOT IN, uncorrelated',
      'owner not in (select user_id from members)',
      `("owner" <> ALL (ARRAY(SELECT "members"."user_id" FROM "members")))`,
    ],
    [
      'IN, the outer row in the condition',
      'team_id in (select team_id from members where members.user_id = docs.owner)',
      `("team_id" IN (SELECT "members"."team_id" FROM "members" WHERE ("members"."user_id" = "docs"."owner")))`,
    ],
    [
      'NOT IN, the outer row as the selected column',
      'owner not in (select docs.team_id from members)',
      `("owner" NOT IN (SELECT "docs"."team_id" FROM "members"))`,
    ],
    [
      'IN, the outer row named from a nested subquery',
      'team_id in (select team_id from members where exists (select from shares where shares.doc_id = docs.id))',
      `("team_id" IN (SELECT "members"."team_id" FROM "members" WHERE EXISTS (SELECT 1 FROM "shares" WHERE ("shares"."doc_id" = "docs"."id"))))`,
    ],
    [
      'a nested NOT IN naming only its own row: an array inside a correlated EXISTS',
      'exists (select from members where members.team_id = docs.team_id and user_id not in (select user_id from shares))',
      `EXISTS (SELECT 1 FROM "members" WHERE (("members"."team_id" = "docs"."team_id") AND ("members"."user_id" <> ALL (ARRAY(SELECT "shares"."user_id" FROM "shares")))))`,
    ],
    [
      "a nested IN naming the enclosing subquery's row stays IN, the outer one is an array",
      'team_id in (select team_id from members where user_id in (select user_id from shares where shares.doc_id = members.team_id))',
      `("team_id" = ANY (ARRAY(SELECT "members"."team_id" FROM "members" WHERE ("members"."user_id" IN (SELECT "shares"."user_id" FROM "shares" WHERE ("shares"."doc_id" = "members"."team_id"))))))`,
    ],
    [
      'text: the operand compared by code point',
      'title in (select role from members)',
      `(("title") COLLATE "C" = ANY (ARRAY(SELECT ("members"."role") COLLATE "C" FROM "members")))`,
    ],
  ])('%s', (_name, expression, sql) => {
    expect(native(expression)).toBe(sql);
  });
});
