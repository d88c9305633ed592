// `policy explain --row <pk>`: whether one stored row is visible (read), changeable (update) or
// deletable (delete) for the user, and which part of the policy decides it. The database evaluates
// the compiled predicate for this user on that row — the whole of it, each chosen policy row, and
// their top-level disjuncts and conjuncts two levels down — in one SELECT, three-valued as SQL is.

import type { CompiledPolicy } from '../../compiler/policy-set.js';
import { renderSql, SqlBuilder, type SqlFragment } from '../../compiler/sql/fragment.js';
import type { Action, AuthUser, DialectName } from '../../compiler/types.js';
import { printPolicy } from '../../grammar/print-policy.js';
import type { Expr } from '../../grammar/ast.js';
import { quoteValue } from '../../errors/quote-value.js';
import { isRestError, RestError } from '../../errors/rest-error.js';
import type { DbSession, Row, TableInfo } from '../db/adapter.js';
import type { Dialect } from '../../compiler/sql/dialect.js';
import { whereClause } from '../plan/where.js';
import { singleKeyOf } from '../plan/columns.js';
import type { ParsedPolicy } from '../../compiler/policy-set.js';

/** One condition as the database evaluated it on the row: TRUE, FALSE or NULL (unknown). */
export interface RowCondition {
  /** Set on the top level: the chosen policy row this condition is. */
  readonly policy_id?: number;
  /** Canonical text (printPolicy); a broken row's stored text. */
  readonly expression: string;
  /** null: SQL's unknown (NULL), which allows nothing; a broken row is not evaluated and counts as FALSE. */
  readonly value: boolean | null;
  /**
   * One part that settles its parent by itself: a TRUE arm of an OR that is TRUE, a FALSE (or,
   * failing any, NULL) part of an AND that is not TRUE. Parts are not marked when every one is needed.
   */
  readonly decides: boolean;
  /** Why a chosen row is not evaluated (it does not parse, names a missing column, …). */
  readonly error?: string;
  /** Its top-level disjuncts (an OR) or conjuncts (an AND), two levels below the policy row. */
  readonly parts: readonly RowCondition[];
}

export interface RowExplanation {
  readonly table: string;
  readonly key: { readonly column: string; readonly value: string };
  /** The stored values of the columns the policy names. */
  readonly values: Readonly<Record<string, unknown>>;
  /** Visible (read, read_mine), changeable (update), deletable (delete) for the user. */
  readonly allowed: boolean;
  /** The whole predicate on the row; null when unknown or not evaluated (a missing column). */
  readonly value: boolean | null;
  readonly evaluated: boolean;
  /** One sentence: allowed or not, for whom, and what decides it. */
  readonly verdict: string;
  /** The chosen policy rows, OR-ed, each with its parts; none when the predicate was not evaluated. */
  readonly conditions: readonly RowCondition[];
}

export interface RowInput {
  readonly key: string;
  readonly db: DbSession;
  readonly adapter: { readonly kind: DialectName; readonly dialect: Dialect };
  readonly table: TableInfo;
  readonly action: Action;
  readonly user: AuthUser;
  readonly policy: CompiledPolicy;
  readonly parsed: ReadonlyMap<number, ParsedPolicy>;
  /** The in-process decision: `deny` means no row is reached, whatever the predicate says. */
  readonly denied: { readonly status: number; readonly reason: string } | undefined;
}

const VERBS: Readonly<Record<Exclude<Action, 'create'>, readonly [string, string]>> = {
  read: ['visible to', 'not visible to'],
  read_mine: ['visible (with ?mine) to', 'not visible (with ?mine) to'],
  update: ['changeable by', 'not changeable by'],
  delete: ['deletable by', 'not deletable by'],
};

// Aliases of the evaluated conditions in the SELECT, unlike any column name a schema is likely to have.
const WHOLE = 'rest_explain_whole';
const PART = 'rest_explain_part_';

/** A tree of conditions to evaluate, before the database gives their values. */
interface Node {
  readonly policyId?: number;
  readonly expr: Expr;
  readonly parts: readonly Node[];
}

const partsOf = (e: Expr, depth: number): readonly Node[] =>
  depth === 0 || (e.kind !== 'or' && e.kind !== 'and')
    ? []
    : e.operands.map((operand) => ({ expr: operand, parts: partsOf(operand, depth - 1) }));

function flatten(nodes: readonly Node[]): Node[] {
  return nodes.flatMap((n) => [n, ...flatten(n.parts)]);
}

/** true/false/null from what each driver returns for a boolean expression (boolean, 1/0, '1'/'0'). */
function truth(v: unknown): boolean | null {
  if (v === null || v === undefined) return null;
  if (typeof v === 'boolean') return v;
  return Number(v) !== 0;
}

/** Marks the parts that settle `value` by themselves (see RowCondition.decides). */
function marked(kind: 'or' | 'and', value: boolean | null, parts: readonly RowCondition[]): RowCondition[] {
  const settles = (p: RowCondition): boolean => {
    if (kind === 'or') return value === true ? p.value === true : value === null && p.value === null;
    if (value === true) return false;
    return parts.some((q) => q.value === false) ? p.value === false : p.value === null;
  };
  return parts.map((p) => ({ ...p, decides: settles(p) }));
}

