import { describe, expect, it } from 'vitest';
import { formatPolicyError } from '../../../grammar/policy-syntax-error.js';
import { syntaxErrorOf } from '../../support/thrown.js';

const OPERAND = 'a column, auth_user.<attr> or a literal';
const AUTH = "id, username, is_admin, is_authenticated or claims.<name> after 'auth_user.'";
const AFTER_OPERAND = "a comparison operator, 'is', 'in', 'not in', 'and', 'or' or end of input";
const AFTER_CONDITION = "'and', 'or' or end of input";

const messages: readonly (readonly [string, string])[] = [
  // operands
  ['user_id = ', `expected ${OPERAND} at 1:10, found end of input`],
  ['user_id = =', `expected ${OPERAND} at 1:11, found '='`],
  ['user_id ==auth_user.id', `expected ${OPERAND} at 1:10, found '='`],
  ['= 1', `expected ${OPERAND} at 1:1, found '='`],
  [')', `expected ${OPERAND} at 1:1, found ')'`],
  ['a and', `expected ${OPERAND} at 1:6, found end of input`],
  ['a or  \n ', `expected ${OPERAND} at 1:5, found end of input`],
  ['not', `expected ${OPERAND} at 1:4, found end of input`],
  ['a and or b', `expected ${OPERAND} at 1:7, found 'or'`],
  ['a = in', `expected ${OPERAND} at 1:5, found 'in'`],
  ['a = not b', `expected ${OPERAND} at 1:5, found 'not'`],
  // what may follow
  ['a b', `expected ${AFTER_OPERAND} at 1:3, found 'b'`],
  ["a 'xyz'", `expected ${AFTER_OPERAND} at 1:3, found 'xyz'`],
  ['a = 1 b', `expected ${AFTER_CONDITION} at 1:7, found 'b'`],
  ['a = 1 )', `expected ${AFTER_CONDITION} at 1:7, found ')'`],
  ['a = b = c', `expected ${AFTER_CONDITION} at 1:7, found '='`],
  ['a is null b', `expected ${AFTER_CONDITION} at 1:11, found 'b'`],
  ['a in (1) = 2', `expected ${AFTER_CONDITION} at 1:10, found '='`],
  ["a 'two\nlines'", `expected ${AFTER_OPERAND} at 1:3, found 'two\\nlines'`],
  [
    'a = 1 "a_very_long_quoted_column_name"',
    `expected ${AFTER_CONDITION} at 1:7, found "a_very_long_quoted_col…`,
  ],
  // parentheses, is, in
  ['(a = 1', "expected ')' at 1:7, found end of input"],
  ['(user_id = auth_user.id', "expected ')' at 1:24, found end of input"],
  ['(a = 1 b', "expected ')' at 1:8, found 'b'"],
  ['a is 1', "expected 'null' at 1:6, found '1'"],
  ['a is not', "expected 'null' at 1:9, found end of input"],
  ['a not b', "expected 'in' at 1:7, found 'b'"],
  ['a in 1', "expected '(' at 1:6, found '1'"],
  ['a in ()', "expected a literal or 'select' at 1:7, found ')'"],
  ['a in (b)', "expected a literal or 'select' at 1:7, found 'b'"],
  ['a in (1,)', "expected a literal at 1:9, found ')'"],
  ['a in (1 2)', "expected ')' at 1:9, found '2'"],
  // auth_user
  ['auth_user = 1', "expected '.' at 1:11, found '='"],
  ['auth_user.', `expected ${AUTH.replace(" after 'auth_user.'", '')} at 1:11, found end of input`],
  ['auth_user.foo', `expected ${AUTH} at 1:11, found 'foo'`],
  ['AUTH_USER.Password = 1', `expected ${AUTH} at 1:11, found 'Password'`],
  ['auth_user.claims', `expected ${AUTH} at 1:11, found 'claims'`],
  ['auth_user.id.x', `expected ${AUTH} at 1:11, found 'id.x'`],
  ['auth_user.claims.', 'expected a claim name at 1:18, found end of input'],
  ['auth_user.claims.1', "expected a claim name at 1:18, found '1'"],
  // numbers and length
  [
    'a = 9007199254740992',
    "expected an integer between -9007199254740991 and 9007199254740991 at 1:5, found '9007199254740992'",
  ],
  [
    'a = -99999999999999999999',
    "expected an integer between -9007199254740991 and 9007199254740991 at 1:5, found '-99999999999999999999'",
  ],
  [`a = '${'x'.repeat(130)}'`, 'expression is longer than 128 characters at 1:129 (it has 136)'],
  [`a = 1 or\n b = '${'x'.repeat(130)}'`, 'expression is longer than 128 characters at 2:120 (it has 146)'],
  [`a = '${'😀'.repeat(124)}'`, 'expression is longer than 128 characters at 1:252 (it has 130)'],
  // multi-line
  ['a\n  and = 3', `expected ${OPERAND} at 2:7, found '='`],
  ['a = 1 and\r\nb = = 2', `expected ${OPERAND} at 2:5, found '='`],
  ['a = 1 or\n(b = 2\n\n', "expected ')' at 2:7, found end of input"],
  // lexer
  ['a # b', "unexpected character '#' at 1:3"],
  ['a = - 1', "unexpected character '-' at 1:5"],
  ['a ! b', "unexpected character '!' at 1:3"],
  ['a = 1;', "unexpected character ';' at 1:6"],
  ['a = `b`', "unexpected character '`' at 1:5"],
  ['é = 1', "unexpected character 'é' at 1:1"],
  ['a = 😀', "unexpected character '😀' at 1:5"],
  ['a\u200b= 1', 'unexpected character U+200B at 1:2'],
  ['a = 1\n\u0000', 'unexpected character U+0000 at 2:1'],
  ["x = 'abc", 'unterminated string starting at 1:5'],
  ["x = 'it''s", 'unterminated string starting at 1:9'],
  ['"abc = 1', 'unterminated quoted name starting at 1:1'],
  ['"" = 1', 'empty quoted name at 1:1'],
  ['a = 1 and\n  "x', 'unterminated quoted name starting at 2:3'],
];

