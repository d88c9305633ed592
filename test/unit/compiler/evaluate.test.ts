import { describe, expect, it } from 'vitest';
import type { ColumnTypes } from '../../../compiler/types.js';
import { evaluate } from '../../../compiler/evaluate.js';
import { ANONYMOUS, type AuthUser } from '../../../compiler/types.js';
import { parsePolicy } from '../../../grammar/parse-policy.js';

const COLUMNS: ColumnTypes = new Map([
  ['id', 'integer'],
  ['user_id', 'integer'],
  ['org', 'text'],
  ['score', 'decimal'],
  ['flag', 'boolean'],
  ['name', 'text'],
] as const);

const user = (over: Partial<AuthUser> = {}): AuthUser => ({
  id: 7,
  username: 'alice',
  is_admin: false,
  is_authenticated: true,
  claims: {},
  ...over,
});
const ADMIN = user({ id: 1, username: 'root', is_admin: true });

type Row = Readonly<Record<string, unknown>>;
const cases: readonly (readonly [string, AuthUser, Row, boolean | null])[] = [
  // The seed's four forms.
  ['', ANONYMOUS, {}, true],
  ['auth_user.is_authenticated', ANONYMOUS, {}, false],
  ['auth_user.is_authenticated', user(), {}, true],
  ['auth_user.is_admin', user(), {}, false],
  ['auth_user.is_admin', ADMIN, {}, true],
  ['user_id = auth_user.id', ANONYMOUS, { user_id: 7 }, null],
  ['user_id = auth_user.id', user(), { user_id: 7 }, true],
  ['user_id=auth_user.id', user(), { user_id: '7' }, true],
  ['user_id = auth_user.id', user(), { user_id: 8 }, false],
  ['user_id = auth_user.id', user(), { user_id: null }, null],
  ['auth_user.username is null', ANONYMOUS, {}, true],
  // NULL compares unknown; Kleene and/or/not.
  ['user_id = null', user(), { user_id: 7 }, null],
  ['null = null', user(), {}, null],
  ['not (user_id = null)', user(), { user_id: 7 }, null],
  ['user_id = null or true', user(), { user_id: 7 }, true],
  ['user_id = null and false', user(), { user_id: 7 }, false],
  ['user_id = null and true', user(), { user_id: 7 }, null],
  ['flag', user(), { flag: null }, null],
  ['not flag', user(), { flag: 0 }, true],
  ['flag', user(), { flag: 1 }, true],
  ['flag is not null', user(), { flag: false }, true],
  // IN as SQL: a NULL in the list makes "not found" unknown.
  ['user_id in (1, 7)', user(), { user_id: 7 }, true],
  ['user_id in (1, null)', user(), { user_id: 7 }, null],
  ['user_id in (7, null)', user(), { user_id: 7 }, true],
  ['user_id not in (1, null)', user(), { user_id: 7 }, null],
  ['user_id not in (1, 2)', user(), { user_id: 7 }, true],
  ['user_id not in (1, 2)', user(), { user_id: null }, null],
  // Numbers: decimals from drivers arrive as strings.
  ['score = 1.5', user(), { score: '1.50' }, true],
  ['score > 1', user(), { score: '1.01' }, true],
  ['score < -0.5', user(), { score: -1 }, true],
  ['id >= 2', user(), { id: BigInt(2) }, true],
  // Text: exact, by code point.
  ["name = 'a'", user(), { name: 'A' }, false],
  ["name = 'a'", user(), { name: 'a ' }, false],
  ["name = 'e'", user(), { name: 'é' }, false],
  ["name < 'b'", user(), { name: 'B' }, true],
  ["name > '\uffff'", user(), { name: '😀' }, true],
  ["name < 'a'", user(), { name: '' }, true],
  // Claims: typed by what they are compared with; missing → NULL.
  ['org = auth_user.claims.org', user({ claims: { org: 'acme' } }), { org: 'acme' }, true],
  ['org = auth_user.claims.org', user(), { org: 'acme' }, null],
  ['org = auth_user.claims.org', user({ claims: { org: 5 } }), { org: '5' }, null],
  ['user_id = auth_user.claims.uid', user({ claims: { uid: '7' } }), { user_id: 7 }, true],
  ['user_id = auth_user.claims.uid', user({ claims: { uid: '007' } }), { user_id: 7 }, true],
  ['user_id = auth_user.claims.uid', user({ claims: { uid: ' 7' } }), { user_id: 7 }, null],
  ['user_id = auth_user.claims.uid', user({ claims: { uid: '7e0' } }), { user_id: 7 }, null],
  ['user_id = auth_user.claims.uid', user({ claims: { uid: 7 } }), { user_id: 7 }, true],
  ['user_id < auth_user.claims.uid', user({ claims: { uid: '1234567890123456' } }), { user_id: 7 }, null],
  ['user_id < auth_user.claims.uid', user({ claims: { uid: '123456789012345' } }), { user_id: 7 }, true],
  ['flag = auth_user.claims.ok', user({ claims: { ok: 'true' } }), { flag: true }, null],
  ['flag = auth_user.claims.ok', user({ claims: { ok: true } }), { flag: true }, true],
  ['auth_user.claims.ok', user({ claims: { ok: true } }), {}, true],
  ['auth_user.claims.ok', user({ claims: { ok: 1 } }), {}, null],
  ['auth_user.claims.ok is null', user({ claims: { ok: null } }), {}, true],
  ['auth_user.claims.ok is not null', user({ claims: { ok: [] } }), {}, true],
  ["auth_user.claims.org in ('a', 'b')", user({ claims: { org: 'b' } }), {}, true],
  ['auth_user.claims.n in (1, 2)', user({ claims: { n: '2' } }), {}, true],
  ["auth_user.claims.org = 'a'", user({ claims: { org: 'a\u0000' } }), {}, null],
  ['auth_user.claims.org is null', user({ claims: { org: 'a\u0000' } }), {}, true],
];

describe('evaluate: three-valued, with SQL semantics', () => {
  it.each(cases)('%s for %o on %o is %s', (text, u, row, expected) => {
    expect(evaluate(parsePolicy(text), u, row, COLUMNS)).toBe(expected);
  });

  it('reads a column missing from the row as NULL', () => {
    expect(evaluate(parsePolicy('user_id = auth_user.id'), user(), {}, COLUMNS)).toBeNull();
  });
});
