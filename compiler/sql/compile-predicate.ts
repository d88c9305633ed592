// One walker from a policy AST to a SQL condition, for every dialect and both enforcement
// paths. Dialects differ only through their hooks; the paths differ only in how auth_user is read
// — bound parameters (portable) or session settings (PostgreSQL native RLS) — and in how a
// subquery sees its table: through the inlined read policy (portable) or the table's own RLS.

import { ast, visit, type AuthNode, type ColumnRef, type Expr } from '../../grammar/ast.js';
import { claimTargetFor, compareClaimTargets, isCorrelated, typeOf } from '../analyze.js';
import type { ColumnTypes } from '../types.js';
import { enterScope, outerScope, resolveColumn, type RelationContext, type Scope } from '../scope.js';
import type { ClaimTarget } from '../semantics.js';
import { PARAMETER_BINDING, type AuthBinding } from './auth-binding.js';
import type { Dialect } from './dialect.js';
import { SqlBuilder, type SqlFragment } from './fragment.js';

const literalCasts = { integer: 'bigint', decimal: 'numeric', string: 'text', boolean: 'boolean' } as const;

const SQL_OPERATORS = { '=': '=', '!=': '<>', '<': '<', '<=': '<=', '>': '>', '>=': '>=' } as const;

export interface CompileOptions extends RelationContext {
  /** The policy's own table's columns (also `schema.get(table)` when `table` is given). */
  readonly columns?: ColumnTypes;
  /**
   * How auth_user and claims are written: bound per request (PARAMETER_BINDING, the default) or
   * read from the session settings of native RLS (compiler/rls/session-settings.ts SESSION_BINDING).
   */
  readonly auth?: AuthBinding;
  /**
   * The portable path's view of another table (docs/policy-language.md): the inner table's own resolved `read`
   * policy, AND-ed into every subquery on it and compiled the same way (its subqueries inline
   * theirs in turn). Omitted on the native path, where PostgreSQL applies that table's RLS.
   */
  readonly inline?: (table: string) => Expr;
  /**
   * Writes an `x [not] in (select …)` that names no enclosing row as a comparison with an array
   * of the subquery's values (the dialect's `arrayMembership`; PostgreSQL: `x = ANY (ARRAY(SELECT
   * …))`, `x <> ALL (…)`), computed once per statement; correlated ones stay IN. The native path
   * asks for it (compiler/rls/compile-rls.ts says why).
   */
  readonly arrayMembership?: boolean;
}

/**
 * Subqueries nest at most this deep once inner policies are inlined (cycles are refused before,
 * compiler/cycles.ts); deeper, the inner table counts as unreadable: its subquery selects nothing.
 */
export const MAX_SUBQUERY_NESTING = 8;

