// Relations in the policy language (docs/policy-language.md): `exists (select from …)`, `x [not] in (select …)`,
// qualified columns; parse, canonical print, positions and errors.

import { describe, expect, it } from 'vitest';
import { ast, type Expr } from '../../../grammar/ast.js';
import { parsePolicy } from '../../../grammar/parse-policy.js';
import { printPolicy } from '../../../grammar/print-policy.js';
import { stripPositions } from '../../support/policy-arbitraries.js';
import { syntaxErrorOf } from '../../support/thrown.js';

const eq = (left: Expr, right: Expr): Expr => ast.compare('=', left, right);
const col = ast.column;
const q = ast.qualifiedColumn;
const me = ast.auth('id');

/** Text → AST → canonical text. */
const cases: readonly (readonly [string, Expr, string])[] = [
  [
    'team_id in (select team_id from members where user_id = auth_user.id)',
    ast.inSelect(col('team_id'), col('team_id'), 'members', eq(col('user_id'), me), false),
    'team_id in (select team_id from members where user_id = auth_user.id)',
  ],
  [
    'exists (select from shares where shares.doc_id = docs.id and shares.user_id = auth_user.id)',
    ast.exists(
      'shares',
      ast.and([eq(q('shares', 'doc_id'), q('docs', 'id')), eq(q('shares', 'user_id'), me)]),
    ),
    'exists (select from shares where shares.doc_id = docs.id and shares.user_id = auth_user.id)',
  ],
  [
    "EXISTS(SELECT FROM user_roles WHERE user_id=auth_user.id AND role='editor')",
    ast.exists('user_roles', ast.and([eq(col('user_id'), me), eq(col('role'), ast.string('editor'))])),
    "exists (select from user_roles where user_id = auth_user.id and role = 'editor')",
  ],
  [
    'owner NOT IN (Select user_id From banned)',
    ast.inSelect(col('owner'), col('user_id'), 'banned', ast.anyone(), true),
    'owner not in (select user_id from banned)',
  ],
  [
    'not exists (select from banned where banned.user_id = auth_user.id)',
    ast.not(ast.exists('banned', eq(q('banned', 'user_id'), me))),
    'not exists (select from banned where banned.user_id = auth_user.id)',
  ],
  [
    'auth_user.id in (select m.user_id from m where m.team = t.team)',
    ast.inSelect(me, q('m', 'user_id'), 'm', eq(q('m', 'team'), q('t', 'team')), false),
    'auth_user.id in (select m.user_id from m where m.team = t.team)',
  ],
  [
    '"select"."from" = 1 and "where" in (select "exists" from "my table")',
    ast.and([
      eq(q('select', 'from'), ast.integer(1)),
      ast.inSelect(col('where'), col('exists'), 'my table', ast.anyone(), false),
    ]),
    '"select"."from" = 1 and "where" in (select "exists" from "my table")',
  ],
  [
    'a = 1 or exists (select from b where exists (select from c where c.x = b.x))',
    ast.or([eq(col('a'), ast.integer(1)), ast.exists('b', ast.exists('c', eq(q('c', 'x'), q('b', 'x'))))]),
    'a = 1 or exists (select from b where exists (select from c where c.x = b.x))',
  ],
  [
    '(exists (select from b where x)) = true',
    eq(ast.exists('b', col('x')), ast.boolean(true)),
    '(exists (select from b where x)) = true',
  ],
  [
    'x in (select y from b where y in (select z from c))',
    ast.inSelect(col('x'), col('y'), 'b', ast.inSelect(col('y'), col('z'), 'c', ast.anyone(), false), false),
    'x in (select y from b where y in (select z from c))',
  ],
];

