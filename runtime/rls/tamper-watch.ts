// Notices when the generated row-level security of a served table — its policies, the flag, and
// the request role's privileges on its columns — is dropped, altered, disabled or granted behind
// rest's back (docs/row-level-security.md) and asks for a check: where an event trigger is in place
// (the login role may create one: a superuser), every CREATE/ALTER/DROP POLICY, ALTER TABLE,
// COMMENT, GRANT or REVOKE in the database NOTIFYs `rest_rls`, heard within milliseconds, and a
// slow periodic check is the backstop; otherwise the check runs every second. The check reads
// pg_class, pg_policy and the request role's privileges and says, per table, what is no longer as
// rest generated it. Requests never depend on it: each one checks its
// own table in the database (runtime/rls/native-runner.ts); this only decides how soon a table is
// restored.

import { rlsPolicyNames } from '../../compiler/rls/compile-rls.js';
import { postgresDialect } from '../../compiler/sql/postgres-dialect.js';
import { postgresLiteral } from '../../compiler/sql/fragment.js';
import type { DbAdapter, DbSession } from '../db/adapter.js';
import type { NativeRunnerOptions } from './native-runner.js';
import { createPgChangeListener, type ChangeListener } from '../db/postgres/pg-listener.js';
import { RLS_LOCK_KEY } from './privileges.js';
import { generatedPolicy, policyStamp, type GeneratedPolicy } from './reconcile.js';

/** The NOTIFY channel of the event trigger. */
export const TAMPER_CHANNEL = 'rest_rls';
/** One per database, shared by every rest process on it. */
export const TAMPER_TRIGGER = 'rest_rls_tamper';
const TRIGGER_FUNCTION = 'rest_rls_tamper_notify';
const PERIODIC_CHECK_MS = 1000;
const BACKSTOP_CHECK_MS = 10_000;

const q = postgresDialect.quoteIdent;

export interface TamperWatchLogger {
  info(fields: Readonly<Record<string, unknown>>, message: string): void;
  warn(fields: Readonly<Record<string, unknown>>, message: string): void;
}

export interface IntegrityReport {
  /** Tables whose generated RLS is not as rest left it, with what was found. */
  readonly tampered: ReadonlyMap<string, readonly string[]>;
  /** Intact tables and the stamp of their generated policies. */
  readonly stamps: ReadonlyMap<string, string>;
  /**
   * Tables where the request role's privileges differ from what reconcile granted, with what was
   * found (only when the expected privileges were given). Reconciling tells a change by hand from a
   * change of the policies, which another process may have applied already.
   */
  readonly privileges: ReadonlyMap<string, readonly string[]>;
}

const INTEGRITY_SQL = `
SELECT c.relname AS table_name, c.relrowsecurity AS rls_enabled, p.polname AS policy_name,
       p.xmin::text AS xmin, d.description
FROM pg_catalog.pg_class c
LEFT JOIN pg_catalog.pg_policy p ON p.polrelid = c.oid
LEFT JOIN pg_catalog.pg_description d
  ON d.classoid = 'pg_catalog.pg_policy'::regclass AND d.objoid = p.oid AND d.objsubid = 0
WHERE c.relnamespace = current_schema()::regnamespace AND c.relkind IN ('r', 'p')`;

interface TableFacts {
  readonly rlsEnabled: boolean;
  /** Every policy on the table: its generated form, or null when it has no generated comment. */
  readonly policies: Map<string, GeneratedPolicy | null>;
}

function findings(facts: TableFacts, names: readonly string[]): string[] {
  const found: string[] = [];
  if (!facts.rlsEnabled) found.push('row-level security is disabled');
  for (const name of names) {
    const policy = facts.policies.get(name);
    if (policy === undefined) found.push(`policy ${name} is missing`);
    else if (policy === null) found.push(`policy ${name} lost its generated comment`);
    else if (!policy.intact) found.push(`policy ${name} was altered`);
  }
  return found;
}

