// The policy AST: readonly, frozen nodes with a `kind` discriminant and source positions.
// Grammar (docs/policy-language.md) produces it; the compiler consumes it; nothing else builds SQL from text.
// Relations: `exists (select from t where …)` and `x [not] in (select c from t [where …])` open a
// scope on table t; a bare column is the innermost scope's, `t.c` the innermost t's
// (compiler/scope.ts).

export interface Position {
  /** 0-based character offset in the expression. */
  readonly offset: number;
  /** 1-based line. */
  readonly line: number;
  /** 1-based column. */
  readonly column: number;
}

export type AuthAttribute = 'id' | 'username' | 'is_admin' | 'is_authenticated';
/** `<>` is normalised to `!=`. */
export type CompareOp = '=' | '!=' | '<' | '<=' | '>' | '>=';
export type LiteralType = 'integer' | 'decimal' | 'string' | 'boolean' | 'null';

/** The empty expression: anyone, logged in or not. */
export interface AnyoneNode {
  readonly kind: 'anyone';
  readonly pos: Position;
}
export interface OrNode {
  readonly kind: 'or';
  readonly operands: readonly Expr[];
  readonly pos: Position;
}
export interface AndNode {
  readonly kind: 'and';
  readonly operands: readonly Expr[];
  readonly pos: Position;
}
export interface NotNode {
  readonly kind: 'not';
  readonly operand: Expr;
  readonly pos: Position;
}
export interface CompareNode {
  readonly kind: 'compare';
  readonly op: CompareOp;
  readonly left: Expr;
  readonly right: Expr;
  readonly pos: Position;
}
export interface IsNullNode {
  readonly kind: 'is_null';
  readonly operand: Expr;
  readonly negated: boolean;
  readonly pos: Position;
}
export interface InNode {
  readonly kind: 'in';
  readonly operand: Expr;
  readonly values: readonly LiteralNode[];
  readonly negated: boolean;
  readonly pos: Position;
}
/** A bare column: the innermost scope's table (the policy's own table outside any subquery). */
export interface ColumnNode {
  readonly kind: 'column';
  readonly name: string;
  readonly pos: Position;
}
/** `<table>.<column>`: the column of the innermost scope on that table; `pos` is the table's. */
export interface QualifiedColumnNode {
  readonly kind: 'qualified_column';
  readonly table: string;
  readonly name: string;
  readonly pos: Position;
}
export type ColumnRef = ColumnNode | QualifiedColumnNode;
/** The table a subquery reads, where its name is written. */
export interface TableRef {
  readonly name: string;
  readonly pos: Position;
}
/** `exists (select from <table> where <where>)`: TRUE when a row of the table makes `where` TRUE. */
export interface ExistsNode {
  readonly kind: 'exists';
  readonly from: TableRef;
  readonly where: Expr;
  readonly pos: Position;
}
/**
 * `<operand> [not] in (select <column> from <table> [where <where>])`; without a where clause
 * `where` is `anyone`. SQL's meaning, NULLs included (compiler/evaluate.ts).
 */
export interface InSelectNode {
  readonly kind: 'in_select';
  readonly operand: Expr;
  readonly column: ColumnRef;
  readonly from: TableRef;
  readonly where: Expr;
  readonly negated: boolean;
  readonly pos: Position;
}
/** A subquery node: it reads another table. */
export type SubqueryNode = ExistsNode | InSelectNode;
export interface AuthNode {
  readonly kind: 'auth';
  readonly attr: AuthAttribute;
  readonly pos: Position;
}
export interface ClaimNode {
  readonly kind: 'claim';
  readonly name: string;
  readonly pos: Position;
}
export type LiteralNode =
  | {
      readonly kind: 'literal';
      readonly type: 'integer' | 'decimal';
      readonly value: number;
      readonly pos: Position;
    }
  | { readonly kind: 'literal'; readonly type: 'string'; readonly value: string; readonly pos: Position }
  | { readonly kind: 'literal'; readonly type: 'boolean'; readonly value: boolean; readonly pos: Position }
  | { readonly kind: 'literal'; readonly type: 'null'; readonly value: null; readonly pos: Position };

export type Expr =
  | AnyoneNode
  | OrNode
  | AndNode
  | NotNode
  | CompareNode
  | IsNullNode
  | InNode
  | ColumnNode
  | QualifiedColumnNode
  | ExistsNode
  | InSelectNode
  | AuthNode
  | ClaimNode
  | LiteralNode;

export type ExprKind = Expr['kind'];

