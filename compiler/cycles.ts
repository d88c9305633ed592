// Cycles through subqueries (docs/policy-language.md): table T reads table X when a policy that decides
// some action on T holds a subquery on X — rows of `all` included, for exactly the tables that
// fall back to them (compiler/resolve.ts). PostgreSQL expands every policy of X when a policy of
// T reads X, whatever the action, so any such loop would be "infinite recursion detected in
// policy" at request time; the portable path would inline forever. Found here, spelled out.

import { children, type Expr, type Position } from '../grammar/ast.js';
import { resolvePolicies } from './resolve.js';
import { ACTIONS, type PolicyRow } from './types.js';

/** A table a subquery reads, where it is named. */
export interface SubqueryTable {
  readonly table: string;
  readonly pos: Position;
}

/** Every table a subquery of `expr` reads, at any depth, in order of appearance. */
export function subqueryTablesOf(expr: Expr): readonly SubqueryTable[] {
  const own =
    expr.kind === 'exists' || expr.kind === 'in_select'
      ? [{ table: expr.from.name, pos: expr.from.pos }]
      : [];
  return [...own, ...children(expr).flatMap(subqueryTablesOf)];
}

export interface PolicyCycle {
  /** The tables in order, the first repeated at the end: `['docs', 'members', 'docs']`. */
  readonly tables: readonly string[];
  /** For each step, the id of a policy row whose subquery makes it. */
  readonly policyIds: readonly number[];
  /** `docs → members → docs` */
  readonly path: string;
}

export interface CycleReport {
  readonly cycles: readonly PolicyCycle[];
  /** Whether row `policyId`, deciding for `table`, reads a table on a cycle through `table`. */
  isBroken(policyId: number, table: string): boolean;
}

interface Edge {
  readonly to: string;
  readonly policyId: number;
}

/**
 * The cycles among `tables` (every table that exists; tables named by rows or subqueries are
 * added) given every policy row; `parse` gives a row's expression, or undefined when it does not
 * parse (it reads nothing). One cycle per strongly connected component, from its first table.
 */
export function findCycles(
  rows: readonly PolicyRow[],
  tables: Iterable<string>,
  parse: (row: PolicyRow) => Expr | undefined,
): CycleReport {
  const reads = new Map<PolicyRow, readonly string[]>();
  for (const row of rows) {
    const expr = parse(row);
    reads.set(row, expr === undefined ? [] : [...new Set(subqueryTablesOf(expr).map((s) => s.table))]);
  }
  const nodes = new Set<string>(tables);
  for (const row of rows) if (row.table_name !== 'all') nodes.add(row.table_name);
  for (const targets of reads.values()) targets.forEach((t) => nodes.add(t));

  const edges = new Map<string, Edge[]>();
  for (const table of nodes) {
    const out: Edge[] = [];
    const seen = new Set<string>();
    for (const action of ACTIONS) {
      for (const row of resolvePolicies(rows, table, action).rows) {
        for (const to of reads.get(row) ?? []) {
          const key = `${row.id}\u0000${to}`;
          if (seen.has(key)) continue;
          seen.add(key);
          out.push({ to, policyId: row.id });
        }
      }
    }
    edges.set(table, out);
  }

  const component = stronglyConnected([...nodes], (t) => (edges.get(t) ?? []).map((e) => e.to));
  const onCycle = (from: string, to: string): boolean => {
    const c = component.get(from);
    return (
      c !== undefined &&
      c === component.get(to) &&
      (from !== to || (edges.get(from) ?? []).some((e) => e.to === from))
    );
  };
  const broken = new Set<string>();
  for (const [from, out] of edges) {
    for (const e of out) if (onCycle(from, e.to)) broken.add(`${e.policyId}\u0000${from}`);
  }

  const cycles: PolicyCycle[] = [];
  const reported = new Set<number>();
  for (const start of nodes) {
    const c = component.get(start);
    if (c === undefined || reported.has(c)) continue;
    const path = cycleFrom(start, (t) => (edges.get(t) ?? []).filter((e) => onCycle(t, e.to)));
    if (path === undefined) continue;
    reported.add(c);
    const names = [start, ...path.map((e) => e.to)];
    cycles.push(
      Object.freeze({
        tables: Object.freeze(names),
        policyIds: Object.freeze(path.map((e) => e.policyId)),
        path: names.join(' → '),
      }),
    );
  }

  return Object.freeze({
    cycles: Object.freeze(cycles),
    isBroken: (policyId: number, table: string) => broken.has(`${policyId}\u0000${table}`),
  });
}

/** Tarjan's algorithm: each node's component number. */
function stronglyConnected(
  nodes: readonly string[],
  next: (n: string) => readonly string[],
): Map<string, number> {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const component = new Map<string, number>();
  let counter = 0;
  let components = 0;
  const visit = (v: string): void => {
    index.set(v, counter);
    low.set(v, counter);
    counter += 1;
    stack.push(v);
    onStack.add(v);
    for (const w of next(v)) {
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v) ?? 0, low.get(w) ?? 0));
      } else if (onStack.has(w)) {
        low.set(v, Math.min(low.get(v) ?? 0, index.get(w) ?? 0));
      }
    }
    if (low.get(v) === index.get(v)) {
      let w: string | undefined;
      do {
        w = stack.pop();
        if (w === undefined) break;
        onStack.delete(w);
        component.set(w, components);
      } while (w !== v);
      components += 1;
    }
  };
  for (const n of nodes) if (!index.has(n)) visit(n);
  return component;
}

/** A shortest walk of cycle edges from `start` back to it (breadth first), or undefined. */
function cycleFrom(start: string, next: (n: string) => readonly Edge[]): readonly Edge[] | undefined {
  const via = new Map<string, { readonly from: string; readonly edge: Edge }>();
  const queue = [start];
  for (let i = 0; i < queue.length; i += 1) {
    const at = queue[i] as string;
    for (const edge of next(at)) {
      if (edge.to === start) {
        const path: Edge[] = [edge];
        for (let t = at; t !== start;) {
          const step = via.get(t);
          if (step === undefined) break;
          path.unshift(step.edge);
          t = step.from;
        }
        return path;
      }
      if (!via.has(edge.to)) {
        via.set(edge.to, { from: at, edge });
        queue.push(edge.to);
      }
    }
  }
  return undefined;
}
