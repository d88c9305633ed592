// Brings the database's generated RLS in line with `auth_policies` and the schema, in one
// transaction under an advisory lock: grants for the request role, ENABLE ROW LEVEL SECURITY and
// the compiler's CREATE POLICY statements for every served table, stale generated policies dropped.
// Generated policies carry a comment with the hash of their DDL and a stamp: the id of the
// transaction that created them, which is their xmin in pg_policy until anyone alters them. A table
// whose hash matches and whose policies still bear their stamp is left alone (no DDL, so no schema
// change ripples to other processes); one altered, dropped or disabled by hand is regenerated; and
// policies without the comment — written by hand — are never touched.

import { createHash } from 'node:crypto';
import { compilePolicySet, type PolicySet } from '../../compiler/policy-set.js';
import { withheldColumns } from '../../compiler/rls/column-privileges.js';
import { compileRls, rlsPolicyNames } from '../../compiler/rls/compile-rls.js';
import { postgresDialect } from '../../compiler/sql/postgres-dialect.js';
import { postgresLiteral } from '../../compiler/sql/fragment.js';
import type { PolicyRow } from '../../compiler/types.js';
import type { DbAdapter, DbSession, SchemaSnapshot, TableInfo } from '../db/adapter.js';
import { policyColumnTypes, schemaTypesOf } from '../enforce/decide.js';
import { AUTH_POLICIES_TABLE } from '../auth/auth-ddl.js';
import { listPolicies } from '../policies/policy-service.js';
import { secretColumnsOf } from '../auth/secret-columns.js';
import { RLS_LOCK_KEY, tableOwnership } from './privileges.js';

const q = postgresDialect.quoteIdent;

/** The comment every generated policy carries: the marker, then the hash of its table's DDL. */
export const GENERATED_MARKER = 'rest generated';

export interface TableRls {
  readonly statements: readonly string[];
  /** sha256 of the statements: equal hashes, equal policies. */
  readonly hash: string;
}

export interface RlsState {
  /** Protected tables and the hash of the DDL in force on each. */
  readonly applied: ReadonlyMap<string, string>;
  /** Protected tables and the stamp their generated policies share (see policyStamp). */
  readonly stamps: ReadonlyMap<string, string>;
  /**
   * Protected tables, and tables refused because the request role may still read a withheld column,
   * with the columns the request role may not SELECT on each (see withheldFrom).
   */
  readonly withheld: ReadonlyMap<string, readonly string[]>;
  /** Tables native RLS cannot protect, with the reason; requests to them are refused. */
  readonly refused: ReadonlyMap<string, string>;
  /** Tables whose policies this run (re)created, and `table.policy` names of stale ones it dropped. */
  readonly changed: readonly string[];
  /** Tables whose grants to the request role this run had to bring in line. */
  readonly regranted: readonly string[];
  readonly dropped: readonly string[];
}

const ddlCache = new WeakMap<PolicySet, WeakMap<SchemaSnapshot, WeakMap<TableInfo, Map<string, TableRls>>>>();

/**
 * The generated DDL of one table of `schema` for `role`, memoised per policy set, schema snapshot,
 * table and role: a table's DDL also depends on the other tables (their columns, in subqueries,
 * and whether some subquery reads this one).
 */
export function tableRls(
  table: TableInfo,
  policies: PolicySet,
  role: string,
  schema: SchemaSnapshot,
): TableRls {
  let perSchema = ddlCache.get(policies);
  if (perSchema === undefined) {
    perSchema = new WeakMap();
    ddlCache.set(policies, perSchema);
  }
  let perTable = perSchema.get(schema);
  if (perTable === undefined) {
    perTable = new WeakMap();
    perSchema.set(schema, perTable);
  }
  let perRole = perTable.get(table);
  if (perRole === undefined) {
    perRole = new Map();
    perTable.set(table, perRole);
  }
  const hit = perRole.get(role);
  if (hit !== undefined) return hit;
  const statements = compileRls({
    table: table.name,
    columns: policyColumnTypes(table),
    policies,
    roles: [role],
    schema: schemaTypesOf(schema),
  });
  const rls: TableRls = Object.freeze({
    statements: Object.freeze(statements),
    hash: createHash('sha256').update(statements.join(';\n')).digest('hex'),
  });
  perRole.set(role, rls);
  return rls;
}

