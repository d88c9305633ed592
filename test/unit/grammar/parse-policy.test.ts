import { describe, expect, it } from 'vitest';
import { ast, type Expr, type Position } from '../../../grammar/ast.js';
import { parsePolicy } from '../../../grammar/parse-policy.js';
import { stripPositions } from '../../support/policy-arbitraries.js';

const a = ast.column('a');
const b = ast.column('b');
const c = ast.column('c');
const one = ast.integer(1);
const eq = (left: Expr, right: Expr): Expr => ast.compare('=', left, right);
const owner = eq(ast.column('user_id'), ast.auth('id'));

type Case = readonly [string, Expr];

const seedForms: readonly Case[] = [
  ['', ast.anyone()],
  ['   \n\t ', ast.anyone()],
  ['auth_user.is_authenticated', ast.auth('is_authenticated')],
  ['  auth_user.is_authenticated\n', ast.auth('is_authenticated')],
  ['auth_user.is_admin', ast.auth('is_admin')],
  ['user_id=auth_user.id', owner],
  ['user_id = auth_user.id', owner],
  [' user_id =auth_user.id ', owner],
  ['user_id\t=\r\nauth_user.id', owner],
];

const operands: readonly Case[] = [
  ['is_public', ast.column('is_public')],
  ['_x9', ast.column('_x9')],
  ['MixedCase', ast.column('MixedCase')],
  ['notes', ast.column('notes')],
  ['order_id', ast.column('order_id')],
  ['auth_user_id', ast.column('auth_user_id')],
  ['"order"', ast.column('order')],
  ['"and"', ast.column('and')],
  ['"AUTH_USER"', ast.column('AUTH_USER')],
  ['"two words"', ast.column('two words')],
  ['"we""ird"', ast.column('we"ird')],
  ['""""', ast.column('"')],
  ['auth_user.id', ast.auth('id')],
  ['auth_user.username', ast.auth('username')],
  ['auth_user.is_admin', ast.auth('is_admin')],
  ['auth_user.is_authenticated', ast.auth('is_authenticated')],
  ['auth_user . id', ast.auth('id')],
  ['auth_user.claims.org_id', ast.claim('org_id')],
  ['auth_user.claims.Org_Id', ast.claim('Org_Id')],
  ['auth_user.claims.in', ast.claim('in')],
  ['(a)', a],
  ['((a))', a],
];

const literals: readonly Case[] = [
  ['0', ast.integer(0)],
  ['-0', ast.integer(0)],
  ['42', ast.integer(42)],
  ['-7', ast.integer(-7)],
  ['007', ast.integer(7)],
  ['9007199254740991', ast.integer(Number.MAX_SAFE_INTEGER)],
  ['-9007199254740991', ast.integer(Number.MIN_SAFE_INTEGER)],
  ['1.5', ast.decimal(1.5)],
  ['-0.25', ast.decimal(-0.25)],
  ['-0.0', ast.decimal(0)],
  ['2.50', ast.decimal(2.5)],
  ['0.00000015', ast.decimal(1.5e-7)],
  ["'text'", ast.string('text')],
  ["''", ast.string('')],
  ["'it''s'", ast.string("it's")],
  ["''''", ast.string("'")],
  ['\'say "hi"\'', ast.string('say "hi"')],
  ["'two\nlines'", ast.string('two\nlines')],
  ["'ünïcødé 😀'", ast.string('ünïcødé 😀')],
  ["'and or not'", ast.string('and or not')],
  ['true', ast.boolean(true)],
  ['false', ast.boolean(false)],
  ['null', ast.null()],
];

const comparisons: readonly Case[] = [
  ['a = 1', eq(a, one)],
  ['a != 1', ast.compare('!=', a, one)],
  ['a <> 1', ast.compare('!=', a, one)],
  ['a < 1', ast.compare('<', a, one)],
  ['a <= 1', ast.compare('<=', a, one)],
  ['a > 1', ast.compare('>', a, one)],
  ['a >= 1', ast.compare('>=', a, one)],
  ['a<>1', ast.compare('!=', a, one)],
  ['a<=-1', ast.compare('<=', a, ast.integer(-1))],
  ['a>=b', ast.compare('>=', a, b)],
  ['1 = a', eq(one, a)],
  ['auth_user.id = auth_user.claims.sub', eq(ast.auth('id'), ast.claim('sub'))],
  ['org_id = auth_user.claims.org_id', eq(ast.column('org_id'), ast.claim('org_id'))],
  ["auth_user.username = 'alice'", eq(ast.auth('username'), ast.string('alice'))],
  ['(a = 1) = true', eq(eq(a, one), ast.boolean(true))],
  ['a = (b = 1)', eq(a, eq(b, one))],
  ['a is null', ast.isNull(a, false)],
  ['a is not null', ast.isNull(a, true)],
  ['auth_user.claims.team is null', ast.isNull(ast.claim('team'), false)],
  ['a in (1)', ast.in(a, [one], false)],
  [
    "a in (1, 2.5, 'x', true, false, null)",
    ast.in(
      a,
      [one, ast.decimal(2.5), ast.string('x'), ast.boolean(true), ast.boolean(false), ast.null()],
      false,
    ),
  ],
  ['a not in (1,2)', ast.in(a, [one, ast.integer(2)], true)],
  ['(a or b) in (1)', ast.in(ast.or([a, b]), [one], false)],
];