// The columns the request role may SELECT (through any grant: its own, PUBLIC's, a role's it
// belongs to) and whether it may INSERT, UPDATE and DELETE, per table.
const PRIVILEGES_SQL = `
SELECT c.relname AS table_name,
       has_table_privilege($1, c.oid, 'INSERT') AND has_table_privilege($1, c.oid, 'UPDATE')
         AND has_table_privilege($1, c.oid, 'DELETE') AS writable,
       coalesce(jsonb_agg(a.attname::text ORDER BY a.attnum)
         FILTER (WHERE has_column_privilege($1, c.oid, a.attnum, 'SELECT')), '[]') AS readable,
       coalesce(jsonb_agg(a.attname::text ORDER BY a.attnum), '[]') AS columns
FROM pg_catalog.pg_class c
JOIN pg_catalog.pg_attribute a ON a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped
WHERE c.relnamespace = current_schema()::regnamespace AND c.relkind IN ('r', 'p')
GROUP BY c.oid, c.relname`;

/** What the request role's privileges should be: its name, and per table the columns it may not read. */
export interface ExpectedPrivileges {
  readonly role: string;
  readonly withheld: ReadonlyMap<string, readonly string[]>;
}

const textList = (value: unknown): readonly string[] =>
  Array.isArray(value) ? value.map((v) => String(v)) : [];

/** Per table, what differs between the request role's privileges and those reconcile granted. */
async function privilegeFindings(
  session: DbSession,
  expected: ExpectedPrivileges,
): Promise<Map<string, string[]>> {
  const { rows } = await session.query({ text: PRIVILEGES_SQL, values: [expected.role] });
  const found = new Map<string, string[]>();
  for (const r of rows) {
    const table = String(r['table_name']);
    const withheld = expected.withheld.get(table);
    if (withheld === undefined) continue;
    const readable = new Set(textList(r['readable']));
    const here: string[] = [];
    const exposed = withheld.filter((c) => readable.has(c));
    if (exposed.length > 0) here.push(`the request role may read withheld column ${exposed.join(', ')}`);
    const lost = textList(r['columns']).filter((c) => !readable.has(c) && !withheld.includes(c));
    if (lost.length > 0) here.push(`the request role may not read column ${lost.join(', ')}`);
    if (r['writable'] !== true) here.push('the request role lost INSERT, UPDATE or DELETE');
    if (here.length > 0) found.set(table, here);
  }
  return found;
}

/**
 * Reads what the database holds for the generated RLS of `tables` (tables no longer there are
 * skipped), and, given what reconcile granted, the request role's privileges on them.
 */
export async function readRlsIntegrity(
  session: DbSession,
  tables: Iterable<string>,
  privileges?: ExpectedPrivileges,
): Promise<IntegrityReport> {
  const { rows } = await session.query({ text: INTEGRITY_SQL, values: [] });
  const granted =
    privileges === undefined ? new Map<string, string[]>() : await privilegeFindings(session, privileges);
  const facts = new Map<string, TableFacts>();
  for (const r of rows) {
    const table = String(r['table_name']);
    let t = facts.get(table);
    if (t === undefined) {
      t = { rlsEnabled: r['rls_enabled'] === true, policies: new Map() };
      facts.set(table, t);
    }
    if (r['policy_name'] !== null) {
      t.policies.set(String(r['policy_name']), generatedPolicy(r['description'], r['xmin']) ?? null);
    }
  }
  const tampered = new Map<string, readonly string[]>();
  const stamps = new Map<string, string>();
  for (const table of tables) {
    const t = facts.get(table);
    if (t === undefined) continue;
    const policyNames = rlsPolicyNames(table);
    const found = findings(t, policyNames);
    if (found.length > 0) {
      tampered.set(table, found);
      continue;
    }
    const generated = new Map<string, GeneratedPolicy>();
    for (const [name, policy] of t.policies) if (policy !== null) generated.set(name, policy);
    const stamp = policyStamp(generated, policyNames);
    if (stamp !== undefined) stamps.set(table, stamp);
  }
  const privilegesFound = new Map<string, readonly string[]>();
  for (const [table, found] of granted) if (facts.has(table)) privilegesFound.set(table, found);
  return { tampered, stamps, privileges: privilegesFound };
}