function keyColumnOf(table: TableInfo, key: string): string {
  const single = singleKeyOf(table);
  if ('why' in single) {
    const { why } = single;
    throw new RestError(
      'unsupported_key',
      `--row ${quoteValue(key)} cannot address a row: table ${quoteValue(table.name)} ${why}`,
    );
  }
  return single.name;
}

/** ` WHERE <key> = <value>` as the table endpoints build it (the value checked against the column). */
function keyWhere(input: RowInput, column: string): SqlFragment {
  const { table, key, adapter } = input;
  try {
    return whereClause({ table, key, filters: [], predicate: undefined }, adapter.dialect);
  } catch (e) {
    if (!isRestError(e)) throw e;
    throw new RestError(
      'invalid_row_key',
      `--row ${quoteValue(key)} is not a key of table ${quoteValue(table.name)}: ${e.message} (column ${quoteValue(column)})`,
    );
  }
}

function describeUser(user: AuthUser): string {
  if (!user.is_authenticated) return 'an anonymous user';
  if (user.id === null) return 'some admin';
  return `user ${user.id}`;
}

export async function explainRow(input: RowInput): Promise<RowExplanation> {
  const { table, policy, user, db, key } = input;
  const { dialect } = input.adapter;
  if (input.action === 'create') {
    throw new RestError('invalid_arguments', '--row does not apply to create: a new row has no key yet');
  }
  const column = keyColumnOf(table, key);
  const where = keyWhere(input, column);
  const broken = new Map(policy.issues.map((i) => [i.policyId, i.message] as const));
  const evaluated = policy.missingColumns.length === 0;
  const nodes: Node[] = [];
  for (const row of policy.resolution.rows) {
    const p = input.parsed.get(row.id);
    if (p?.ok === true && !broken.has(row.id))
      nodes.push({ policyId: row.id, expr: p.expr, parts: partsOf(p.expr, 2) });
  }
  const all = evaluated ? flatten(nodes) : [];
  const b = new SqlBuilder(dialect).append('SELECT ').appendIdent(column);
  const columns = evaluated ? policy.columns : [];
  for (const c of columns) if (c !== column) b.append(', ').appendIdent(c);
  if (evaluated) {
    b.append(', (').appendFragment(policy.predicate).append(') AS ').appendIdent(WHOLE);
    all.forEach((n, i) =>
      b.append(', (').appendFragment(policy.compilePart(n.expr)).append(') AS ').appendIdent(`${PART}${i}`),
    );
  }
  b.append(' FROM ').appendIdent(table.name).appendFragment(where);
  const { rows } = await db.query(renderSql(dialect, b.build(), user));
  const stored: Row | undefined = rows[0];
  if (stored === undefined) {
    throw new RestError(
      'unknown_row',
      `row ${quoteValue(key)} does not exist in table ${quoteValue(table.name)} (no row has ${column} = ${quoteValue(key)})`,
    );
  }
  const valueOf = new Map(all.map((n, i) => [n, truth(stored[`${PART}${i}`])] as const));
  const condition = (n: Node): RowCondition => {
    const value = valueOf.get(n) ?? null;
    const parts = n.parts.map(condition);
    return {
      ...(n.policyId === undefined ? {} : { policy_id: n.policyId }),
      expression: printPolicy(n.expr),
      value,
      decides: false,
      parts: n.expr.kind === 'or' || n.expr.kind === 'and' ? marked(n.expr.kind, value, parts) : parts,
    };
  };
  const whole = evaluated ? truth(stored[WHOLE]) : null;
  const conditions = marked(
    'or',
    whole,
    (evaluated ? policy.resolution.rows : []).map((row): RowCondition => {
      const node = nodes.find((n) => n.policyId === row.id);
      if (node !== undefined) return condition(node);
      const p = input.parsed.get(row.id);
      const error = broken.get(row.id) ?? (p?.ok === false ? p.error.message : 'it cannot be used');
      return {
        policy_id: row.id,
        expression: row.expression,
        value: false,
        decides: false,
        error,
        parts: [],
      };
    }),
  );
  const allowed = input.denied === undefined && whole === true;
  const [yes, no] = VERBS[input.action];
  const subject = `${allowed ? yes : no} ${describeUser(user)}`;
  const deciding = conditions.filter((c) => c.decides).map((c) => `#${c.policy_id ?? ''}`);
  let why: string;
  if (!evaluated)
    why = `the policy names column ${quoteValue(policy.missingColumns[0] ?? '')}, which the table lacks`;
  else if (input.denied !== undefined)
    why = `the request is denied before any SQL (deny ${input.denied.status}): ${input.denied.reason}`;
  else if (whole === true)
    why = `policy ${deciding.join(', ')} ${deciding.length === 1 ? 'is' : 'are'} TRUE for it`;
  else if (conditions.length === 0) why = 'no policy row is chosen';
  else if (whole === null)
    why = 'no chosen policy is TRUE for it, and an unknown (NULL) result allows nothing';
  else why = 'every chosen policy is FALSE for it';
  return {
    table: table.name,
    key: { column, value: key },
    values: Object.fromEntries(columns.map((c) => [c, stored[c]] as const)),
    allowed,
    value: whole,
    evaluated,
    verdict: `${subject}: ${why}${allowed && input.action === 'update' ? '; the changed row must still make the policy TRUE' : ''}`,
    conditions,
  };
}
