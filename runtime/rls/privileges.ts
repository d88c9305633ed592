// What native RLS needs from the database before the first request: a login role that may create
// (or already belongs to) the request role and owns the served tables, and a request role that RLS
// applies to — not a superuser, not BYPASSRLS, not an owner of a served table. Missing rights are
// one clear startup error that suggests `-db.rls off`; the request role is created when missing.

import { postgresDialect } from '../../compiler/sql/postgres-dialect.js';
import { RestError } from '../../errors/rest-error.js';
import type { DbAdapter, DbSession } from '../db/adapter.js';
import { requestRoleName } from './request-role.js';

/** The advisory lock (one per database) that serialises role setup and reconciling across processes. */
export const RLS_LOCK_KEY = 7_283_401_117;

const q = postgresDialect.quoteIdent;

interface RoleFacts {
  readonly database: string;
  readonly login: string;
  readonly loginSuper: boolean;
  readonly loginCreateRole: boolean;
  readonly roleExists: boolean;
  readonly roleSuper: boolean;
  readonly roleBypassRls: boolean;
  readonly member: boolean;
  readonly schema: string;
  readonly schemaUsage: boolean;
  readonly loginOwnsSchema: boolean;
}

const FACTS_SQL = `
SELECT current_database() AS database, current_user AS login, l.rolsuper AS login_super,
       l.rolcreaterole AS login_createrole, r.oid IS NOT NULL AS role_exists,
       coalesce(r.rolsuper, false) AS role_super, coalesce(r.rolbypassrls, false) AS role_bypassrls,
       coalesce(pg_has_role(current_user, r.oid, 'MEMBER'), false) AS member,
       current_schema() AS schema,
       coalesce(has_schema_privilege(r.oid, current_schema(), 'USAGE'), false) AS schema_usage,
       pg_has_role(current_user, n.nspowner, 'USAGE') AS login_owns_schema
FROM pg_roles l
LEFT JOIN pg_roles r ON r.rolname = $1
JOIN pg_namespace n ON n.nspname = current_schema()
WHERE l.rolname = current_user`;

/**
 * Served tables whose owner the login role does not act as, or whose owner the request role acts
 * as. Partitions and inheritance children are not served: requests read them through their parent,
 * whose policies apply.
 */
const TABLE_OWNERS_SQL = `
SELECT c.relname AS table_name,
       pg_has_role(current_user, c.relowner, 'USAGE') AS login_owns,
       coalesce(pg_has_role(r.oid, c.relowner, 'USAGE'), false) AND NOT c.relforcerowsecurity AS role_bypasses
FROM pg_class c
LEFT JOIN pg_roles r ON r.rolname = $1
WHERE c.relnamespace = current_schema()::regnamespace AND c.relkind IN ('r', 'p')
  AND NOT EXISTS (SELECT FROM pg_inherits i WHERE i.inhrelid = c.oid)
ORDER BY c.relname`;

async function roleFacts(session: DbSession, role: string): Promise<RoleFacts> {
  const { rows } = await session.query({ text: FACTS_SQL, values: [role] });
  const r = rows[0];
  if (r === undefined) throw new RestError('rls_setup_failed', 'the current role was not found in pg_roles');
  return {
    database: String(r['database']),
    login: String(r['login']),
    loginSuper: r['login_super'] === true,
    loginCreateRole: r['login_createrole'] === true,
    roleExists: r['role_exists'] === true,
    roleSuper: r['role_super'] === true,
    roleBypassRls: r['role_bypassrls'] === true,
    member: r['member'] === true,
    schema: String(r['schema']),
    schemaUsage: r['schema_usage'] === true,
    loginOwnsSchema: r['login_owns_schema'] === true,
  };
}

interface TableOwnership {
  readonly notOwned: readonly string[];
  readonly ownedByRole: readonly string[];
}