// The stamp closes the comment, so a process of an earlier version, which reads the hash up to the
// first colon, still reads the hash. STAMP reads what commentOf writes.
const commentOf = (hash: string, xmin: string): string =>
  `${GENERATED_MARKER} ${hash}: compiled from auth_policies by rest and regenerated when they or the table change; edits are overwritten (created in transaction ${xmin})`;
const STAMP = /\(created in transaction (\d+)\)$/;

/** What a generated policy's comment and its row in pg_policy say about it. */
export interface GeneratedPolicy {
  /** The hash of its table's DDL when it was generated. */
  readonly hash: string;
  /** Its xmin: the transaction that last wrote its row of pg_policy. */
  readonly xmin: string;
  /** False once anyone altered it: its xmin is no longer the transaction its comment names. */
  readonly intact: boolean;
}

/** A policy with the generated comment, read with its xmin; undefined for a policy written by hand. */
export function generatedPolicy(description: unknown, xmin: unknown): GeneratedPolicy | undefined {
  if (typeof description !== 'string' || !description.startsWith(`${GENERATED_MARKER} `)) return undefined;
  const hash = description.slice(GENERATED_MARKER.length + 1).split(':')[0] ?? '';
  const stamp = STAMP.exec(description)?.[1];
  return { hash, xmin: String(xmin), intact: stamp !== undefined && stamp === String(xmin) };
}

/**
 * The xmin the generated policies of a table share when all of them are there and intact: a request
 * checks that its table has that many policies with that xmin (runtime/rls/native-runner.ts).
 */
export function policyStamp(
  generated: ReadonlyMap<string, GeneratedPolicy>,
  names: readonly string[],
): string | undefined {
  const xmins = new Set<string | undefined>();
  for (const name of names) {
    const policy = generated.get(name);
    xmins.add(policy?.intact === true ? policy.xmin : undefined);
  }
  const [only] = xmins;
  return xmins.size === 1 ? only : undefined;
}

interface TableState {
  readonly rlsEnabled: boolean;
  readonly granted: boolean;
  /** Generated policies on the table, by name. */
  readonly generated: Map<string, GeneratedPolicy>;
}

const TABLES_SQL = `
SELECT c.relname AS table_name, c.relrowsecurity AS rls_enabled,
       has_table_privilege($1, c.oid, 'SELECT') AND has_table_privilege($1, c.oid, 'INSERT')
         AND has_table_privilege($1, c.oid, 'UPDATE') AND has_table_privilege($1, c.oid, 'DELETE') AS granted
FROM pg_class c
WHERE c.relnamespace = current_schema()::regnamespace AND c.relkind IN ('r', 'p')`;

const POLICIES_SQL = `
SELECT c.relname AS table_name, p.polname AS policy_name, p.xmin::text AS xmin, d.description
FROM pg_policy p
JOIN pg_class c ON c.oid = p.polrelid
LEFT JOIN pg_description d ON d.classoid = 'pg_policy'::regclass AND d.objoid = p.oid AND d.objsubid = 0
WHERE c.relnamespace = current_schema()::regnamespace`;

// Serial columns take their default from nextval() on a sequence the table owns, which needs
// USAGE (https://www.postgresql.org/docs/current/datatype-numeric.html#DATATYPE-SERIAL).
const SEQUENCES_SQL = `
SELECT DISTINCT s.oid::regclass::text AS sequence_name
FROM pg_depend d
JOIN pg_class s ON s.oid = d.objid AND s.relkind = 'S'
JOIN pg_class t ON t.oid = d.refobjid
WHERE d.classid = 'pg_class'::regclass AND d.refclassid = 'pg_class'::regclass AND d.deptype IN ('a', 'i')
  AND t.relnamespace = current_schema()::regnamespace
  -- CASE keeps the planner from calling has_sequence_privilege on a relation that is no sequence.
  AND CASE WHEN s.relkind = 'S' THEN NOT has_sequence_privilege($1, s.oid, 'USAGE') ELSE false END`;

