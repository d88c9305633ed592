// What a call throws, for tests of refusals: the error when it is the kind expected; any other
// error is rethrown, and a call that returns fails the test.

import { parsePolicy } from '../../grammar/parse-policy.js';
import { PolicySyntaxError } from '../../grammar/policy-syntax-error.js';
import { isRestError, type RestError } from '../../errors/rest-error.js';

function thrownBy<E>(fn: () => unknown, is: (e: unknown) => e is E, expected: string): E {
  try {
    fn();
  } catch (e) {
    if (is(e)) return e;
    throw e;
  }
  throw new Error(`expected ${expected}, but nothing was thrown`);
}

/** The RestError `fn` throws. */
export const errorOf = (fn: () => unknown): RestError => thrownBy(fn, isRestError, 'a RestError');

/** The syntax error of a policy expression that does not parse. */
export const syntaxErrorOf = (text: string): PolicySyntaxError =>
  thrownBy(
    () => parsePolicy(text),
    (e): e is PolicySyntaxError => e instanceof PolicySyntaxError,
    `a syntax error for ${JSON.stringify(text)}`,
  );