const logic: readonly Case[] = [
  ['not a', ast.not(a)],
  ['not not a', ast.not(ast.not(a))],
  ['not a = 1', ast.not(eq(a, one))],
  ['not a in (1)', ast.not(ast.in(a, [one], false))],
  ['not (a or b)', ast.not(ast.or([a, b]))],
  ['a and b', ast.and([a, b])],
  ['a and b and c', ast.and([a, b, c])],
  ['a or b or c', ast.or([a, b, c])],
  ['a or b and c', ast.or([a, ast.and([b, c])])],
  ['a and b or c', ast.or([ast.and([a, b]), c])],
  ['(a or b) and c', ast.and([ast.or([a, b]), c])],
  ['(a and b) and c', ast.and([ast.and([a, b]), c])],
  ['not a and b', ast.and([ast.not(a), b])],
  [
    'not a = 1 and b = 2 or c = 3',
    ast.or([ast.and([ast.not(eq(a, one)), eq(b, ast.integer(2))]), eq(c, ast.integer(3))]),
  ],
  ['user_id = auth_user.id or auth_user.is_admin', ast.or([owner, ast.auth('is_admin')])],
  ['a = 1\nand\nb = 2', ast.and([eq(a, one), eq(b, ast.integer(2))])],
];

const caseInsensitive: readonly Case[] = [
  ['A AND B', ast.and([ast.column('A'), ast.column('B')])],
  ['a Or b', ast.or([a, b])],
  ['NoT a', ast.not(a)],
  ['a IS NOT NULL', ast.isNull(a, true)],
  ['a Is Null', ast.isNull(a, false)],
  ['a NOT IN (TRUE, False, NULL)', ast.in(a, [ast.boolean(true), ast.boolean(false), ast.null()], true)],
  ['AUTH_USER.ID = User_Id', eq(ast.auth('id'), ast.column('User_Id'))],
  ['Auth_User.Is_Admin', ast.auth('is_admin')],
  ['AUTH_USER.IS_AUTHENTICATED', ast.auth('is_authenticated')],
  ['AUTH_USER.CLAIMS.OrgId', ast.claim('OrgId')],
];

describe('parsePolicy', () => {
  describe.each([
    ['seed forms', seedForms],
    ['operands', operands],
    ['literals', literals],
    ['comparisons', comparisons],
    ['and, or, not and precedence', logic],
    ['case-insensitive keywords', caseInsensitive],
  ] as const)('%s', (_group, cases) => {
    it.each(cases)('parses %j', (text, expected) => {
      expect(stripPositions(parsePolicy(text))).toEqual(stripPositions(expected));
    });
  });

  it('parses the deepest parenthesised and negated expressions that fit in 128 characters', () => {
    expect(stripPositions(parsePolicy(`${'('.repeat(63)}a${')'.repeat(63)}`))).toEqual(stripPositions(a));
    let expected: Expr = a;
    for (let i = 0; i < 31; i += 1) expected = ast.not(expected);
    expect(stripPositions(parsePolicy(`${'not '.repeat(31)}a`))).toEqual(stripPositions(expected));
  });

  it('accepts exactly 128 characters, counted in code points', () => {
    const ascii = `a = '${'x'.repeat(122)}'`;
    expect(ascii).toHaveLength(128);
    expect(stripPositions(parsePolicy(ascii))).toEqual(stripPositions(eq(a, ast.string('x'.repeat(122)))));
    const emoji = `a = '${'😀'.repeat(122)}'`;
    expect(stripPositions(parsePolicy(emoji))).toEqual(stripPositions(eq(a, ast.string('😀'.repeat(122)))));
  });

  it('returns frozen nodes', () => {
    const e = parsePolicy('a = 1 and b in (1, 2)');
    expect(Object.isFrozen(e)).toBe(true);
    if (e.kind !== 'and') throw new Error(`expected and, got ${e.kind}`);
    expect(Object.isFrozen(e.operands)).toBe(true);
    expect(Object.isFrozen(e.operands[1])).toBe(true);
    expect(Object.isFrozen(e.pos)).toBe(true);
  });
});

describe('parsePolicy positions', () => {
  const at = (offset: number, line: number, column: number): Position => ({ offset, line, column });
  /** Follows `path` (property names and indexes) from the root to one node. */
  const nodeAt = (root: Expr, path: readonly (string | number)[]): Expr =>
    path.reduce<unknown>((n, key) => (n as Record<string | number, unknown>)[key], root) as Expr;

  it.each([
    ['a = 1', [], at(0, 1, 1)],
    ['a = 1', ['right'], at(4, 1, 5)],
    ['  a = 1', [], at(2, 1, 3)],
    ['(a) = 1', [], at(0, 1, 1)],
    ['(a) = 1', ['left'], at(1, 1, 2)],
    ['x or (a = 1)', ['operands', 1], at(6, 1, 7)],
    ['x and\n  b is null', [], at(0, 1, 1)],
    ['x and\n  b is null', ['operands', 1], at(8, 2, 3)],
    ['x and\r\n  b is null', ['operands', 1], at(9, 2, 3)],
    ['x or\n not y', ['operands', 1], at(6, 2, 2)],
    ['x or\n not y', ['operands', 1, 'operand'], at(10, 2, 6)],
    ['a in (1,\n 22)', ['values', 1], at(10, 2, 2)],
    ['auth_user.claims.org = 1', ['left'], at(0, 1, 1)],
    ['\'a\nb\' = "c"', ['right'], at(8, 2, 6)],
  ] as const)('positions %j at %j', (text, path, expected) => {
    expect(nodeAt(parsePolicy(text), path).pos).toEqual(expected);
  });
});
