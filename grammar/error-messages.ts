// Parser and lexer error wording in the user's words: what was expected and what was found,
// never rule or token-type names. parse-policy.ts adds the position and throws.

import type { IParserErrorMessageProvider, TokenType } from 'chevrotain';
import * as t from './tokens.js';

export const OPERAND_DESCRIPTION = 'a column, auth_user.<attr> or a literal';
export const AUTH_ATTRIBUTE_DESCRIPTION = 'id, username, is_admin, is_authenticated or claims.<name>';
export const CLAIM_NAME_DESCRIPTION = 'a claim name';
export const LITERAL_DESCRIPTION = 'a literal';
export const IN_LIST_DESCRIPTION = "a literal or 'select'";
export const TABLE_DESCRIPTION = 'a table name';
export const COLUMN_DESCRIPTION = 'a column';
export const END_OF_INPUT = 'end of input';
export const ANY_TOKEN_DESCRIPTION =
  "a name, a number, a quoted string or name, an operator, '(', ')', ',' or '.'";

const descriptions = new Map<TokenType, string>([
  [t.And, "'and'"],
  [t.Or, "'or'"],
  [t.Not, "'not'"],
  [t.Is, "'is'"],
  [t.In, "'in'"],
  [t.Null, "'null'"],
  [t.True, "'true'"],
  [t.False, "'false'"],
  [t.AuthUser, "'auth_user'"],
  [t.Exists, "'exists'"],
  [t.Select, "'select'"],
  [t.From, "'from'"],
  [t.Where, "'where'"],
  [t.Identifier, 'a column'],
  [t.Name, 'a name'],
  [t.QuotedIdentifier, 'a quoted column name'],
  [t.StringLiteral, 'a string'],
  [t.DecimalLiteral, 'a decimal number'],
  [t.IntegerLiteral, 'an integer'],
  [t.NotEquals, "'!='"],
  [t.LessOrEqual, "'<='"],
  [t.GreaterOrEqual, "'>='"],
  [t.Less, "'<'"],
  [t.Greater, "'>'"],
  [t.Equals, "'='"],
  [t.Dot, "'.'"],
  [t.Comma, "','"],
  [t.LParen, "'('"],
  [t.RParen, "')'"],
]);

const describe = (token: TokenType): string => descriptions.get(token) ?? token.name;

/** `a`, `a or b`, `a, b or c`, duplicates removed, order kept. */
export function oneOf(items: readonly string[]): string {
  const unique = [...new Set(items)];
  const last = unique[unique.length - 1];
  if (last === undefined) return 'nothing';
  return unique.length === 1 ? last : `${unique.slice(0, -1).join(', ')} or ${last}`;
}

/**
 * What may follow a complete expression, from the parser's content assist: after `a` that is a
 * comparison operator, 'is', 'in', 'not in', 'and' or 'or'; after `a = 1` only 'and' or 'or'.
 */
export function describeContinuation(next: readonly TokenType[]): string {
  const words = CONTINUATIONS.filter(([types]) => types.some((type) => next.includes(type))).map(
    ([, word]) => word,
  );
  return oneOf([...words, END_OF_INPUT]);
}

const CONTINUATIONS: readonly (readonly [readonly TokenType[], string])[] = [
  [t.COMPARISON_TOKENS, 'a comparison operator'],
  [[t.Is], "'is'"],
  [[t.In], "'in'"],
  // After an operand `not` can only start `not in`; a leading `not` never follows an expression.
  [[t.Not], "'not in'"],
  [[t.And], "'and'"],
  [[t.Or], "'or'"],
  [[t.RParen], "')'"],
];

const MAX_FOUND_LENGTH = 24;

const CONTROL_ESCAPES: Readonly<Record<string, string>> = { '\n': '\\n', '\r': '\\r', '\t': '\\t' };

/**
 * The offending token as the user wrote it: `'='`, `'abc'`, `"order"`; shortened when long and
 * with control characters escaped, so the message stays one line.
 */
export function describeFound(image: string): string {
  const quoted = image.startsWith("'") || image.startsWith('"') ? image : `'${image}'`;
  const characters = [...quoted];
  const short =
    characters.length <= MAX_FOUND_LENGTH ? quoted : `${characters.slice(0, MAX_FOUND_LENGTH - 1).join('')}…`;
  return short.replace(
    /\p{Cc}/gu,
    (c) => CONTROL_ESCAPES[c] ?? `\\u${(c.codePointAt(0) ?? 0).toString(16).padStart(4, '0')}`,
  );
}

/** A character the lexer cannot read: `'#'`, or `U+200B` when it would be invisible. */
export function describeCharacter(character: string): string {
  const code = character.codePointAt(0) ?? 0;
  return /^[\p{L}\p{M}\p{N}\p{P}\p{S}]$/u.test(character)
    ? `'${character}'`
    : `U+${code.toString(16).toUpperCase().padStart(4, '0')}`;
}

export const errorMessageProvider: IParserErrorMessageProvider = {
  buildMismatchTokenMessage: ({ expected }) => describe(expected),
  // Replaced in parse-policy.ts by describeContinuation, which knows the preceding tokens.
  buildNotAllInputParsedMessage: () => END_OF_INPUT,
  buildNoViableAltMessage: ({ expectedPathsPerAlt, customUserDescription }) =>
    customUserDescription ??
    oneOf(expectedPathsPerAlt.flat().flatMap((path) => (path[0] === undefined ? [] : [describe(path[0])]))),
  buildEarlyExitMessage: ({ expectedIterationPaths, customUserDescription }) =>
    customUserDescription ??
    oneOf(expectedIterationPaths.flatMap((path) => (path[0] === undefined ? [] : [describe(path[0])]))),
};