/**
 * A native runner's `stampOf` and `restamp` over `stamps` (table → the stamp its generated
 * policies share, as last seen): a request whose check failed reads the table's policies again and,
 * when they are all there and intact under another stamp (another process regenerated them), the
 * new stamp is kept and the request sent again with it (runtime/rls/native-runner.ts).
 */
export function stampsFor(
  adapter: DbAdapter,
  stamps: Map<string, string>,
): Required<Pick<NativeRunnerOptions, 'stampOf' | 'restamp'>> {
  return {
    stampOf: (table) => stamps.get(table),
    restamp: async (table, stale) => {
      const fresh = (await readRlsIntegrity(adapter, [table])).stamps.get(table);
      if (fresh === undefined || fresh === stale) return undefined;
      stamps.set(table, fresh);
      return fresh;
    },
  };
}

// Event triggers fire inside the DDL's own transaction
// (https://www.postgresql.org/docs/current/event-trigger-definition.html): the function only
// NOTIFYs, which is delivered at commit, and swallows any error so it never makes a DBA's DDL fail.
// An empty payload lets PostgreSQL fold the notifications of one transaction into one.
const FUNCTION_BODY = `
BEGIN
  PERFORM pg_catalog.pg_notify(${postgresLiteral(TAMPER_CHANNEL)}, '');
EXCEPTION WHEN OTHERS THEN
  RAISE WARNING 'rest: could not signal a change of row-level security: %', SQLERRM;
END
`;

// ALTER TABLE covers ENABLE/DISABLE/FORCE/NO FORCE ROW LEVEL SECURITY and ownership; COMMENT covers
// the generated comment; DROP OWNED may drop or rewrite policies of the roles it names; GRANT and
// REVOKE on tables and columns change what the request role may read. (REASSIGN OWNED and GRANT or
// REVOKE of a role fire no event trigger — roles are shared objects: the backstop check sees them;
// a request role made owner is refused by every request's own check.)
export const TAMPER_TAGS: readonly string[] = [
  'CREATE POLICY',
  'ALTER POLICY',
  'DROP POLICY',
  'ALTER TABLE',
  'COMMENT',
  'DROP OWNED',
  'GRANT',
  'REVOKE',
];

const TRIGGER_FACTS_SQL = `
SELECT r.rolsuper AS superuser, t.evtenabled AS enabled, to_jsonb(t.evttags) AS tags,
       f.prosrc AS source, current_schema() AS schema
FROM pg_catalog.pg_roles r
LEFT JOIN pg_catalog.pg_event_trigger t ON t.evtname = $1
LEFT JOIN pg_catalog.pg_proc f
  ON f.oid = pg_catalog.to_regprocedure(pg_catalog.quote_ident(current_schema()) || '.' || $2 || '()')
WHERE r.rolname = current_user`;

/** How this process hears of changes, and why. */
export interface TamperDetection {
  readonly mode: 'event trigger' | 'periodic check';
  readonly reason: string;
}

/**
 * Creates the event trigger (and its function, in the served schema) when the login role may and
 * it is missing — idempotent, under the advisory lock every rest process takes for RLS DDL — and
 * says whether an enabled one is in place. A trigger a DBA disabled stays disabled.
 */