/** Exhaustive dispatch table: a new kind without a handler does not compile. */
export type ExprVisitor<R> = { readonly [K in ExprKind]: (node: Extract<Expr, { kind: K }>) => R };

export function visit<R>(node: Expr, visitor: ExprVisitor<R>): R {
  return (visitor[node.kind] as (n: Expr) => R)(node);
}

export const NO_POSITION: Position = Object.freeze({ offset: 0, line: 1, column: 1 });

const node = <T extends Expr>(n: T): T => Object.freeze(n);

/** Small factories; every node they return is frozen. */
export const ast = {
  anyone: (pos: Position = NO_POSITION): AnyoneNode => node({ kind: 'anyone', pos }),
  or: (operands: readonly Expr[], pos: Position = NO_POSITION): OrNode =>
    node({ kind: 'or', operands: Object.freeze([...operands]), pos }),
  and: (operands: readonly Expr[], pos: Position = NO_POSITION): AndNode =>
    node({ kind: 'and', operands: Object.freeze([...operands]), pos }),
  not: (operand: Expr, pos: Position = NO_POSITION): NotNode => node({ kind: 'not', operand, pos }),
  compare: (op: CompareOp, left: Expr, right: Expr, pos: Position = NO_POSITION): CompareNode =>
    node({ kind: 'compare', op, left, right, pos }),
  isNull: (operand: Expr, negated: boolean, pos: Position = NO_POSITION): IsNullNode =>
    node({ kind: 'is_null', operand, negated, pos }),
  in: (
    operand: Expr,
    values: readonly LiteralNode[],
    negated: boolean,
    pos: Position = NO_POSITION,
  ): InNode => node({ kind: 'in', operand, values: Object.freeze([...values]), negated, pos }),
  column: (name: string, pos: Position = NO_POSITION): ColumnNode => node({ kind: 'column', name, pos }),
  qualifiedColumn: (table: string, name: string, pos: Position = NO_POSITION): QualifiedColumnNode =>
    node({ kind: 'qualified_column', table, name, pos }),
  exists: (table: string, where: Expr, pos: Position = NO_POSITION, tablePos: Position = pos): ExistsNode =>
    node({ kind: 'exists', from: Object.freeze({ name: table, pos: tablePos }), where, pos }),
  inSelect: (
    operand: Expr,
    column: ColumnRef,
    table: string,
    where: Expr,
    negated: boolean,
    pos: Position = NO_POSITION,
    tablePos: Position = pos,
  ): InSelectNode =>
    node({
      kind: 'in_select',
      operand,
      column,
      from: Object.freeze({ name: table, pos: tablePos }),
      where,
      negated,
      pos,
    }),
  auth: (attr: AuthAttribute, pos: Position = NO_POSITION): AuthNode => node({ kind: 'auth', attr, pos }),
  claim: (name: string, pos: Position = NO_POSITION): ClaimNode => node({ kind: 'claim', name, pos }),
  integer: (value: number, pos: Position = NO_POSITION): LiteralNode =>
    node({ kind: 'literal', type: 'integer', value, pos }),
  decimal: (value: number, pos: Position = NO_POSITION): LiteralNode =>
    node({ kind: 'literal', type: 'decimal', value, pos }),
  string: (value: string, pos: Position = NO_POSITION): LiteralNode =>
    node({ kind: 'literal', type: 'string', value, pos }),
  boolean: (value: boolean, pos: Position = NO_POSITION): LiteralNode =>
    node({ kind: 'literal', type: 'boolean', value, pos }),
  null: (pos: Position = NO_POSITION): LiteralNode =>
    node({ kind: 'literal', type: 'null', value: null, pos }),
} as const;

/** The direct subexpressions of a node, in source order (a subquery's column and where included). */
export function children(e: Expr): readonly Expr[] {
  return visit<readonly Expr[]>(e, {
    anyone: () => [],
    or: (n) => n.operands,
    and: (n) => n.operands,
    not: (n) => [n.operand],
    compare: (n) => [n.left, n.right],
    is_null: (n) => [n.operand],
    in: (n) => [n.operand, ...n.values],
    column: () => [],
    qualified_column: () => [],
    exists: (n) => [n.where],
    in_select: (n) => [n.operand, n.column, n.where],
    auth: () => [],
    claim: () => [],
    literal: () => [],
  });
}

/** Whether `e` holds a subquery anywhere. */
export const hasSubquery = (e: Expr): boolean =>
  e.kind === 'exists' || e.kind === 'in_select' || children(e).some(hasSubquery);
