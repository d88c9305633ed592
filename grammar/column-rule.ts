// parseColumnRule: the `columns` text of a policy row (docs/policy-language.md) → which columns
// the row grants. Throws only PolicySyntaxError (line:column, what was expected and found), like
// parsePolicy:
//
//   rule  := ε | "*" [ "except" "(" names ")" ] | names
//   names := name ("," name)*
//   name  := identifier | "quoted identifier"
//
// NULL, empty or blank text and `*` grant every column. `except` is a keyword (any case): a column
// named so is written `"except"`. A name given twice, `*, a`, an empty item and a trailing comma
// are errors. The chevrotain lexer reuses the policy language's identifier tokens; the grammar is
// LL(1) and small enough to be read off the function below.

import { Lexer, createToken, type IToken } from 'chevrotain';
import type { Position } from './ast.js';
import { describeCharacter, END_OF_INPUT } from './error-messages.js';
import { positionAt } from './parse-policy.js';
import { PolicySyntaxError } from './policy-syntax-error.js';
import { Comma, Identifier, LParen, QuotedIdentifier, RParen, WhiteSpace } from './tokens.js';

/** docs/authentication.md: `auth_policies.columns varchar(256)`, counted in code points. */
export const MAX_COLUMN_RULE_LENGTH = 256;

export interface ColumnName {
  readonly name: string;
  readonly pos: Position;
}

/**
 * `all`: every column (NULL, empty, `*`); `only`: the columns listed; `except`: every column but
 * those listed.
 */
export type ColumnRule =
  | { readonly kind: 'all' }
  | { readonly kind: 'only'; readonly columns: readonly ColumnName[] }
  | { readonly kind: 'except'; readonly columns: readonly ColumnName[] };

export const ALL_COLUMNS: ColumnRule = Object.freeze({ kind: 'all' });

const Star = createToken({ name: 'Star', pattern: /\*/, line_breaks: false });
const Except = createToken({
  name: 'Except',
  pattern: /except/i,
  longer_alt: Identifier,
  line_breaks: false,
});

const columnRuleLexer = new Lexer(
  [WhiteSpace, Except, Identifier, QuotedIdentifier, Comma, LParen, RParen, Star],
  {
    positionTracking: 'full',
    ensureOptimizations: false,
    safeMode: true,
    skipValidations: true,
  },
);

const NAME = 'a column name';

const describeToken = (token: IToken | undefined): string => {
  if (token === undefined) return END_OF_INPUT;
  const image = token.image.length > 32 ? `${token.image.slice(0, 32)}…` : token.image;
  return `'${image}'`;
};

function lexingError(text: string, offset: number): PolicySyntaxError {
  const at = positionAt(text, offset);
  if (text[offset] === '"') {
    const empty = /""/y;
    empty.lastIndex = offset;
    return empty.test(text)
      ? new PolicySyntaxError(
          `empty quoted name at ${at.line}:${at.column}`,
          at,
          'a column name between the double quotes',
          '\'""\'',
        )
      : new PolicySyntaxError(
          `unterminated quoted name starting at ${at.line}:${at.column}`,
          at,
          'a closing "',
          END_OF_INPUT,
        );
  }
  const found = describeCharacter(String.fromCodePoint(text.codePointAt(offset) ?? 0));
  return new PolicySyntaxError(
    `unexpected character ${found} at ${at.line}:${at.column}`,
    at,
    "a column name, '*', 'except', '(', ')' or ','",
    found,
  );
}

function tooLong(text: string): PolicySyntaxError | undefined {
  const characters = [...text];
  if (characters.length <= MAX_COLUMN_RULE_LENGTH) return undefined;
  const at = positionAt(text, characters.slice(0, MAX_COLUMN_RULE_LENGTH).join('').length);
  return new PolicySyntaxError(
    `columns is longer than ${MAX_COLUMN_RULE_LENGTH} characters at ${at.line}:${at.column} (it has ${characters.length})`,
    at,
    `at most ${MAX_COLUMN_RULE_LENGTH} characters`,
    `${characters.length} characters`,
  );
}

const nameOf = (token: IToken): string =>
  token.tokenType === QuotedIdentifier ? token.image.slice(1, -1).replaceAll('""', '"') : token.image;

export function parseColumnRule(text: string | null | undefined): ColumnRule {
  if (text === null || text === undefined || text.trim() === '') return ALL_COLUMNS;
  const long = tooLong(text);
  if (long !== undefined) throw long;
  const lexed = columnRuleLexer.tokenize(text);
  const lexError = lexed.errors[0];
  if (lexError !== undefined) throw lexingError(text, lexError.offset);
  const tokens = lexed.tokens;
  let next = 0;

  const fail = (expected: string): never => {
    const token = tokens[next];
    const at = positionAt(text, token === undefined ? text.trimEnd().length : token.startOffset);
    const found = describeToken(token);
    throw PolicySyntaxError.expecting(expected, at, found);
  };
  const take = (type: typeof Comma, expected: string): IToken => {
    const token = tokens[next];
    if (token?.tokenType !== type) return fail(expected);
    next += 1;
    return token;
  };
  const names = (): readonly ColumnName[] => {
    const seen = new Map<string, ColumnName>();
    for (;;) {
      const token = tokens[next];
      if (token?.tokenType !== Identifier && token?.tokenType !== QuotedIdentifier) {
        const keyword = token?.tokenType === Except ? ' (a column named \'except\' is written "except")' : '';
        return fail(`${NAME}${keyword}`);
      }
      next += 1;
      const at = positionAt(text, token.startOffset);
      const name = nameOf(token);
      const first = seen.get(name);
      if (first !== undefined) {
        throw new PolicySyntaxError(
          `column '${name}' is named twice at ${at.line}:${at.column} (first at ${first.pos.line}:${first.pos.column})`,
          at,
          'each column once',
          describeToken(token),
        );
      }
      seen.set(name, Object.freeze({ name, pos: Object.freeze(at) }));
      if (tokens[next]?.tokenType !== Comma) return Object.freeze([...seen.values()]);
      next += 1;
    }
  };

  let rule: ColumnRule;
  if (tokens[next]?.tokenType === Star) {
    next += 1;
    if (tokens[next]?.tokenType === Except) {
      next += 1;
      take(LParen, "'('");
      const columns = names();
      take(RParen, "',' or ')'");
      rule = Object.freeze({ kind: 'except', columns });
    } else {
      rule = ALL_COLUMNS;
    }
    if (next < tokens.length) fail(rule.kind === 'all' ? "'except' or end of input" : END_OF_INPUT);
  } else {
    rule = Object.freeze({ kind: 'only', columns: names() });
    if (next < tokens.length) fail(`',' or ${END_OF_INPUT}`);
  }
  return rule;
}
