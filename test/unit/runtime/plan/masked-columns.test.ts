// The SQL of column rules per dialect: a masked column is `(CASE WHEN (<mask>) THEN c END)` in the
// SELECT list (under its own name), in filters and in ORDER BY; hidden columns leave `*`; a read
// without rules is the plain statement. Masks come from the compiled policy, as requests get them.

import { describe, expect, it } from 'vitest';
import { compilePolicySet } from '../../../../compiler/policy-set.js';
import { dialects } from '../../../../compiler/sql/dialects.js';
import { renderSql } from '../../../../compiler/sql/fragment.js';
import type { AuthUser, ColumnTypes, DialectName, PolicyRow } from '../../../../compiler/types.js';
import type { TableInfo } from '../../../../runtime/db/adapter.js';
import { portableCondition, readColumnsOf } from '../../../../runtime/enforce/request-columns.js';
import { planRead } from '../../../../runtime/plan/plan-read.js';
import { deleteStatement } from '../../../../runtime/plan/plan-write.js';
import { whereClause } from '../../../../runtime/plan/where.js';
import { parseTableRequest } from '../../../../runtime/request/parse-request.js';
import { fakeColumn } from '../../../support/fake-schema.js';

const columns = [
  fakeColumn('id', 'integer', 'integer', { nullable: false }),
  fakeColumn('user_id', 'integer', 'integer'),
  fakeColumn('email', 'text', 'text'),
  fakeColumn('secret', 'text', 'text'),
];
const table: TableInfo = {
  name: 'people',
  columns,
  columnsByName: new Map(columns.map((c) => [c.name, c])),
  primaryKey: ['id'],
};
const types: ColumnTypes = new Map(columns.map((c) => [c.name, c.type]));
const alice: AuthUser = { id: 7, username: 'alice', is_admin: false, is_authenticated: true, claims: {} };

const row = (id: number, expression: string, cols: string | null): PolicyRow =>
  ({ id, table_name: 'people', action: 'read', expression, description: '', columns: cols }) as PolicyRow;

/** Owners read everything; others read the row but neither email (masked) nor secret (hidden). */
const RULES = [
  row(1, 'user_id = auth_user.id', '* except (secret)'),
  row(2, 'auth_user.is_authenticated', 'id, user_id'),
];

const readOf = (name: DialectName, rows: readonly PolicyRow[]) => {
  const set = compilePolicySet(rows, dialects[name]);
  const policy = set.policyFor('people', 'read', types);
  return { policy, read: readColumnsOf(policy, table, alice, portableCondition) };
};

const list = (query: string) => {
  const request = parseTableRequest({
    table: 'people',
    key: undefined,
    operation: 'read',
    query: new URLSearchParams(query),
    body: undefined,
    maxRows: 1000,
  });
  if (request.kind !== 'list') throw new Error('not a list');
  return request;
};

describe.each(['postgres', 'mysql', 'sqlite'] as const)('column rules in SQL [%s]', (name) => {
  const dialect = dialects[name];
  const q = (s: string): string => dialect.quoteIdent(s);
  const masked = (c: string, owner: string): string => `(CASE WHEN (${owner}) THEN ${q(c)} END)`;

  it('masks email in the SELECT list, filters and ORDER BY, and leaves secret out of *', () => {
    const { read } = readOf(name, RULES);
    expect(read?.hidden).toEqual(new Set(['secret']));
    expect([...(read?.masks.keys() ?? [])]).toEqual(['email']);
    const plan = planRead(list('email=eq.a&order=email.desc'), table, undefined, dialect, read);
    const { text, values } = renderSql(dialect, plan.statement, alice);
    const owner = renderSql(dialect, read?.masks.get('email') ?? { parts: [] }, alice).text;
    expect(owner).toContain(q('user_id'));
    expect(text).toContain(`${masked('email', owner)} AS ${q('email')}`);
    expect(text).not.toContain(q('secret'));
    // The filter and the order read the masked value.
    expect(text.split('CASE WHEN').length - 1).toBeGreaterThanOrEqual(3);
    expect(text.indexOf('ORDER BY')).toBeLessThan(text.lastIndexOf('CASE WHEN'));
    expect(values).toContain(7);
  });

  it('masks the filters of a write and its RETURNING', () => {
    const { read } = readOf(name, RULES);
    const masks = read?.masks;
    const where = whereClause(
      {
        table,
        key: undefined,
        filters: list('email=eq.a').filters,
        predicate: undefined,
        ...(masks === undefined ? {} : { masks }),
      },
      dialect,
    );
    const { text } = renderSql(
      dialect,
      deleteStatement(table, where, dialect, columns.slice(0, 3), masks),
      alice,
    );
    expect(text.match(/CASE WHEN/g)?.length).toBeGreaterThanOrEqual(2);
    expect(text).toContain(`END) AS ${q('email')}`);
  });

  it('writes the plain statement when every row grants every column', () => {
    const { policy, read } = readOf(name, [row(1, 'user_id = auth_user.id', null), row(2, 'true', '*')]);
    expect(policy.columnRules).toBeUndefined();
    expect(read).toBeUndefined();
    const plain = renderSql(dialect, planRead(list(''), table, undefined, dialect).statement, alice);
    const ruled = renderSql(dialect, planRead(list(''), table, undefined, dialect, read).statement, alice);
    expect(ruled).toEqual(plain);
    expect(plain.text).not.toContain('CASE');
  });

  it('shares one answer between callers with the same outcomes', () => {
    const { policy } = readOf(name, RULES);
    const bob = { ...alice, id: 8, username: 'bob' };
    expect(readColumnsOf(policy, table, bob, portableCondition)).toBe(
      readColumnsOf(policy, table, alice, portableCondition),
    );
  });
});
