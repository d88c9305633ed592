import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parseColumnRule, type ColumnRule } from '../../../grammar/column-rule.js';
import { PolicySyntaxError } from '../../../grammar/policy-syntax-error.js';
import { printColumnName, printColumnRule } from '../../../grammar/print-column-rule.js';

/** A rule without positions, for comparing. */
const shape = (rule: ColumnRule): unknown =>
  rule.kind === 'all' ? { kind: 'all' } : { kind: rule.kind, columns: rule.columns.map((c) => c.name) };

describe('parseColumnRule: the forms of a column rule', () => {
  const cases: ReadonlyArray<readonly [string | null, unknown, string]> = [
    [null, { kind: 'all' }, '*'],
    ['', { kind: 'all' }, '*'],
    ['   \n ', { kind: 'all' }, '*'],
    ['*', { kind: 'all' }, '*'],
    [' * ', { kind: 'all' }, '*'],
    ['email', { kind: 'only', columns: ['email'] }, 'email'],
    ['a, b, c', { kind: 'only', columns: ['a', 'b', 'c'] }, 'a, b, c'],
    ['a,b,c', { kind: 'only', columns: ['a', 'b', 'c'] }, 'a, b, c'],
    ['  a ,\n b ', { kind: 'only', columns: ['a', 'b'] }, 'a, b'],
    ['"Email", "first name"', { kind: 'only', columns: ['Email', 'first name'] }, 'Email, "first name"'],
    ['"a""b"', { kind: 'only', columns: ['a"b'] }, '"a""b"'],
    ['"except"', { kind: 'only', columns: ['except'] }, '"except"'],
    ['select, from', { kind: 'only', columns: ['select', 'from'] }, 'select, from'],
    ['exceptional', { kind: 'only', columns: ['exceptional'] }, 'exceptional'],
    ['* except (a, b)', { kind: 'except', columns: ['a', 'b'] }, '* except (a, b)'],
    ['*EXCEPT(a)', { kind: 'except', columns: ['a'] }, '* except (a)'],
    ['* Except ( "x y" )', { kind: 'except', columns: ['x y'] }, '* except ("x y")'],
    ['A, a', { kind: 'only', columns: ['A', 'a'] }, 'A, a'],
  ];
  it.each(cases)('%j', (text, expected, printed) => {
    const rule = parseColumnRule(text);
    expect(shape(rule)).toEqual(expected);
    expect(printColumnRule(rule)).toBe(printed);
  });

  it('names carry their positions', () => {
    const rule = parseColumnRule('a,\n  "b"');
    expect(rule.kind === 'only' ? rule.columns.map((c) => c.pos) : []).toEqual([
      { offset: 0, line: 1, column: 1 },
      { offset: 5, line: 2, column: 3 },
    ]);
  });
});

describe('parseColumnRule: errors with line:column, like expression errors', () => {
  const cases: ReadonlyArray<readonly [string, string]> = [
    ['a, a', "column 'a' is named twice at 1:4 (first at 1:1)"],
    ['a, "a"', "column 'a' is named twice at 1:4 (first at 1:1)"],
    ['* except (b, c, b)', "column 'b' is named twice at 1:17 (first at 1:11)"],
    ['*, a', "expected 'except' or end of input at 1:2, found ','"],
    ['a, *', "expected a column name at 1:4, found '*'"],
    ['a,, b', "expected a column name at 1:3, found ','"],
    [', a', "expected a column name at 1:1, found ','"],
    ['a, b,', 'expected a column name at 1:6, found end of input'],
    ['a, b, ', 'expected a column name at 1:6, found end of input'],
    ['a b', "expected ',' or end of input at 1:3, found 'b'"],
    ['* except', "expected '(' at 1:9, found end of input"],
    ['* except ()', "expected a column name at 1:11, found ')'"],
    ['* except (a,)', "expected a column name at 1:13, found ')'"],
    ['* except (a', "expected ',' or ')' at 1:12, found end of input"],
    ['* except (a) b', "expected end of input at 1:14, found 'b'"],
    [
      'except',
      "expected a column name (a column named 'except' is written \"except\") at 1:1, found 'except'",
    ],
    ['a, "', 'unterminated quoted name starting at 1:4'],
    ['a, ""', 'empty quoted name at 1:4'],
    ['a; b', "unexpected character ';' at 1:2"],
    ["'a'", "unexpected character ''' at 1:1"],
    ['a,\n\tb,', 'expected a column name at 2:4, found end of input'],
    ['**', "expected 'except' or end of input at 1:2, found '*'"],
  ];
  it.each(cases)('%j → %s', (text, message) => {
    let error: unknown;
    try {
      parseColumnRule(text);
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(PolicySyntaxError);
    const e = error as PolicySyntaxError;
    expect(e.message).toBe(message);
    expect(e.code).toBe('invalid_policy');
    expect(e.toBody().error.details).toEqual(
      expect.objectContaining({ line: e.line, column: e.column, expected: e.expected, found: e.found }),
    );
  });

  it('more than 256 characters is refused at the first character past the limit', () => {
    const text = Array.from({ length: 60 }, (_, i) => `c${i}`).join(', ');
    expect(() => parseColumnRule(text)).toThrow(
      /^columns is longer than 256 characters at 1:257 \(it has \d+\)$/,
    );
  });
});

describe('printColumnRule: canonical text that parses back to the same rule', () => {
  const name = fc.oneof(
    fc.stringMatching(/^[A-Za-z_][A-Za-z0-9_]{0,6}$/),
    fc.constantFrom('except', 'EXCEPT', 'select', 'a b', 'x"y', 'É', '*', ',', '(a)'),
    fc.string({ minLength: 1, maxLength: 6 }),
  );
  const names = fc.uniqueArray(name, { minLength: 1, maxLength: 6 });
  const rule: fc.Arbitrary<ColumnRule> = fc.oneof(
    fc.constant<ColumnRule>({ kind: 'all' }),
    names.map((ns): ColumnRule => ({
      kind: 'only',
      columns: ns.map((n) => ({ name: n, pos: { offset: 0, line: 1, column: 1 } })),
    })),
    names.map((ns): ColumnRule => ({
      kind: 'except',
      columns: ns.map((n) => ({ name: n, pos: { offset: 0, line: 1, column: 1 } })),
    })),
  );

  it('parse(print(rule)) equals rule', () => {
    fc.assert(
      fc.property(rule, (r) => {
        expect(shape(parseColumnRule(printColumnRule(r)))).toEqual(shape(r));
      }),
      { numRuns: 500 },
    );
  });

  it('print(parse(text)) is a fixed point for any text that parses', () => {
    const pieces = fc.array(
      fc.constantFrom('*', 'except', '(', ')', ',', ' ', 'a', 'b', '"c d"', 'EXCEPT', '\n'),
      {
        maxLength: 10,
      },
    );
    fc.assert(
      fc.property(pieces, (parts) => {
        const text = parts.join('');
        let rule: ColumnRule;
        try {
          rule = parseColumnRule(text);
        } catch (e) {
          expect(e).toBeInstanceOf(PolicySyntaxError);
          return;
        }
        const printed = printColumnRule(rule);
        expect(printColumnRule(parseColumnRule(printed))).toBe(printed);
      }),
      { numRuns: 1000 },
    );
  });

  it('quotes a name only when it must', () => {
    expect(
      ['email', 'Email', '_x1', 'except', 'Except', '1a', 'a b', 'a"b', ''].map(printColumnName),
    ).toEqual(['email', 'Email', '_x1', '"except"', '"Except"', '"1a"', '"a b"', '"a""b"', '""']);
  });
});
