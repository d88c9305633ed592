// Validation as typed, in the page, by the server's own grammar (grammar/ is pure TypeScript):
// the same message, and the line and column of the caret.

import { parseColumnRule } from '../grammar/column-rule.js';
import { parsePolicy } from '../grammar/parse-policy.js';
import { PolicySyntaxError, splitLines } from '../grammar/policy-syntax-error.js';

export interface Problem {
  readonly message: string;
  /** The offending line, and the caret's 1-based column in it; absent when the server gave none. */
  readonly line?: string;
  readonly column?: number;
}

/** The problem of an expression, or undefined when it parses. */
export function expressionProblem(text: string): Problem | undefined {
  try {
    parsePolicy(text);
    return undefined;
  } catch (e) {
    if (!(e instanceof PolicySyntaxError)) throw e;
    return { message: e.message, line: splitLines(text)[e.line - 1] ?? '', column: e.column };
  }
}

/** A server's refusal of a policy, with a caret when it names a line and column of `text`. */
export function serverProblem(
  text: string,
  error: { readonly message: string; readonly details?: Readonly<Record<string, unknown>> },
): Problem {
  const line = error.details?.['line'];
  const column = error.details?.['column'];
  if (typeof line === 'number' && typeof column === 'number') {
    return { message: error.message, line: splitLines(text)[line - 1] ?? '', column };
  }
  return { message: error.message };
}

/** The problem of a column rule (empty: every column), or undefined when it parses. */
export function columnsProblem(text: string): Problem | undefined {
  try {
    parseColumnRule(text);
    return undefined;
  } catch (e) {
    if (!(e instanceof PolicySyntaxError)) throw e;
    return { message: e.message, line: splitLines(text)[e.line - 1] ?? '', column: e.column };
  }
}
