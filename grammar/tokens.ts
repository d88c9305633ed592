// Tokens of the policy language (docs/policy-language.md). Keywords are case-insensitive and declared before
// Identifier with `longer_alt`, so `order_id` or `notes` stay identifiers.

import { Lexer, createToken, type TokenType } from 'chevrotain';

/** Any word: an identifier or a keyword. Only `auth_user.<attr>` and claim names accept it. */
export const Name = createToken({ name: 'Name', pattern: Lexer.NA });

export const Identifier = createToken({
  name: 'Identifier',
  pattern: /[A-Za-z_][A-Za-z0-9_]*/,
  categories: [Name],
  line_breaks: false,
});

const keyword = (name: string, word: string): TokenType =>
  createToken({
    name,
    pattern: new RegExp(word, 'i'),
    longer_alt: Identifier,
    categories: [Name],
    line_breaks: false,
  });

export const WhiteSpace = createToken({
  name: 'WhiteSpace',
  pattern: /\s+/,
  group: Lexer.SKIPPED,
  line_breaks: true,
});
export const And = keyword('And', 'and');
export const Or = keyword('Or', 'or');
export const Not = keyword('Not', 'not');
export const Is = keyword('Is', 'is');
export const In = keyword('In', 'in');
export const Null = keyword('Null', 'null');
export const True = keyword('True', 'true');
export const False = keyword('False', 'false');
export const AuthUser = keyword('AuthUser', 'auth_user');
export const Exists = keyword('Exists', 'exists');
export const Select = keyword('Select', 'select');
export const From = keyword('From', 'from');
export const Where = keyword('Where', 'where');

/** `"order"`: a column named like a keyword, or with any other character; `""` is a quote. */
export const QuotedIdentifier = createToken({
  name: 'QuotedIdentifier',
  pattern: /"(?:[^"]|"")+"/,
  line_breaks: true,
});
export const StringLiteral = createToken({
  name: 'StringLiteral',
  pattern: /'(?:[^']|'')*'/,
  line_breaks: true,
});
export const DecimalLiteral = createToken({
  name: 'DecimalLiteral',
  pattern: /-?[0-9]+\.[0-9]+/,
  line_breaks: false,
});
export const IntegerLiteral = createToken({
  name: 'IntegerLiteral',
  pattern: /-?[0-9]+/,
  line_breaks: false,
});

export const NotEquals = createToken({ name: 'NotEquals', pattern: /!=|<>/, line_breaks: false });
export const LessOrEqual = createToken({ name: 'LessOrEqual', pattern: /<=/, line_breaks: false });
export const GreaterOrEqual = createToken({ name: 'GreaterOrEqual', pattern: />=/, line_breaks: false });
export const Less = createToken({ name: 'Less', pattern: /</, line_breaks: false });
export const Greater = createToken({ name: 'Greater', pattern: />/, line_breaks: false });
export const Equals = createToken({ name: 'Equals', pattern: /=/, line_breaks: false });
export const Dot = createToken({ name: 'Dot', pattern: /\./, line_breaks: false });
export const Comma = createToken({ name: 'Comma', pattern: /,/, line_breaks: false });
export const LParen = createToken({ name: 'LParen', pattern: /\(/, line_breaks: false });
export const RParen = createToken({ name: 'RParen', pattern: /\)/, line_breaks: false });

/** Lexing order: keywords before Identifier, `<=`/`>=`/`<>` before `<`/`>`, decimals before integers. */
export const allTokens: readonly TokenType[] = [
  WhiteSpace,
  And,
  Or,
  Not,
  Is,
  In,
  Null,
  True,
  False,
  AuthUser,
  Exists,
  Select,
  From,
  Where,
  Identifier,
  Name,
  QuotedIdentifier,
  StringLiteral,
  DecimalLiteral,
  IntegerLiteral,
  NotEquals,
  LessOrEqual,
  GreaterOrEqual,
  Less,
  Greater,
  Equals,
  Dot,
  Comma,
  LParen,
  RParen,
];

export const COMPARISON_TOKENS: readonly TokenType[] = [
  Equals,
  NotEquals,
  Less,
  LessOrEqual,
  Greater,
  GreaterOrEqual,
];

/**
 * The lexer of the tokens above. `validate` runs chevrotain's checks of the token definitions
 * (patterns, groups, unreachable tokens): test/unit/grammar/grammar-definition.test.ts does;
 * every process skips them (a third of the lexer's start-up) for a definition that cannot change.
 */
export const createPolicyLexer = (options: { readonly validate: boolean }): Lexer =>
  new Lexer([...allTokens], {
    positionTracking: 'full',
    ensureOptimizations: false,
    safeMode: true,
    skipValidations: !options.validate,
  });

export const policyLexer = createPolicyLexer({ validate: false });
