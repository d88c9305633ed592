// The one error hierarchy of `rest`: a stable snake_case code, a category, one human sentence.
// Only the HTTP error middleware and cli/main.ts translate categories (statuses, exit codes).
// Every code is registered, with its category, in errors/error-codes.ts: an error takes its
// category from there.

import { categoriesOf, type ErrorCategory, type ErrorCode } from './error-codes.js';

export const httpStatusOf: Readonly<Record<ErrorCategory, number>> = {
  usage: 400,
  invalid_input: 400,
  unauthenticated: 401,
  forbidden: 403,
  not_found: 404,
  method_not_allowed: 405,
  not_acceptable: 406,
  conflict: 409,
  payload_too_large: 413,
  unsupported_media_type: 415,
  range_not_satisfiable: 416,
  rate_limited: 429,
  internal: 500,
  unavailable: 503,
};

/** CLI exit codes (docs/operations.md): 1 usage, 2 validation (bad input), 3 database or runtime error. */
export const exitCodeOf: Readonly<Record<ErrorCategory, number>> = {
  usage: 1,
  invalid_input: 2,
  unauthenticated: 2,
  forbidden: 2,
  not_found: 2,
  method_not_allowed: 1,
  not_acceptable: 2,
  conflict: 2,
  payload_too_large: 2,
  unsupported_media_type: 2,
  range_not_satisfiable: 2,
  rate_limited: 3,
  internal: 3,
  unavailable: 3,
};

export type ErrorDetails = Readonly<Record<string, unknown>>;

export interface RestErrorOptions {
  readonly details?: ErrorDetails;
  readonly cause?: unknown;
  /** Extra response headers (e.g. Retry-After, WWW-Authenticate). */
  readonly headers?: Readonly<Record<string, string>>;
  /**
   * For a code registered with several categories, the one this error has (policyDenied chooses
   * 401 or 403 by the user); it must be one the registry lists for the code.
   */
  readonly category?: ErrorCategory;
}

/** The category `code` is given with: the registry's, or the chosen one among those it lists. */
function categoryOf(code: ErrorCode, chosen: ErrorCategory | undefined): ErrorCategory {
  const allowed = categoriesOf(code);
  const category = chosen ?? (allowed.length === 1 ? allowed[0] : undefined);
  if (category === undefined || !allowed.includes(category)) {
    throw new Error(`error code ${code} is registered as ${allowed.join(' or ')}, not ${String(chosen)}`);
  }
  return category;
}

export class RestError extends Error {
  readonly code: ErrorCode;
  readonly category: ErrorCategory;
  readonly details: ErrorDetails | undefined;
  readonly headers: Readonly<Record<string, string>>;

  constructor(code: ErrorCode, message: string, options: RestErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'RestError';
    this.category = categoryOf(code, options.category);
    this.code = code;
    this.details = options.details;
    this.headers = options.headers ?? {};
  }

  get status(): number {
    return httpStatusOf[this.category];
  }

  get exitCode(): number {
    return exitCodeOf[this.category];
  }

  /** The public body of docs/http-api.md: never a stack, SQL text or cause. */
  toBody(): { error: { code: ErrorCode; message: string; details?: ErrorDetails } } {
    return {
      error: {
        code: this.code,
        message: this.message,
        ...(this.details === undefined ? {} : { details: this.details }),
      },
    };
  }
}

export const isRestError = (e: unknown): e is RestError => e instanceof RestError;

/** A broken invariant of rest itself: 500 with the bare public body; `reason` stays in the cause. */
export const internalError = (reason: string): RestError =>
  new RestError('internal', 'Internal error.', { cause: new Error(reason) });

export function assertNever(x: never, what = 'value'): never {
  throw new Error(`unexpected ${what}: ${JSON.stringify(x)}`);
}