export async function installTamperTrigger(adapter: DbAdapter): Promise<TamperDetection> {
  return adapter.transaction(async (tx) => {
    await tx.query({ text: 'SELECT pg_advisory_xact_lock($1)', values: [RLS_LOCK_KEY] });
    const { rows } = await tx.query({ text: TRIGGER_FACTS_SQL, values: [TAMPER_TRIGGER, TRIGGER_FUNCTION] });
    const facts = rows[0];
    const enabled = facts?.['enabled'];
    // 'R' fires only in sessions replaying replication (session_replication_role = replica).
    if (enabled === 'D' || enabled === 'R') {
      return { mode: 'periodic check', reason: `event trigger ${TAMPER_TRIGGER} is disabled` };
    }
    const present = enabled !== undefined && enabled !== null;
    // A trigger created by an earlier version may not fire on every tag checked now.
    const tags = new Set(textList(facts?.['tags']));
    const complete = present && TAMPER_TAGS.every((t) => tags.has(t));
    if (facts?.['superuser'] !== true) {
      if (!present)
        return { mode: 'periodic check', reason: 'the login role may not create an event trigger' };
      return complete
        ? { mode: 'event trigger', reason: `event trigger ${TAMPER_TRIGGER} is in place` }
        : {
            mode: 'periodic check',
            reason: `event trigger ${TAMPER_TRIGGER} does not fire on ${TAMPER_TAGS.filter((t) => !tags.has(t)).join(', ')} and the login role may not re-create it`,
          };
    }
    const fn = `${q(String(facts['schema']))}.${q(TRIGGER_FUNCTION)}()`;
    if (facts['source'] !== FUNCTION_BODY) {
      await tx.query({
        text: `CREATE OR REPLACE FUNCTION ${fn} RETURNS event_trigger LANGUAGE plpgsql AS ${postgresLiteral(FUNCTION_BODY)}`,
        values: [],
      });
    }
    if (present && !complete) await tx.query({ text: `DROP EVENT TRIGGER ${q(TAMPER_TRIGGER)}`, values: [] });
    if (!complete) {
      await tx.query({
        text: `CREATE EVENT TRIGGER ${q(TAMPER_TRIGGER)} ON ddl_command_end WHEN TAG IN (${TAMPER_TAGS.map((t) => postgresLiteral(t)).join(', ')}) EXECUTE FUNCTION ${fn}`,
        values: [],
      });
    }
    return { mode: 'event trigger', reason: `event trigger ${TAMPER_TRIGGER} is in place` };
  });
}

export interface TamperWatchOptions {
  readonly adapter: DbAdapter;
  /** The database URL for the LISTEN connection; without it, the periodic check. */
  readonly url: string | undefined;
  readonly logger: TamperWatchLogger;
  /** Reads the generated RLS and reacts to what it finds; never runs twice at once. */
  readonly check: () => Promise<void>;
}

export interface TamperWatch {
  /** Runs the check soon (once more after a running one). */
  poke(): void;
  /** Stops the timer and the LISTEN connection; the event trigger stays for the other processes. */
  close(): void;
}

export async function startTamperWatch(options: TamperWatchOptions): Promise<TamperWatch> {
  const { adapter, logger } = options;
  let detection: TamperDetection;
  try {
    detection =
      options.url === undefined
        ? { mode: 'periodic check', reason: 'no URL to LISTEN on' }
        : await installTamperTrigger(adapter);
  } catch (e) {
    detection = {
      mode: 'periodic check',
      reason: `the event trigger could not be set up: ${e instanceof Error ? e.message : String(e)}`,
    };
  }

  let closed = false;
  let running = false;
  let again = false;
  const poke = (): void => {
    if (closed) return;
    if (running) {
      again = true;
      return;
    }
    running = true;
    void (async () => {
      do {
        again = false;
        try {
          await options.check();
        } catch (e) {
          // After close the pool may be gone: nothing to report.
          if (!closed) {
            logger.warn(
              { err: e instanceof Error ? e.message : String(e) },
              'checking row-level security for changes failed',
            );
          }
        }
      } while (again && !closed);
      running = false;
    })();
  };

  let listener: ChangeListener | undefined;
  if (detection.mode === 'event trigger' && options.url !== undefined) {
    listener = createPgChangeListener({ url: options.url, channel: TAMPER_CHANNEL, onChange: poke, logger });
  }
  const intervalMs = detection.mode === 'event trigger' ? BACKSTOP_CHECK_MS : PERIODIC_CHECK_MS;
  const timer = setInterval(poke, intervalMs);
  timer.unref();
  await listener?.ready;
  logger.info(
    { detection: detection.mode, reason: detection.reason, interval_ms: intervalMs },
    detection.mode === 'event trigger'
      ? `rls tamper detection: event trigger (LISTEN ${TAMPER_CHANNEL}), backstop check every ${intervalMs / 1000} s`
      : `rls tamper detection: periodic check every ${intervalMs / 1000} s`,
  );

  return {
    poke,
    close() {
      closed = true;
      clearInterval(timer);
      void listener?.close();
    },
  };
}
