// One walker from a policy AST to a SQL condition, for every dialect and both enforcement
// paths. Dialects differ only through their hooks; the paths differ only in how auth_user is read:
// bound parameters (portable) or session settings (PostgreSQL native RLS).

import { visit, type AuthNode, type Expr } from '../../grammar/ast.js';
import { claimTargetFor, compareClaimTargets, typeOf, type ColumnTypes } from '../analyze.js';
import { authSettingSql, claimSettingSql } from '../rls/session-settings.js';
import type { ClaimTarget } from '../semantics.js';
import type { Dialect } from './dialect.js';
import { SqlBuilder, type SqlFragment } from './fragment.js';

export type AuthMode = 'parameters' | 'session';

/** PostgreSQL casts of bound values; other dialects ignore them. */
const authCasts: Readonly<Record<AuthNode['attr'], string>> = {
  id: 'bigint',
  username: 'text',
  is_admin: 'boolean',
  is_authenticated: 'boolean',
};
const claimCasts: Readonly<Record<ClaimTarget | 'presence', string>> = {
  number: 'numeric',
  text: 'text',
  boolean: 'boolean',
  presence: 'boolean',
};
const literalCasts = { integer: 'bigint', decimal: 'numeric', string: 'text', boolean: 'boolean' } as const;

const SQL_OPERATORS = { '=': '=', '!=': '<>', '<': '<', '<=': '<=', '>': '>', '>=': '>=' } as const;

export interface CompileOptions {
  readonly columns?: ColumnTypes;
  /** `parameters` (default): auth_user values are bound per request; `session`: read from settings. */
  readonly auth?: AuthMode;
}

export function compileToSql(expr: Expr, dialect: Dialect, options: CompileOptions = {}): SqlFragment {
  const b = new SqlBuilder(dialect);
  const columns = options.columns;
  const session = options.auth === 'session';

  const claim = (name: string, as: ClaimTarget | 'presence'): void => {
    if (session) b.append(claimSettingSql(name, as));
    else b.appendAuth({ kind: 'claim', name, as }, claimCasts[as]);
  };
  const auth = (n: AuthNode): void => {
    if (session) b.append(authSettingSql[n.attr]);
    else b.appendAuth({ kind: n.attr }, authCasts[n.attr]);
  };
  /** A value; `target` says what a claim is coerced to. */
  const value = (e: Expr, target: ClaimTarget): void => {
    if (e.kind === 'claim') claim(e.name, target);
    else walk(e);
  };
  const condition = (e: Expr): void => value(e, 'boolean');
  const text = (isText: boolean, emit: () => void): void => {
    if (isText) b.append(dialect.textCompare.open);
    emit();
    if (isText) b.append(dialect.textCompare.close);
  };
  const list = (items: readonly Expr[], separator: string, each: (e: Expr) => void): void =>
    items.forEach((item, i) => {
      if (i > 0) b.append(separator);
      each(item);
    });

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
        const targets = compareClaimTargets(n, columns);
        const isText = [typeOf(n.left, columns), typeOf(n.right, columns)].includes('text') ||
          targets.left === 'text' || targets.right === 'text';
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
        const target = claimTargetFor(firstTyped === undefined ? 'null' : typeOf(firstTyped, columns));
        const isText = typeOf(n.operand, columns) === 'text' || (n.operand.kind === 'claim' && target === 'text') ||
          firstTyped?.type === 'string';
        b.append('(');
        text(isText, () => value(n.operand, target));
        b.append(n.negated ? ' NOT IN (' : ' IN (');
        list(n.values, ', ', (v) => text(isText && v.kind === 'literal' && v.type !== 'null', () => walk(v)));
        b.append('))');
      },
      column: (n) => void b.appendIdent(n.name),
      auth,
      claim: (n) => claim(n.name, 'boolean'),
      literal: (n) => {
        if (n.type === 'null') b.append('NULL');
        else b.appendValue(n.value, literalCasts[n.type]);
      },
    });

  condition(expr);
  return b.build();
}