async function currentState(tx: DbSession, role: string): Promise<Map<string, TableState>> {
  const tables = await tx.query({ text: TABLES_SQL, values: [role] });
  const state = new Map<string, TableState>(
    tables.rows.map((r) => [
      String(r['table_name']),
      {
        rlsEnabled: r['rls_enabled'] === true,
        granted: r['granted'] === true,
        generated: new Map<string, GeneratedPolicy>(),
      },
    ]),
  );
  const policies = await tx.query({ text: POLICIES_SQL, values: [] });
  for (const r of policies.rows) {
    const generated = generatedPolicy(r['description'], r['xmin']);
    if (generated !== undefined)
      state.get(String(r['table_name']))?.generated.set(String(r['policy_name']), generated);
  }
  return state;
}

const upToDate = (state: TableState, rls: TableRls, names: readonly string[]): boolean =>
  state.rlsEnabled &&
  state.generated.size === names.length &&
  names.every((n) => state.generated.get(n)?.hash === rls.hash && state.generated.get(n)?.intact === true);

const XMINS_SQL = `SELECT p.polname AS policy_name, p.xmin::text AS xmin FROM pg_policy p WHERE p.polrelid = $1::regclass`;

async function run(tx: DbSession, text: string): Promise<void> {
  await tx.query({ text, values: [] });
}

// A table with secret columns (the password hash), or with columns no request may read (their
// column rules, compiler/rls/column-privileges.ts), gets SELECT on its other columns only, so not
// even a policy that lets a row through can expose them to the request role.
const COLUMN_GRANTS_SQL = `
SELECT has_table_privilege($1, $2::regclass, 'INSERT') AND has_table_privilege($1, $2::regclass, 'UPDATE')
         AND has_table_privilege($1, $2::regclass, 'DELETE')
         AND bool_and(has_column_privilege($1, $2::regclass, a.attname, 'SELECT') = (a.attname <> ALL (s.secret))) AS granted
FROM pg_attribute a
-- The secret column names arrive as a JSON array (how the adapters bind arrays).
CROSS JOIN (SELECT array(SELECT jsonb_array_elements_text($3::jsonb)) AS secret) s
WHERE a.attrelid = $2::regclass AND a.attnum > 0 AND NOT a.attisdropped`;

/** The columns of `table` the request role may not SELECT: the secret ones and those no request reads. */
export function withheldFrom(
  table: TableInfo,
  policies: PolicySet,
  schema: SchemaSnapshot,
): readonly string[] {
  const secret = secretColumnsOf(table.name);
  const ruled = new Set(
    withheldColumns({
      policies,
      table: table.name,
      columns: policyColumnTypes(table),
      primaryKey: table.primaryKey,
      schema: schemaTypesOf(schema),
    }),
  );
  return table.columns.filter((c) => secret.has(c.name) || ruled.has(c.name)).map((c) => c.name);
}

/** The statements that give `role` its rights on `table`, SELECT on every column but `withheld`. */
export function grantStatements(table: TableInfo, role: string, withheld: readonly string[]): string[] {
  if (withheld.length === 0)
    return [`GRANT SELECT, INSERT, UPDATE, DELETE ON ${q(table.name)} TO ${q(role)}`];
  const visible = table.columns.filter((c) => !withheld.includes(c.name)).map((c) => q(c.name));
  return [
    `REVOKE ALL ON ${q(table.name)} FROM ${q(role)}`,
    `GRANT SELECT (${visible.join(', ')}), INSERT, UPDATE, DELETE ON ${q(table.name)} TO ${q(role)}`,
  ];
}

/** Whether `role` has exactly the rights grantStatements gives it on `table`. */
async function granted(tx: DbSession, role: string, table: TableInfo, withheld: readonly string[]) {
  const { rows } = await tx.query({ text: COLUMN_GRANTS_SQL, values: [role, q(table.name), withheld] });
  return rows[0]?.['granted'] === true;
}

/**
 * The grants of `role` on `table`, brought in line when they differ; 'exposed' when they still
 * differ afterwards: a withheld column readable through PUBLIC or a role the request role belongs to,
 * which rest does not revoke (those grants are the DBA's, for other roles too).
 */
async function grant(
  tx: DbSession,
  role: string,
  table: TableInfo,
  tableGranted: boolean,
  withheld: readonly string[],
): Promise<'unchanged' | 'regranted' | 'exposed'> {
  // Table-wide SELECT (has_table_privilege) covers every column; column grants alone do not.
  if (withheld.length === 0 ? tableGranted : await granted(tx, role, table, withheld)) return 'unchanged';
  for (const statement of grantStatements(table, role, withheld)) await run(tx, statement);
  return withheld.length === 0 || (await granted(tx, role, table, withheld)) ? 'regranted' : 'exposed';
}