// Columns outside any subquery are written bare, as before relations existed; inside one, every
// column is qualified by its table's name. Tables get no alias: a policy whose subqueries read its
// own table is a cycle and never compiled, so along one path of nesting a name repeats only when
// the expression repeats an inner table, and then SQL's innermost-first resolution is the
// language's own (compiler/scope.ts).
export function compileToSql(expr: Expr, dialect: Dialect, options: CompileOptions = {}): SqlFragment {
  const b = new SqlBuilder(dialect);
  const binding = options.auth ?? PARAMETER_BINDING;
  const inline = options.inline;
  const array = options.arrayMembership === true ? dialect.arrayMembership : undefined;
  if (options.arrayMembership === true && array === undefined) {
    throw new Error(`compileToSql: the ${dialect.name} dialect has no arrays`);
  }

  const claim = (name: string, as: ClaimTarget | 'presence'): void => binding.claim(b, name, as);
  const auth = (n: AuthNode): void => binding.auth(b, n.attr);
  const text = (isText: boolean, emit: () => void): void => {
    if (isText) b.append(dialect.codePointText.open);
    emit();
    if (isText) b.append(dialect.codePointText.close);
  };
  const list = (items: readonly Expr[], separator: string, each: (e: Expr) => void): void =>
    items.forEach((item, i) => {
      if (i > 0) b.append(separator);
      each(item);
    });

  /** `scope` resolves names; `nesting` counts the SQL subqueries the text is inside. */
  const compile = (root: Expr, scope: Scope, nesting: number): void => {
    /** A value; `target` says what a claim is coerced to. */
    const value = (e: Expr, target: ClaimTarget): void => {
      if (e.kind === 'claim') claim(e.name, target);
      else walk(e);
    };
    const condition = (e: Expr): void => value(e, 'boolean');
    const column = (ref: ColumnRef): void => {
      const at = resolveColumn(scope, ref);
      const table = at?.table ?? (ref.kind === 'qualified_column' ? ref.table : undefined);
      if (nesting > 0 && table !== undefined) b.appendIdent(table).append('.');
      b.appendIdent(ref.name);
    };
    /** `FROM <table> WHERE <where> AND <the table's own read policy>`, inside the parentheses. */
    const fromWhere = (table: string, where: Expr): void => {
      const inner = enterScope(scope, table, options);
      b.append(' FROM ').appendIdent(table);
      const policy =
        inline === undefined
          ? undefined
          : nesting + 1 >= MAX_SUBQUERY_NESTING
            ? ast.boolean(false)
            : inline(table);
      const parts: (() => void)[] = [];
      if (where.kind !== 'anyone') parts.push(() => compile(where, inner, nesting + 1));
      if (policy !== undefined && policy.kind !== 'anyone') {
        parts.push(() =>
          compile(
            policy,
            outerScope(undefined, {
              table,
              ...(options.schema === undefined ? {} : { schema: options.schema }),
            }),
            nesting + 1,
          ),
        );
      }
      parts.forEach((emit, i) => {
        b.append(i === 0 ? ' WHERE ' : ' AND ');
        emit();
      });
    };

    const walk = (e: Expr): void =>
      visit<void>(e, {
        anyone: () => void b.append(dialect.trueSql),
        or: (n) => {
          b.append('(');
          list(n.operands, ' OR ', condition);
          b.append(')');
        },
        and: (n) => {
          b.append('(');
          list(n.operands, ' AND ', condition);
          b.append(')');
        },
        not: (n) => {
          b.append('(NOT ');
          condition(n.operand);
          b.append(')');
        },
        compare: (n) => {
          const targets = compareClaimTargets(n, scope);
          const isText =
            [typeOf(n.left, scope), typeOf(n.right, scope)].includes('text') ||
            targets.left === 'text' ||
            targets.right === 'text';
          b.append('(');
          text(isText, () => value(n.left, targets.left ?? 'text'));
          b.append(` ${SQL_OPERATORS[n.op]} `);
          text(isText, () => value(n.right, targets.right ?? 'text'));
          b.append(')');
        },
        is_null: (n) => {
          b.append('(');
          if (n.operand.kind === 'claim') claim(n.operand.name, 'presence');
          else walk(n.operand);
          b.append(n.negated ? ' IS NOT NULL)' : ' IS NULL)');
        },
        in: (n) => {
          const firstTyped = n.values.find((v) => v.type !== 'null');
          const target = claimTargetFor(firstTyped === undefined ? 'null' : typeOf(firstTyped, scope));
          const isText =
            typeOf(n.operand, scope) === 'text' ||
            (n.operand.kind === 'claim' && target === 'text') ||
            firstTyped?.type === 'string';
          b.append('(');
          text(isText, () => value(n.operand, target));
          b.append(n.negated ? ' NOT IN (' : ' IN (');
          list(n.values, ', ', (v) =>
            text(isText && v.kind === 'literal' && v.type !== 'null', () => walk(v)),
          );
          b.append('))');
        },
        exists: (n) => {
          b.append('EXISTS (SELECT 1');
          fromWhere(n.from.name, n.where);
          b.append(')');
        },
        in_select: (n) => {
          const inner = enterScope(scope, n.from.name, options);
          const selected = typeOf(n.column, inner);
          const target = claimTargetFor(selected);
          const isText =
            selected === 'text' ||
            typeOf(n.operand, scope) === 'text' ||
            (n.operand.kind === 'claim' && target === 'text');
          const asArray = array !== undefined && !isCorrelated(n, scope);
          b.append('(');
          text(isText, () => value(n.operand, target));
          if (asArray) b.append(n.negated ? array.notIn : array.in);
          else b.append(n.negated ? ' NOT IN (SELECT ' : ' IN (SELECT ');
          text(isText, () => compile(n.column, inner, nesting + 1));
          fromWhere(n.from.name, n.where);
          b.append(asArray ? array.close : ')').append(')');
        },
        column,
        qualified_column: column,
        auth,
        claim: (n) => claim(n.name, 'boolean'),
        literal: (n) => {
          if (n.type === 'null') b.append('NULL');
          else b.appendValue(n.value, literalCasts[n.type]);
        },
      });

    condition(root);
  };

  compile(expr, outerScope(options.columns, options), 0);
  return b.build();
}