describe('parsePolicy errors', () => {
  it.each(messages)('%j → %s', (text, message) => {
    const error = syntaxErrorOf(text);
    expect(error.message).toBe(message);
    expect(error.code).toBe('invalid_policy');
    expect(error.category).toBe('invalid_input');
    expect(error.status).toBe(400);
    expect(error.exitCode).toBe(2);
  });

  it.each([
    ['user_id = =', { line: 1, column: 11, offset: 10, expected: OPERAND, found: "'='" }],
    ['(a = 1', { line: 1, column: 7, offset: 6, expected: "')'", found: 'end of input' }],
    [
      'a\n #',
      {
        line: 2,
        column: 2,
        offset: 3,
        expected: "a name, a number, a quoted string or name, an operator, '(', ')', ',' or '.'",
        found: "'#'",
      },
    ],
    ["a = 'x", { line: 1, column: 5, offset: 4, expected: "a closing '", found: 'end of input' }],
    ['auth_user.x', { line: 1, column: 11, offset: 10, expected: AUTH, found: "'x'" }],
    [
      `a = '${'x'.repeat(124)}'`,
      { line: 1, column: 129, offset: 128, expected: 'at most 128 characters', found: '130 characters' },
    ],
  ] as const)('%j carries line, column, offset, expected and found', (text, fields) => {
    const error = syntaxErrorOf(text);
    expect({
      line: error.line,
      column: error.column,
      offset: error.offset,
      expected: error.expected,
      found: error.found,
    }).toEqual(fields);
    expect(error.details).toEqual({
      line: fields.line,
      column: fields.column,
      expected: fields.expected,
      found: fields.found,
    });
    expect(error.toBody()).toEqual({
      error: { code: 'invalid_policy', message: error.message, details: error.details },
    });
  });
});

describe('formatPolicyError', () => {
  it.each([
    ['user_id = =', `user_id = =\n          ^\nexpected ${OPERAND} at 1:11, found '='`],
    ['(a = 1', "(a = 1\n      ^\nexpected ')' at 1:7, found end of input"],
    ['a = 1 and\nb = = 2', `b = = 2\n    ^\nexpected ${OPERAND} at 2:5, found '='`],
    ['a = 1 or\r\n\tb # 2', "\tb # 2\n\t  ^\nunexpected character '#' at 2:4"],
    ['# a', "# a\n^\nunexpected character '#' at 1:1"],
  ])('shows the offending line of %j with a caret under the column', (text, expected) => {
    expect(formatPolicyError(text, syntaxErrorOf(text))).toBe(expected);
  });
});
