// AST → canonical policy text: lower-case keywords, parentheses only where precedence needs
// them, identifiers quoted only when they must be. parsePolicy(printPolicy(e)) equals e.

import { RestError } from '../errors/rest-error.js';
import { visit, type ColumnRef, type Expr, type LiteralNode } from './ast.js';

/** Words an identifier must be double-quoted to be (keywords are case-insensitive). */
export const POLICY_KEYWORDS: readonly string[] = Object.freeze([
  'and',
  'or',
  'not',
  'is',
  'in',
  'null',
  'true',
  'false',
  'auth_user',
  'exists',
  'select',
  'from',
  'where',
]);
const KEYWORDS: ReadonlySet<string> = new Set(POLICY_KEYWORDS);
const IDENTIFIER = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** Binding strength: or 1, and 2, not 3, comparisons 4, operands 5. */
const precedence = (e: Expr): number =>
  visit(e, {
    anyone: () => 5,
    or: () => 1,
    and: () => 2,
    not: () => 3,
    compare: () => 4,
    is_null: () => 4,
    in: () => 4,
    in_select: () => 4,
    exists: () => 4,
    column: () => 5,
    qualified_column: () => 5,
    auth: () => 5,
    claim: () => 5,
    literal: () => 5,
  });

export function printIdentifier(name: string): string {
  return IDENTIFIER.test(name) && !KEYWORDS.has(name.toLowerCase())
    ? name
    : `"${name.replaceAll('"', '""')}"`;
}

const unprintable = (what: string): RestError =>
  new RestError('unprintable_policy', `the policy language cannot write the ${what}`);

/**
 * A finite number in plain digits with a decimal point: `1e21` → `1000000000000000000000.0`,
 * `1.5e-7` → `0.00000015`. String() gives the shortest text that reads back as the same double;
 * only its exponent is spelled out, so Number() of the result is the value again.
 */
function printDecimal(value: number): string {
  if (!Number.isFinite(value)) throw unprintable(`decimal ${value}`);
  const text = String(value);
  const exponential = /^(-?)(\d)(?:\.(\d+))?e([+-]\d+)$/.exec(text);
  if (exponential === null) return text.includes('.') ? text : `${text}.0`;
  const [, sign = '', lead = '', fraction = '', exponent = '0'] = exponential;
  const digits = lead + fraction;
  const point = 1 + Number(exponent);
  if (point <= 0) return `${sign}0.${'0'.repeat(-point)}${digits}`;
  if (point >= digits.length) return `${sign}${digits}${'0'.repeat(point - digits.length)}.0`;
  return `${sign}${digits.slice(0, point)}.${digits.slice(point)}`;
}

export function printLiteral(literal: LiteralNode): string {
  switch (literal.type) {
    case 'integer':
      if (!Number.isSafeInteger(literal.value)) throw unprintable(`integer ${literal.value}`);
      return String(literal.value);
    case 'decimal':
      return printDecimal(literal.value);
    case 'string':
      return `'${literal.value.replaceAll("'", "''")}'`;
    case 'boolean':
      return String(literal.value);
    case 'null':
      return 'null';
  }
}

/** Prints `e`, in parentheses when it binds less tightly than `min` requires. */
function operand(e: Expr, min: number): string {
  const text = printPolicy(e);
  return precedence(e) >= min ? text : `(${text})`;
}

const printColumn = (c: ColumnRef): string =>
  c.kind === 'column' ? printIdentifier(c.name) : `${printIdentifier(c.table)}.${printIdentifier(c.name)}`;

/** ` where <e>`, or nothing for `anyone` (an `in (select …)` without a where clause). */
const whereClause = (e: Expr): string => (e.kind === 'anyone' ? '' : ` where ${printPolicy(e)}`);

export function printPolicy(e: Expr): string {
  return visit(e, {
    anyone: () => '',
    or: (n) => n.operands.map((o) => operand(o, 2)).join(' or '),
    and: (n) => n.operands.map((o) => operand(o, 3)).join(' and '),
    not: (n) => `not ${operand(n.operand, 3)}`,
    compare: (n) => `${operand(n.left, 5)} ${n.op} ${operand(n.right, 5)}`,
    is_null: (n) => `${operand(n.operand, 5)} is ${n.negated ? 'not ' : ''}null`,
    in: (n) =>
      `${operand(n.operand, 5)} ${n.negated ? 'not ' : ''}in (${n.values.map(printLiteral).join(', ')})`,
    in_select: (n) =>
      `${operand(n.operand, 5)} ${n.negated ? 'not ' : ''}in (select ${printColumn(n.column)} from ${printIdentifier(n.from.name)}${whereClause(n.where)})`,
    // `exists` needs a where clause: a condition that is always TRUE stands in for none.
    exists: (n) =>
      `exists (select from ${printIdentifier(n.from.name)} where ${n.where.kind === 'anyone' ? 'true' : printPolicy(n.where)})`,
    column: printColumn,
    qualified_column: printColumn,
    auth: (n) => `auth_user.${n.attr}`,
    claim: (n) => `auth_user.claims.${n.name}`,
    literal: printLiteral,
  });
}
