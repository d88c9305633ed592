// The parsed shape of a table request (docs/http-api.md): syntax only, before any schema lookup.

import type { Action } from '../../compiler/types.js';

export type JsonValue = null | boolean | number | string | readonly JsonValue[] | JsonObject;
export interface JsonObject {
  readonly [key: string]: JsonValue;
}

export const COMPARISON_OPS = ['eq', 'neq', 'gt', 'gte', 'lt', 'lte'] as const;
export type ComparisonOp = (typeof COMPARISON_OPS)[number];
export type PatternOp = 'like' | 'ilike';
export type IsValue = 'null' | 'true' | 'false';

/** A condition on one column; `pattern`s use `*` as their only wildcard. */
export type ColumnFilter =
  | { readonly kind: 'compare'; readonly column: string; readonly op: ComparisonOp; readonly value: string }
  | { readonly kind: 'pattern'; readonly column: string; readonly op: PatternOp; readonly pattern: string }
  | {
      readonly kind: 'patterns';
      readonly column: string;
      readonly op: PatternOp;
      /** `like(any)`: one of the patterns matches; `like(all)`: each does. */
      readonly quantifier: 'any' | 'all';
      readonly patterns: readonly string[];
    }
  | { readonly kind: 'in'; readonly column: string; readonly values: readonly string[] }
  | { readonly kind: 'is'; readonly column: string; readonly value: IsValue }
  /** `IS DISTINCT FROM`: differs, NULL counting as a value. */
  | { readonly kind: 'distinct'; readonly column: string; readonly value: string };

/**
 * A condition of a request: a column's, its negation, or a logic tree of them (the PostgREST
 * dialect's `not.`, `or=(…)`, `and=(…)`; the seed dialect gives column filters only). The filters of
 * a request combine with AND.
 */
export type Filter =
  | ColumnFilter
  | { readonly kind: 'not'; readonly filter: Filter }
  | { readonly kind: 'logic'; readonly op: 'and' | 'or'; readonly items: readonly Filter[] };

/** The column filters inside `filter`, in order. */
export function columnFilters(filter: Filter): readonly ColumnFilter[] {
  switch (filter.kind) {
    case 'not':
      return columnFilters(filter.filter);
    case 'logic':
      return filter.items.flatMap(columnFilters);
    default:
      return [filter];
  }
}

export interface OrderItem {
  readonly column: string;
  readonly direction: 'asc' | 'desc';
  /** Absent: PostgreSQL's default (NULLs last ascending, first descending) on every database. */
  readonly nulls?: 'first' | 'last';
}

/** Which rows of the ordered answer a list returns: `limit` undefined is every row from `offset`. */
export interface RowWindow {
  readonly limit: number | undefined;
  readonly offset: number;
}

/** `undefined` selects every column. */
export type Select = readonly string[] | undefined;

/** A create that meets an existing row by `onConflict` (default: the primary key) updates or keeps it. */
export interface Upsert {
  readonly resolution: 'merge' | 'ignore';
  readonly onConflict: readonly string[] | undefined;
}

/** How an update or delete of the PostgREST dialect is answered and bounded. */
export interface ChangeOptions {
  /** The changed rows come back, with `select`'s columns. */
  readonly returnRows: boolean;
  readonly select: Select;
  /** More rows changed than this: 400, nothing written. */
  readonly maxAffected: number | undefined;
  /** Exactly one row must change: else 406, nothing written. */
  readonly singular: boolean;
  /** Judged, performed and answered, then rolled back. */
  readonly rollback: boolean;
}

export type ParsedRequest =
  | {
      readonly kind: 'list';
      readonly table: string;
      readonly select: Select;
      readonly filters: readonly Filter[];
      readonly order: readonly OrderItem[];
      readonly window: RowWindow;
      readonly mine: boolean;
      /** Also count every row the filters and policies let through (PostgREST's `Prefer: count`). */
      readonly countAll?: boolean;
    }
  | {
      readonly kind: 'count';
      readonly table: string;
      readonly filters: readonly Filter[];
      readonly mine: boolean;
    }
  | {
      readonly kind: 'get';
      readonly table: string;
      readonly key: string;
      readonly select: Select;
      readonly filters: readonly Filter[];
      readonly mine: boolean;
    }
  | {
      readonly kind: 'create';
      readonly table: string;
      readonly rows: readonly JsonObject[];
      /** The body was an array: answer with an array. */
      readonly many: boolean;
      readonly select: Select;
      readonly upsert?: Upsert;
      /** Judged, performed and answered, then rolled back. */
      readonly rollback?: boolean;
    }
  | {
      readonly kind: 'update';
      readonly table: string;
      readonly key: string | undefined;
      readonly filters: readonly Filter[];
      readonly patch: JsonObject;
      readonly options?: ChangeOptions;
    }
  | {
      readonly kind: 'delete';
      readonly table: string;
      readonly key: string | undefined;
      readonly filters: readonly Filter[];
      readonly options?: ChangeOptions;
    };

export type ParsedRequestKind = ParsedRequest['kind'];

/** docs/policy-language.md: the policy action a request is decided under. */
export function actionOf(request: ParsedRequest): Action {
  switch (request.kind) {
    case 'list':
    case 'count':
    case 'get':
      return request.mine ? 'read_mine' : 'read';
    case 'create':
      return 'create';
    case 'update':
      return 'update';
    case 'delete':
      return 'delete';
  }
}