export async function tableOwnership(session: DbSession, role: string): Promise<TableOwnership> {
  const { rows } = await session.query({ text: TABLE_OWNERS_SQL, values: [role] });
  return {
    notOwned: rows.filter((r) => r['login_owns'] !== true).map((r) => String(r['table_name'])),
    ownedByRole: rows.filter((r) => r['role_bypasses'] === true).map((r) => String(r['table_name'])),
  };
}

const list = (names: readonly string[]): string => {
  const shown = names.slice(0, 5).map((n) => JSON.stringify(n));
  return names.length > 5 ? `${shown.join(', ')} and ${names.length - 5} more` : shown.join(', ');
};

/** Every right the login role lacks, in words (empty when it has them all). */
function missingRights(facts: RoleFacts, owners: TableOwnership, role: string): string[] {
  const missing: string[] = [];
  const canManageRoles = facts.loginSuper || facts.loginCreateRole;
  if (!facts.roleExists && !canManageRoles) {
    missing.push(
      `it cannot create role ${JSON.stringify(role)} (needs CREATEROLE, or create the role NOLOGIN and grant it to ${JSON.stringify(facts.login)})`,
    );
  } else if (facts.roleExists && !facts.member && !canManageRoles) {
    missing.push(
      `it is not a member of role ${JSON.stringify(role)} (GRANT ${q(role)} TO ${q(facts.login)})`,
    );
  }
  if (owners.notOwned.length > 0) {
    missing.push(
      `it does not own table${owners.notOwned.length > 1 ? 's' : ''} ${list(owners.notOwned)} (enabling row-level security and creating policies need the owner)`,
    );
  }
  if (!facts.schemaUsage && !facts.loginOwnsSchema && !facts.loginSuper) {
    missing.push(
      `it cannot grant USAGE on schema ${JSON.stringify(facts.schema)} to ${JSON.stringify(role)}`,
    );
  }
  return missing;
}

/** Why the request role would bypass RLS (empty when RLS applies to it). */
function bypasses(facts: RoleFacts, owners: TableOwnership): string[] {
  const why: string[] = [];
  if (facts.roleSuper) why.push('it is a superuser');
  if (facts.roleBypassRls) why.push('it has BYPASSRLS');
  if (owners.ownedByRole.length > 0)
    why.push(`it owns ${list(owners.ownedByRole)} without FORCE ROW LEVEL SECURITY`);
  return why;
}

/**
 * Checks every right native RLS needs, creates the request role when missing and grants it to the
 * login role; returns its name. Throws one RestError (exit 3) naming what is missing.
 */
export async function prepareRequestRole(adapter: DbAdapter): Promise<string> {
  return adapter.transaction(async (tx) => {
    await tx.query({ text: 'SELECT pg_advisory_xact_lock($1)', values: [RLS_LOCK_KEY] });
    const { rows } = await tx.query({ text: 'SELECT current_database() AS database', values: [] });
    const role = requestRoleName(String(rows[0]?.['database']));
    const facts = await roleFacts(tx, role);
    const owners = await tableOwnership(tx, role);
    const missing = missingRights(facts, owners, role);
    if (missing.length > 0) {
      throw new RestError(
        'rls_privileges_missing',
        `native row-level security cannot be set up for login role ${JSON.stringify(facts.login)}: ${missing.join('; ')}. ` +
          'Grant these, or start with -db.rls off (policies enforced in-process).',
      );
    }
    const unsafe = bypasses(facts, owners);
    if (unsafe.length > 0) {
      throw new RestError(
        'rls_role_bypasses',
        `refusing native row-level security: request role ${JSON.stringify(role)} would bypass it (${unsafe.join('; ')}). ` +
          'Fix the role, or start with -db.rls off.',
      );
    }
    if (!facts.roleExists) await tx.query({ text: `CREATE ROLE ${q(role)} NOLOGIN`, values: [] });
    if (!facts.member) await tx.query({ text: `GRANT ${q(role)} TO ${q(facts.login)}`, values: [] });
    if (!facts.schemaUsage)
      await tx.query({ text: `GRANT USAGE ON SCHEMA ${q(facts.schema)} TO ${q(role)}`, values: [] });
    return role;
  });
}