describe('relations in the grammar', () => {
  it.each(cases)('%j parses', (text, expected) => {
    expect(stripPositions(parsePolicy(text))).toEqual(stripPositions(expected));
  });

  it.each(cases)('%j prints canonically and round-trips', (text, expected, canonical) => {
    expect(printPolicy(expected)).toBe(canonical);
    expect(printPolicy(parsePolicy(text))).toBe(canonical);
    expect(stripPositions(parsePolicy(canonical))).toEqual(stripPositions(expected));
  });

  it('prints an exists without a condition with `where true`', () => {
    expect(printPolicy(ast.exists('t', ast.anyone()))).toBe('exists (select from t where true)');
  });

  it('positions subqueries and their tables', () => {
    const e = parsePolicy('a = 1 or\n  x not in (select y from "b" where b.z = a)');
    if (e.kind !== 'or') throw new Error('expected or');
    const sub = e.operands[1];
    if (sub?.kind !== 'in_select') throw new Error('expected in_select');
    expect(sub.pos).toEqual({ offset: 11, line: 2, column: 3 });
    expect(sub.from.pos).toEqual({ offset: 35, line: 2, column: 27 });
    expect(sub.column.pos).toEqual({ offset: 28, line: 2, column: 20 });
    if (sub.where.kind !== 'compare') throw new Error('expected compare');
    expect(sub.where.left.pos).toEqual({ offset: 45, line: 2, column: 37 });
    const ex = parsePolicy('exists (select from t where u)');
    expect(ex.pos).toEqual({ offset: 0, line: 1, column: 1 });
    expect(ex.kind === 'exists' && ex.from.pos).toEqual({ offset: 20, line: 1, column: 21 });
  });

  it('returns frozen subquery nodes', () => {
    const e = parsePolicy('a in (select b from c where c.d = 1)');
    expect(Object.isFrozen(e)).toBe(true);
    if (e.kind !== 'in_select') throw new Error('expected in_select');
    expect(Object.isFrozen(e.column)).toBe(true);
    expect(Object.isFrozen(e.where)).toBe(true);
  });

  it('keeps subquery keywords out of bare column names but allows them quoted and as claims', () => {
    expect(stripPositions(parsePolicy('auth_user.claims.select = 1'))).toEqual(
      stripPositions(eq(ast.claim('select'), ast.integer(1))),
    );
    expect(syntaxErrorOf('select = 1').message).toBe(
      "expected a column, auth_user.<attr> or a literal at 1:1, found 'select'",
    );
  });

  it('accepts two levels of nested subqueries in 128 characters and no third', () => {
    const two = 'exists (select from b where exists (select from c where c.x = b.x))';
    expect(parsePolicy(two).kind).toBe('exists');
    const three = 'exists (select from b where exists (select from c where x in (select y from d)))';
    const error = syntaxErrorOf(three);
    expect(error.message).toBe("expected at most 2 levels of nested subqueries at 1:63, found 'select'");
    expect([error.line, error.column]).toEqual([1, 63]);
    // A sibling subquery is not nested.
    expect(parsePolicy('exists (select from b where x) and exists (select from c where y)').kind).toBe('and');
  });

  const errors: readonly (readonly [string, string])[] = [
    ['exists', "expected '(' at 1:7, found end of input"],
    ['exists (select b from c where d)', "expected 'from' at 1:16, found 'b'"],
    ['exists (select from where d)', "expected a table name at 1:21, found 'where'"],
    ['exists (select from c)', "expected 'where' at 1:22, found ')'"],
    ['exists (select from c where)', "expected a column, auth_user.<attr> or a literal at 1:28, found ')'"],
    ['exists (select from c where d', "expected ')' at 1:30, found end of input"],
    ['a in (select from c)', "expected a column at 1:14, found 'from'"],
    ['a in (select b c)', "expected 'from' at 1:16, found 'c'"],
    ['a in (select b from c where)', "expected a column, auth_user.<attr> or a literal at 1:28, found ')'"],
    ['a in (select b from c d)', "expected ')' at 1:23, found 'd'"],
    ['a in (select b.1 from c)', "expected a column at 1:16, found '1'"],
    ['t. = 1', "expected a column at 1:4, found '='"],
    [
      't.a.b = 1',
      "expected a comparison operator, 'is', 'in', 'not in', 'and', 'or' or end of input at 1:4, found '.'",
    ],
  ];

  it.each(errors)('%j → %s', (text, message) => {
    const error = syntaxErrorOf(text);
    expect(error.message).toBe(message);
    expect(error.message).toContain(`${error.line}:${error.column}`);
  });

  it('counts a subquery toward the 128-character limit', () => {
    const text = `exists (select from t where a = '${'x'.repeat(100)}')`;
    expect(syntaxErrorOf(text).message).toMatch(/^expression is longer than 128 characters/);
  });
});
