// The library API of `rest` (docs/library.md): named exports only. The policy compiler is pure (no
// I/O); startServer serves the REST API over a database from a program.
export * from './compiler/index.js';
export { ast } from './grammar/ast.js';
export type { Position } from './grammar/ast.js';
export { RestError, isRestError } from './errors/rest-error.js';
export type { ErrorCategory, ErrorCode } from './errors/error-codes.js';
export { startServer } from './start-server.js';
export type { ServerHandle, ServerOptions, ServerSettings } from './start-server.js';
