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

export type Filter =
  | { readonly kind: 'compare'; readonly column: string; readonly op: ComparisonOp; readonly value: string }
  | { readonly kind: 'pattern'; readonly column: string; readonly op: PatternOp; readonly pattern: string }
  | { readonly kind: 'in'; readonly column: string; readonly values: readonly string[] }
  | { readonly kind: 'is'; readonly column: string; readonly value: IsValue };

export interface OrderItem {
  readonly column: string;
  readonly direction: 'asc' | 'desc';
  /** Absent: PostgreSQL's default (NULLs last ascending, first descending) on every database. */
  readonly nulls?: 'first' | 'last';
}

export interface Page {
  /** 1-based page number. */
  readonly number: number;
  readonly size: number;
}

/** `undefined` selects every column. */
export type Select = readonly string[] | undefined;

export type ParsedRequest =
  | {
      readonly kind: 'list';
      readonly table: string;
      readonly select: Select;
      readonly filters: readonly Filter[];
      readonly order: readonly OrderItem[];
      readonly page: Page;
      readonly mine: boolean;
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
    }
  | {
      readonly kind: 'update';
      readonly table: string;
      readonly key: string | undefined;
      readonly filters: readonly Filter[];
      readonly patch: JsonObject;
    }
  | {
      readonly kind: 'delete';
      readonly table: string;
      readonly key: string | undefined;
      readonly filters: readonly Filter[];
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
