import { describe, expect, it } from 'vitest';
import { ast, type Expr } from '../../../grammar/ast.js';
import { parsePolicy } from '../../../grammar/parse-policy.js';
import { printPolicy } from '../../../grammar/print-policy.js';
import { RestError } from '../../../errors/rest-error.js';
import { stripPositions } from '../../support/policy-arbitraries.js';

const a = ast.column('a');
const b = ast.column('b');
const c = ast.column('c');
const one = ast.integer(1);
const eq = (left: Expr, right: Expr): Expr => ast.compare('=', left, right);

const printed: readonly (readonly [Expr, string])[] = [
  [ast.anyone(), ''],
  [ast.auth('is_authenticated'), 'auth_user.is_authenticated'],
  [eq(ast.column('user_id'), ast.auth('id')), 'user_id = auth_user.id'],
  [eq(ast.column('org_id'), ast.claim('org_id')), 'org_id = auth_user.claims.org_id'],
  [eq(ast.claim('in'), one), 'auth_user.claims.in = 1'],
  // precedence: parentheses only where needed
  [ast.or([a, ast.and([b, c])]), 'a or b and c'],
  [ast.and([ast.or([a, b]), c]), '(a or b) and c'],
  [ast.and([ast.and([a, b]), c]), '(a and b) and c'],
  [ast.or([ast.or([a, b]), c]), '(a or b) or c'],
  [ast.not(ast.and([a, b])), 'not (a and b)'],
  [ast.not(eq(a, one)), 'not a = 1'],
  [ast.not(ast.not(a)), 'not not a'],
  [ast.and([ast.not(a), ast.isNull(b, true)]), 'not a and b is not null'],
  [eq(eq(a, one), ast.boolean(true)), '(a = 1) = true'],
  [eq(a, ast.not(b)), 'a = (not b)'],
  [ast.isNull(ast.or([a, b]), false), '(a or b) is null'],
  [ast.in(eq(a, one), [ast.boolean(true)], true), '(a = 1) not in (true)'],
  [ast.compare('!=', a, ast.integer(-5)), 'a != -5'],
  [ast.in(a, [one, ast.string('x'), ast.null()], false), "a in (1, 'x', null)"],
  // identifiers
  [ast.column('order'), 'order'],
  [ast.column('And'), '"And"'],
  [ast.column('auth_user'), '"auth_user"'],
  [ast.column('two words'), '"two words"'],
  [ast.column('we"ird'), '"we""ird"'],
  [ast.column('1st'), '"1st"'],
  // literals
  [ast.string("it's"), "'it''s'"],
  [ast.string(''), "''"],
  [ast.decimal(2), '2.0'],
  [ast.decimal(-0.25), '-0.25'],
  [ast.decimal(1.5e-7), '0.00000015'],
  [ast.decimal(1e21), '1000000000000000000000.0'],
  [ast.decimal(-1.25e22), '-12500000000000000000000.0'],
  [ast.integer(Number.MIN_SAFE_INTEGER), '-9007199254740991'],
  [ast.boolean(false), 'false'],
  [ast.null(), 'null'],
];

describe('printPolicy', () => {
  it.each(printed)('prints %j as %j and reads it back', (e, text) => {
    expect(printPolicy(e)).toBe(text);
    expect(stripPositions(parsePolicy(text))).toEqual(stripPositions(e));
  });

  it.each([
    ['A AND NOT B', 'A and not B'],
    ['a <> 1', 'a != 1'],
    ['  user_id=auth_user.id ', 'user_id = auth_user.id'],
    ['((a)) OR (b AND c)', 'a or b and c'],
    ['AUTH_USER.IS_ADMIN', 'auth_user.is_admin'],
    ['"plain" = 1.50', 'plain = 1.5'],
    ['a IS NOT NULL', 'a is not null'],
  ])('canonicalises %j to %j', (input, canonical) => {
    expect(printPolicy(parsePolicy(input))).toBe(canonical);
  });

  it.each([
    ['decimal NaN', ast.decimal(Number.NaN)],
    ['decimal Infinity', ast.decimal(Number.POSITIVE_INFINITY)],
    ['unsafe integer 2^60', ast.integer(2 ** 60)],
    ['fractional integer 1.5', ast.integer(1.5)],
  ])('refuses to print a %s, which the language cannot read back', (_what, literal) => {
    expect(() => printPolicy(eq(a, literal))).toThrow(RestError);
  });
});
