import { describe, expect, it } from 'vitest';
import { analyze, policyProblemError } from '../../../compiler/analyze.js';
import type { ColumnTypes } from '../../../compiler/types.js';
import { ast } from '../../../grammar/ast.js';
import { parsePolicy } from '../../../grammar/parse-policy.js';
import { printPolicy } from '../../../grammar/print-policy.js';

const COLUMNS: ColumnTypes = new Map([
  ['id', 'integer'],
  ['user_id', 'integer'],
  ['org', 'text'],
  ['score', 'decimal'],
  ['flag', 'boolean'],
  ['meta', 'other'],
] as const);

describe('analyze', () => {
  it('lists the columns named, once each, and says whether auth_user alone decides', () => {
    const a = analyze(
      parsePolicy('user_id = auth_user.id or (org = auth_user.claims.org and user_id > 3)'),
      COLUMNS,
    );
    expect(a.columns).toEqual(['user_id', 'org']);
    expect(a.authOnly).toBe(false);
    expect(a.problems).toEqual([]);
    expect(analyze(parsePolicy('auth_user.is_admin or auth_user.claims.ok'), COLUMNS).authOnly).toBe(true);
    expect(analyze(parsePolicy(''), COLUMNS).authOnly).toBe(true);
  });

  it('splits the top-level conjuncts into auth_user-only parts and row parts', () => {
    const a = analyze(
      parsePolicy(
        'auth_user.is_authenticated and (user_id = auth_user.id or auth_user.is_admin) and not auth_user.claims.banned',
      ),
    );
    expect(a.authParts.map(printPolicy)).toEqual([
      'auth_user.is_authenticated',
      'not auth_user.claims.banned',
    ]);
    expect(a.rowParts.map(printPolicy)).toEqual(['user_id = auth_user.id or auth_user.is_admin']);
    expect(analyze(parsePolicy('auth_user.is_admin')).rowParts).toEqual([]);
  });

  it('reports the columns the table lacks (only when column types are given)', () => {
    expect(analyze(parsePolicy('owner_id = auth_user.id and org is null'), COLUMNS).missingColumns).toEqual([
      'owner_id',
    ]);
    const untyped = analyze(parsePolicy('owner_id = auth_user.id'));
    expect(untyped.missingColumns).toEqual([]);
    expect(untyped.problems).toEqual([]);
  });

  it.each([
    ['user_id = user_id', "compares column 'user_id' with itself", 1, 1],
    ["user_id = 'a'", 'cannot compare a number with a text', 1, 1],
    ['flag = 1', 'cannot compare a boolean with a number', 1, 1],
    ['x = 1 or\n  auth_user.is_admin = auth_user.id', 'cannot compare a boolean with a number', 2, 3],
    ['org', 'expected a condition, found a text', 1, 1],
    ['auth_user.id or flag', 'expected a condition, found a number', 1, 1],
    ['not 5', 'expected a condition, found a number', 1, 5],
    ['meta = 1', "'=' needs values of type number, text or boolean; use 'is null' for other columns", 1, 1],
    ["org in ('a', 1)", "'in' needs", 1, 14],
    ["auth_user.claims.x in ('a', 1)", "the values of 'in' must be of one type: a text and a number", 1, 29],
  ] as const)('%s → %s at %i:%i', (text, message, line, column) => {
    const problem = analyze(parsePolicy(text), COLUMNS).problems[0];
    expect(problem?.message).toContain(message.replace("'in' needs", 'cannot compare a text with a number'));
    expect([problem?.pos.line, problem?.pos.column]).toEqual([line, column]);
  });

  it.each([
    'meta is null',
    'auth_user.claims.x = org',
    'null = flag',
    'score < 1',
    'score = auth_user.id',
    "flag = (org = 'a')",
  ])('accepts %s', (text) => {
    expect(analyze(parsePolicy(text), COLUMNS).problems).toEqual([]);
  });

  it('rejects an integer beyond 2^53 in an AST built without the parser', () => {
    const expr = ast.compare('=', ast.column('id'), ast.integer(2 ** 60, { offset: 5, line: 1, column: 6 }));
    expect(analyze(expr, COLUMNS).problems).toEqual([
      {
        message: 'integer 1152921504606847000 is out of range (at most 9007199254740991 in size)',
        pos: { offset: 5, line: 1, column: 6 },
      },
    ]);
  });

  it('turns a problem into 400 invalid_policy with its position', () => {
    const problem = analyze(parsePolicy('  flag = 1'), COLUMNS).problems[0];
    if (problem === undefined) throw new Error('expected a problem');
    const error = policyProblemError(problem);
    expect([error.status, error.code, error.message]).toEqual([
      400,
      'invalid_policy',
      'cannot compare a boolean with a number at 1:3',
    ]);
    expect(error.details).toEqual({ line: 1, column: 3 });
  });
});
