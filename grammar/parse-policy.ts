// parsePolicy: expression text → AST. Throws only PolicySyntaxError, whatever the input.

import type { ILexingError, IRecognitionException, IToken } from 'chevrotain';
import { ast, type Expr } from './ast.js';
import { cstToAst } from './cst-to-ast.js';
import {
  ANY_TOKEN_DESCRIPTION,
  describeCharacter,
  describeContinuation,
  describeFound,
  END_OF_INPUT,
} from './error-messages.js';
import { policyParser } from './parser.js';
import { PolicySyntaxError, splitLines, type SyntaxErrorAt } from './policy-syntax-error.js';
import { policyLexer } from './tokens.js';

/** docs/authentication.md: `auth_policies.expression varchar(128)`, counted in characters (code points) as the databases do. */
export const MAX_EXPRESSION_LENGTH = 128;

/** line/column (1-based) of a character offset, counted like the lexer counts them. */
export function positionAt(text: string, offset: number): SyntaxErrorAt {
  const lines = splitLines(text.slice(0, offset));
  return { offset, line: lines.length, column: (lines[lines.length - 1]?.length ?? 0) + 1 };
}

/** The UTF-16 offset of the first code point past the limit, or undefined when the text fits. */
function offsetPastLimit(text: string): number | undefined {
  if (text.length <= MAX_EXPRESSION_LENGTH) return undefined;
  let count = 0;
  let offset = 0;
  for (const character of text) {
    if (count === MAX_EXPRESSION_LENGTH) return offset;
    count += 1;
    offset += character.length;
  }
  return undefined;
}

function tooLong(text: string, offset: number): PolicySyntaxError {
  const at = positionAt(text, offset);
  const length = [...text].length;
  return new PolicySyntaxError(
    `expression is longer than ${MAX_EXPRESSION_LENGTH} characters at ${at.line}:${at.column} (it has ${length})`,
    at,
    `at most ${MAX_EXPRESSION_LENGTH} characters`,
    `${length} characters`,
  );
}

function fromLexingError(text: string, error: ILexingError): PolicySyntaxError {
  const at = positionAt(text, error.offset);
  const character = String.fromCodePoint(text.codePointAt(error.offset) ?? 0);
  if (character === "'") {
    return new PolicySyntaxError(
      `unterminated string starting at ${at.line}:${at.column}`,
      at,
      "a closing '",
      END_OF_INPUT,
    );
  }
  if (character === '"') {
    // The quoted-name token needs one character at least, so `""` is the only other way to fail here.
    const empty = /"(?:[^"]|"")*"/y;
    empty.lastIndex = error.offset;
    if (empty.test(text)) {
      return new PolicySyntaxError(
        `empty quoted name at ${at.line}:${at.column}`,
        at,
        'a column name between the double quotes',
        '\'""\'',
      );
    }
    return new PolicySyntaxError(
      `unterminated quoted name starting at ${at.line}:${at.column}`,
      at,
      'a closing "',
      END_OF_INPUT,
    );
  }
  const found = describeCharacter(character);
  return new PolicySyntaxError(
    `unexpected character ${found} at ${at.line}:${at.column}`,
    at,
    ANY_TOKEN_DESCRIPTION,
    found,
  );
}

function fromRecognitionError(
  text: string,
  tokens: readonly IToken[],
  error: IRecognitionException,
): PolicySyntaxError {
  const token = error.token;
  const atEnd = token.tokenType.name === 'EOF' || Number.isNaN(token.startOffset);
  // At the end of input the error sits just after the last non-blank character.
  const at = positionAt(text, atEnd ? text.trimEnd().length : token.startOffset);
  const found = atEnd ? END_OF_INPUT : describeFound(token.image);
  if (error.name === 'NotAllInputParsedException') {
    // chevrotain only says "expected EOF"; the parser's content assist knows what could have continued.
    const preceding = tokens.slice(0, Math.max(0, tokens.indexOf(token)));
    const next = policyParser.computeContentAssist('expression', preceding).map((path) => path.nextTokenType);
    return PolicySyntaxError.expecting(describeContinuation(next), at, found);
  }
  return PolicySyntaxError.expecting(error.message, at, found);
}

export function parsePolicy(text: string): Expr {
  const pastLimit = offsetPastLimit(text);
  if (pastLimit !== undefined) throw tooLong(text, pastLimit);
  if (text.trim() === '') return ast.anyone();
  const lexed = policyLexer.tokenize(text);
  const lexError = lexed.errors[0];
  if (lexError !== undefined) throw fromLexingError(text, lexError);
  policyParser.input = lexed.tokens;
  const cst = policyParser.expression();
  const parseError = policyParser.errors[0];
  if (parseError !== undefined) throw fromRecognitionError(text, lexed.tokens, parseError);
  return cstToAst.build(cst);
}
