// What is wrong with the relations of the stored policies, for people to fix (docs/policy-language.md, issue
// 15): rows on a cycle through subqueries (written by hand: validation refuses the others; they
// deny) and subqueries whose table has no index on any column they name (each request then scans
// that table once per row it judges — Supabase's advisor lint 0003 is the anchor). The start-up
// log and `policy explain` say so.

import type { PolicySet } from '../../compiler/policy-set.js';
import { ACTIONS, type DialectName } from '../../compiler/types.js';
import type { DbSession, SchemaSnapshot } from '../db/adapter.js';
import { policyColumnTypes, schemaTypesOf } from '../enforce/decide.js';

/** Per table, the columns that lead some index (or the primary key). */
export type IndexedColumns = ReadonlyMap<string, ReadonlySet<string>>;

// The first column of every index of the current schema/database. SQLite's INTEGER PRIMARY KEY is
// the rowid and appears in no index list: the primary key is added from the schema snapshot.
const LEADING_INDEX_COLUMNS_SQL: Readonly<Record<DialectName, string>> = {
  postgres: `
SELECT t.relname AS table_name, a.attname AS column_name
FROM pg_catalog.pg_index i
JOIN pg_catalog.pg_class t ON t.oid = i.indrelid
JOIN pg_catalog.pg_attribute a ON a.attrelid = t.oid AND a.attnum = i.indkey[0]
WHERE t.relnamespace = current_schema()::regnamespace`,
  mysql: `
SELECT table_name AS table_name, column_name AS column_name
FROM information_schema.statistics
WHERE table_schema = DATABASE() AND seq_in_index = 1`,
  // https://www.sqlite.org/pragma.html#pragfunc (table-valued pragma functions, SQLite ≥ 3.16)
  sqlite: `
SELECT m.name AS table_name, ii.name AS column_name
FROM sqlite_master m, pragma_index_list(m.name) il, pragma_index_info(il.name) ii
WHERE m.type = 'table' AND ii.seqno = 0`,
};

/** One catalog query: the leading column of every index, and every table's first key column. */
export async function indexedColumns(
  db: DbSession & { readonly kind: DialectName },
  schema: SchemaSnapshot,
): Promise<IndexedColumns> {
  const indexed = new Map<string, Set<string>>();
  const add = (table: string, column: string): void => {
    const columns = indexed.get(table) ?? new Set<string>();
    columns.add(column);
    indexed.set(table, columns);
  };
  for (const t of schema.tables.values()) {
    const key = t.primaryKey[0];
    if (key !== undefined) add(t.name, key);
  }
  const { rows } = await db.query({ text: LEADING_INDEX_COLUMNS_SQL[db.kind], values: [] });
  for (const r of rows) add(String(r['table_name']), String(r['column_name']));
  return indexed;
}

/**
 * Why a subquery on `table` naming `columns` is slow, or undefined: none of the columns it names
 * leads an index (a subquery that names none reads the whole table anyway, and is not reported).
 */
export function indexWarning(
  table: string,
  columns: readonly string[],
  indexed: IndexedColumns,
): string | undefined {
  if (columns.length === 0 || columns.some((c) => indexed.get(table)?.has(c) === true)) return undefined;
  const names = columns.map((c) => `'${c}'`).join(', ');
  return `no index on ${names} of table '${table}': the subquery scans it for every row it judges (CREATE INDEX ON ${table} (${columns[0] ?? ''}))`;
}

export type RelationProblem =
  | {
      readonly kind: 'cycle';
      readonly path: string;
      readonly policyIds: readonly number[];
      readonly message: string;
    }
  | {
      readonly kind: 'unindexed';
      readonly table: string;
      readonly columns: readonly string[];
      readonly message: string;
    };

/** Every cycle among the stored rows and every unindexed subquery of the policies of `schema`'s tables. */
export function relationProblems(
  set: PolicySet,
  schema: SchemaSnapshot,
  indexed: IndexedColumns,
): RelationProblem[] {
  const types = schemaTypesOf(schema);
  const problems: RelationProblem[] = set.cycles(types).cycles.map((c) => ({
    kind: 'cycle',
    path: c.path,
    policyIds: [...new Set(c.policyIds)],
    message: `policies ${[...new Set(c.policyIds)].join(', ')} make a cycle through subqueries (${c.path}), so they are broken: they deny until changed`,
  }));
  const seen = new Set<string>();
  if (set.subqueryTables.size === 0) return problems;
  for (const table of schema.tables.values()) {
    for (const action of ACTIONS) {
      const policy = set.policyFor(table.name, action, policyColumnTypes(table), types);
      for (const [inner, columns] of policy.relations) {
        const message = indexWarning(inner, columns, indexed);
        const key = `${inner}\u0000${columns.join('\u0000')}`;
        if (message === undefined || seen.has(key)) continue;
        seen.add(key);
        problems.push({ kind: 'unindexed', table: inner, columns, message });
      }
    }
  }
  return problems;
}
