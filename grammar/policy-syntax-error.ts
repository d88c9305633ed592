// The only error the grammar throws: one sentence with line:column, what was found and expected;
// and its rendering for the CLI (the offending line with a caret under the column).

import { RestError } from '../errors/rest-error.js';

export interface SyntaxErrorAt {
  /** 0-based character offset in the expression. */
  readonly offset: number;
  /** 1-based line. */
  readonly line: number;
  /** 1-based column. */
  readonly column: number;
}

export class PolicySyntaxError extends RestError {
  readonly offset: number;
  readonly line: number;
  readonly column: number;
  /** What would have been accepted, in the user's words (`a column, auth_user.<attr> or a literal`). */
  readonly expected: string;
  /** The offending text as written (`'='`, `'#'`, `U+200B`) or `end of input`. */
  readonly found: string;

  /** `field`: the policy field the error is in, when it is not the expression (`columns`). */
  constructor(message: string, at: SyntaxErrorAt, expected: string, found: string, field?: string) {
    super('invalid_policy', message, {
      details: {
        ...(field === undefined ? {} : { field }),
        line: at.line,
        column: at.column,
        expected,
        found,
      },
    });
    this.name = 'PolicySyntaxError';
    this.offset = at.offset;
    this.line = at.line;
    this.column = at.column;
    this.expected = expected;
    this.found = found;
  }

  /** The common shape: `expected ')' at 1:20, found end of input`. */
  static expecting(expected: string, at: SyntaxErrorAt, found: string): PolicySyntaxError {
    return new PolicySyntaxError(
      `expected ${expected} at ${at.line}:${at.column}, found ${found}`,
      at,
      expected,
      found,
    );
  }
}

/** Lines as parsePolicy counts them (chevrotain's line terminators: \n, \r\n, \r). */
export const splitLines = (text: string): string[] => text.split(/\r\n|\r|\n/);

/** For the CLI: the offending line, a caret under the error column, then the message. */
export function formatPolicyError(expression: string, error: PolicySyntaxError): string {
  const line = splitLines(expression)[error.line - 1] ?? '';
  // Tabs are kept so the caret lines up however the terminal renders them.
  const indent = line
    .slice(0, error.column - 1)
    .replace(/[^\t]/g, ' ')
    .padEnd(error.column - 1, ' ');
  return `${line}\n${indent}^\n${error.message}`;
}
