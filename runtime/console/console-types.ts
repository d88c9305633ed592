// The console API's requests and answers (docs/console.md): one definition that the server
// (console-api.ts) answers with and the page (ui/api.ts) reads. Types only, importing types only
// from modules that need no Node.js: the page's type check and bundle take nothing else from here.

import type { Action, AuthUser } from '../../compiler/types.js';
import type { ColumnsExplanation } from '../explain/explain-columns.js';
import type { PolicyEscalation } from '../policies/policy-service.js';

export type { Action, ColumnsExplanation, PolicyEscalation };
export type { ColumnCondition, ReadColumns, WriteColumns } from '../explain/explain-columns.js';

/** Whom to decide for, as the page sends it (console-caller.ts reads it). */
export type Caller =
  | { readonly kind: 'anonymous' }
  | { readonly kind: 'admin' }
  | { readonly kind: 'user'; readonly ref: string }
  | { readonly kind: 'claims'; readonly claims: Readonly<Record<string, unknown>> };

export type CellDecision = 'allow' | 'deny' | 'filter';

export interface MatrixCell {
  readonly decision: CellDecision;
  /** deny: the status the request is answered with. */
  readonly status?: 401 | 403;
  /** The policy rows that decide it (§4.2 provenance), by id; empty: no row covers the cell. */
  readonly policies: readonly number[];
  /** How the rows were chosen (exact, action `all`, table `all`, …). */
  readonly level: string;
}

export interface MatrixTable {
  readonly table: string;
  readonly key: readonly string[];
  readonly columns: readonly string[];
  readonly cells: Readonly<Record<Action, MatrixCell>>;
  /** Once a stored row has a column rule: what the caller may read and write of each column. */
  readonly column_access?: ColumnsExplanation;
}

/** `POST /_/api/matrix` `{caller}`. */
export interface Matrix {
  readonly database: string;
  readonly native_rls: boolean;
  readonly user: AuthUser;
  readonly tables: readonly MatrixTable[];
  /** Stored policy rows that allow nothing until fixed, with why. */
  readonly broken: readonly { readonly id: number; readonly error: string }[];
  readonly escalations: readonly PolicyEscalation[];
}

/** `POST /_/api/explain` `{caller, table, action, row?}`: `rest policy explain --json`'s answer. */
export interface ExplainBody {
  readonly caller: Caller;
  readonly table: string;
  readonly action: Action;
  readonly row?: string;
}

/** `POST /_/api/try`. */
export interface TryBody {
  readonly caller: Caller;
  readonly method: 'GET' | 'POST' | 'PATCH' | 'DELETE';
  readonly table: string;
  readonly query?: string;
  readonly body?: unknown;
}

export interface TryAnswer {
  readonly status: number;
  readonly body: unknown;
  /** A write was answered, then rolled back: nothing was stored. */
  readonly rolled_back: boolean;
}

/** `POST /_/api/test`: a policy test file (docs/policy-tests.md) and the name its lines cite. */
export interface TestBody {
  readonly source: string;
  readonly name?: string;
}