export interface ReconcileOptions {
  /** The schema to protect (every table of it is served). */
  readonly schema: SchemaSnapshot;
}

/**
 * One transaction: reads the policy rows afresh (a process with an older cache never writes older
 * policies), then grants, applies and drops what differs. Returns what is in force.
 */
export async function reconcileRls(
  adapter: DbAdapter,
  role: string,
  options: ReconcileOptions,
): Promise<RlsState> {
  return adapter.transaction(async (tx) => {
    await run(tx, "SET LOCAL lock_timeout = '10s'");
    await tx.query({ text: 'SELECT pg_advisory_xact_lock($1)', values: [RLS_LOCK_KEY] });
    const rows: readonly PolicyRow[] = options.schema.tables.has(AUTH_POLICIES_TABLE)
      ? await listPolicies({ query: (sql) => tx.query(sql), dialect: postgresDialect })
      : [];
    const policies = compilePolicySet(rows, postgresDialect);
    const state = await currentState(tx, role);
    const owners = await tableOwnership(tx, role);
    const refused = new Map<string, string>();
    for (const t of owners.notOwned) refused.set(t, `the login role does not own table ${t}`);
    for (const t of owners.ownedByRole)
      refused.set(t, `the request role ${role} owns table ${t}, so RLS would not apply to it`);

    const applied = new Map<string, string>();
    const stamps = new Map<string, string>();
    const withheldBy = new Map<string, readonly string[]>();
    const regranted: string[] = [];
    const changed: string[] = [];
    const dropped: string[] = [];
    const wanted = new Set<string>();
    for (const table of options.schema.tables.values()) {
      const current = state.get(table.name);
      if (current === undefined || refused.has(table.name)) continue;
      const rls = tableRls(table, policies, role, options.schema);
      const names = rlsPolicyNames(table.name);
      names.forEach((n) => wanted.add(`${table.name}\u0000${n}`));
      const withheld = withheldFrom(table, policies, options.schema);
      const granting = await grant(tx, role, table, current.granted, withheld);
      if (granting === 'regranted') regranted.push(table.name);
      withheldBy.set(table.name, withheld);
      if (granting === 'exposed') {
        refused.set(
          table.name,
          `the request role ${role} may still read a withheld column of ${table.name} (${withheld.join(', ')}) through a grant to PUBLIC or to a role it belongs to`,
        );
        continue;
      }
      let generated: ReadonlyMap<string, GeneratedPolicy> = current.generated;
      if (!upToDate(current, rls, names)) {
        changed.push(table.name);
        for (const statement of rls.statements) await run(tx, statement);
        // The new rows' xmin is this transaction; COMMENT writes pg_description, not pg_policy.
        const { rows } = await tx.query({ text: XMINS_SQL, values: [q(table.name)] });
        const xmins = new Map(rows.map((r) => [String(r['policy_name']), String(r['xmin'])]));
        for (const name of names) {
          const xmin = xmins.get(name) ?? '';
          await run(
            tx,
            `COMMENT ON POLICY ${q(name)} ON ${q(table.name)} IS ${postgresLiteral(commentOf(rls.hash, xmin))}`,
          );
        }
        generated = new Map(
          names.map((n) => [n, { hash: rls.hash, xmin: xmins.get(n) ?? '', intact: xmins.has(n) }]),
        );
      }
      applied.set(table.name, rls.hash);
      const stamp = policyStamp(generated, names);
      if (stamp !== undefined) stamps.set(table.name, stamp);
    }
    for (const [table, s] of state) {
      if (refused.has(table)) continue;
      for (const name of s.generated.keys()) {
        if (wanted.has(`${table}\u0000${name}`)) continue;
        await run(tx, `DROP POLICY ${q(name)} ON ${q(table)}`);
        dropped.push(`${table}.${name}`);
      }
    }
    const sequences = await tx.query({ text: SEQUENCES_SQL, values: [role] });
    for (const r of sequences.rows)
      await run(tx, `GRANT USAGE ON SEQUENCE ${String(r['sequence_name'])} TO ${q(role)}`);
    return { applied, stamps, withheld: withheldBy, refused, changed, regranted, dropped };
  });
}
