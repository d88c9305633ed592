// How an error message quotes the value it rejects (docs/operations.md: `action 'write' is not one of …`):
// between single quotes, or as a JSON string when quotes, backslashes or control characters
// inside would make the plain form ambiguous or unprintable.

// eslint-disable-next-line no-control-regex -- finding control characters is the point
const NEEDS_ESCAPES = /['\\\u0000-\u001f\u007f-\u009f\u2028\u2029]/;

export function quoteValue(value: string): string {
  return NEEDS_ESCAPES.test(value) ? JSON.stringify(value) : `'${value}'`;
}
