// The library API of `rest`: named exports only. The policy compiler is pure (no I/O); the
// runtime exports start a server over a database.
export * from './compiler/index.js';
export { ast } from './grammar/ast.js';
export type { Position } from './grammar/ast.js';
export { RestError, isRestError } from './errors/rest-error.js';
export type { ErrorCategory } from './errors/error-codes.js';
