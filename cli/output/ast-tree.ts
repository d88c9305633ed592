// A policy AST as an indented tree, one node per line, for `rest policy explain`.

import { visit, type Expr } from '../../grammar/ast.js';
import { printLiteral } from '../../grammar/print-policy.js';

/** The node's own label and its children. */
function describe(e: Expr): { readonly label: string; readonly children: readonly Expr[] } {
  return visit(e, {
    anyone: () => ({ label: 'anyone (empty expression)', children: [] }),
    or: (n) => ({ label: 'or', children: n.operands }),
    and: (n) => ({ label: 'and', children: n.operands }),
    not: (n) => ({ label: 'not', children: [n.operand] }),
    compare: (n) => ({ label: n.op, children: [n.left, n.right] }),
    is_null: (n) => ({ label: n.negated ? 'is not null' : 'is null', children: [n.operand] }),
    in: (n) => ({ label: n.negated ? 'not in' : 'in', children: [n.operand, ...n.values] }),
    column: (n) => ({ label: `column ${n.name}`, children: [] }),
    qualified_column: (n) => ({ label: `column ${n.table}.${n.name}`, children: [] }),
    exists: (n) => ({ label: `exists in ${n.from.name} where`, children: [n.where] }),
    in_select: (n) => ({
      label: `${n.negated ? 'not in' : 'in'} select from ${n.from.name}`,
      children: [n.operand, n.column, ...(n.where.kind === 'anyone' ? [] : [n.where])],
    }),
    auth: (n) => ({ label: `auth_user.${n.attr}`, children: [] }),
    claim: (n) => ({ label: `auth_user.claims.${n.name}`, children: [] }),
    literal: (n) => ({ label: `${n.type} ${printLiteral(n)}`, children: [] }),
  });
}

export function formatAstTree(expr: Expr, indent = ''): string[] {
  const { label, children } = describe(expr);
  return [`${indent}${label}`, ...children.flatMap((c) => formatAstTree(c, `${indent}  `))];
}
