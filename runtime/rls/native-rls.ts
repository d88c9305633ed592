// The native RLS path of one server process, assembled: request role checked and prepared,
// policies reconciled at start, again whenever the policy cache sees new rows (API, CLI, psql —
// heard through LISTEN/NOTIFY), whenever a request finds its table's policies out of date (a
// new table or changed columns), and whenever the tamper watch finds generated policies dropped,
// altered or disabled, or the request role's column privileges changed, by hand — requests to such a table are refused (503) until they are
// restored; the Authorizer and RequestRunner the HTTP layer plugs in.

import type { PolicySet } from '../../compiler/policy-set.js';
import { RestError } from '../../errors/rest-error.js';
import type { DbAdapter, SchemaSnapshot, TableInfo } from '../db/adapter.js';
import { isPgAdapter } from '../db/postgres/pg-adapter.js';
import type { RequestRunner } from '../enforce/request-runner.js';
import type { Authorizer } from '../enforce/authorizer.js';
import type { PolicyCache } from '../policies/policy-cache.js';
import { createNativeAuthorizer } from '../enforce/native-authorizer.js';
import { createNativeRunner } from './native-runner.js';
import { prepareRequestRole } from './privileges.js';
import { reconcileRls, tableRls, type RlsState } from './reconcile.js';
import { readRlsIntegrity, stampsFor, startTamperWatch } from './tamper-watch.js';

export interface NativeRlsLogger {
  info(fields: Readonly<Record<string, unknown>>, message: string): void;
  warn(fields: Readonly<Record<string, unknown>>, message: string): void;
}

export interface NativeRlsDeps {
  /** A PostgreSQL adapter; its login role sets up and reconciles, requests run as the request role. */
  readonly adapter: DbAdapter;
  /** A URL for the connection that listens for tamper notifications; undefined: a periodic check. */
  readonly url: string | undefined;
  readonly policies: PolicyCache<PolicySet>;
  readonly logger: NativeRlsLogger;
  /**
   * Whether to watch for generated policies changed by hand (default true). A run confined to one
   * transaction that nobody else sees (runtime/policy-test/) has nothing to watch.
   */
  readonly tamperWatch?: boolean;
}

export interface NativeRls {
  /** The NOLOGIN role requests run as. */
  readonly role: string;
  readonly authorizer: Authorizer;
  readonly runner: RequestRunner;
  /** Reconciles now (after any running reconcile) and resolves with what is in force. */
  reconcile(): Promise<RlsState>;
  /** Stops listening to policy changes and watching for tampering. */
  close(): void;
}

const notEnforced = (table: string, reason: string): RestError =>
  new RestError(
    'rls_not_enforced',
    `row-level security cannot be enforced on ${table}; the request was refused`,
    {
      cause: new Error(reason),
    },
  );

/**
 * Extensions that run parts of a statement on other nodes, where the transaction-local settings
 * row-level security reads (the role, `rest.*`) are not set: Citus's workers see none of them.
 */
const DISTRIBUTED_ENGINES = `SELECT extname FROM pg_catalog.pg_extension WHERE extname IN ('citus') ORDER BY 1`;

/** Refuses a database where native row-level security would not be enforced on every node. */
async function refuseDistributed(adapter: DbAdapter): Promise<void> {
  const { rows } = await adapter.query({ text: DISTRIBUTED_ENGINES, values: [] });
  const extension = rows[0]?.['extname'];
  if (extension === undefined) return;
  throw new RestError(
    'rls_distributed',
    `-db.rls on cannot be enforced on this database: it has the ${String(extension)} extension, whose worker nodes do not see the transaction-local settings row-level security reads; serve it with -db.rls off (compiled WHERE predicates)`,
  );
}

const sameColumns = (a: readonly string[] | undefined, b: readonly string[] | undefined): boolean =>
  a !== undefined && b !== undefined && a.length === b.length && a.every((c, i) => c === b[i]);

/** Checks rights, prepares the role and applies the policies; throws one clear RestError when it cannot. */
export async function startNativeRls(deps: NativeRlsDeps): Promise<NativeRls> {
  const { adapter, logger } = deps;
  if (!isPgAdapter(adapter)) {
    throw new RestError(
      'rls_needs_postgres',
      `-db.rls on needs PostgreSQL; this database is ${adapter.kind}`,
    );
  }
  await refuseDistributed(adapter);
  const role = await prepareRequestRole(adapter);

  let state: RlsState;
  /** The stamp of each table's generated policies as last seen, for the per-request check. */
  const stamps = new Map<string, string>();
  /** Reconcile runs started so far. */
  let started = 0;
  /**
   * Tables whose generated RLS was found changed by hand, with what was found and how many runs had
   * started then: a run that started later saw the change, so it restored the table if it applied it.
   */
  const tampered = new Map<string, { readonly found: string; readonly since: number }>();
  let running: Promise<RlsState> | undefined;
  let queued: Promise<RlsState> | undefined;
  const once = async (): Promise<RlsState> => {
    started += 1;
    const run = started;
    const next = await reconcileRls(adapter, role, { schema: await adapter.introspect() });
    state = next;
    stamps.clear();
    for (const [table, stamp] of next.stamps) stamps.set(table, stamp);
    if (next.changed.length > 0 || next.dropped.length > 0) {
      logger.info(
        { role, changed: next.changed, dropped: next.dropped },
        'row-level security policies regenerated',
      );
    }
    for (const [table, reason] of next.refused)
      logger.warn({ table, reason }, 'row-level security cannot be enforced on a table');
    for (const [table, mark] of tampered) {
      if (mark.since < run && next.applied.has(table)) {
        tampered.delete(table);
        logger.info({ table }, 'row-level security restored; requests to the table are served again');
      }
    }
    return next;
  };
  /** Single flight; a call during a run gets one more run that starts after it (and sees its change). */
  const reconcile = (): Promise<RlsState> => {
    if (running === undefined) {
      running = once().finally(() => {
        running = undefined;
      });
      return running;
    }
    queued ??= running
      .catch(() => undefined)
      .then(() => {
        queued = undefined;
        return reconcile();
      });
    return queued;
  };

  state = await reconcile();

  /** Waits until no reconcile runs or waits to run in this process. */
  const idle = async (): Promise<void> => {
    for (let pending = queued ?? running; pending !== undefined; pending = queued ?? running) {
      await pending.catch(() => undefined);
    }
  };

  /**
   * Per schema snapshot, the (table, hash) pairs a request already reconciled for: a mismatch that
   * remains is the database being newer. A new snapshot (a table renamed back, re-created) starts
   * afresh, as does a new policy set.
   */
  let attempted = new WeakMap<SchemaSnapshot, Set<string>>();
  // Every new policy snapshot starts a reconcile (below) before a request can use it; while one is
  // under way the database may hold an intermediate state (rows read between two changes), so a
  // request waits for it rather than trusting the last state — even one whose hash matches.
  const ensure = async (table: TableInfo, policies: PolicySet, schema: SchemaSnapshot): Promise<void> => {
    if (queued !== undefined || running !== undefined) await idle();
    const mark = tampered.get(table.name);
    if (mark !== undefined) throw notEnforced(table.name, mark.found);
    const expected = tableRls(table, policies, role, schema).hash;
    if (state.applied.get(table.name) === expected) return;
    const key = `${table.name}\u0000${expected}`;
    const tried = attempted.get(schema) ?? new Set<string>();
    attempted.set(schema, tried);
    if (!tried.has(key)) {
      tried.add(key);
      await reconcile();
    }
    if (!state.applied.has(table.name)) {
      throw notEnforced(
        table.name,
        state.refused.get(table.name) ?? 'the table was not found when reconciling',
      );
    }
  };

  // Tables whose policies have subqueries (`all` stands for every table): planned per request.
  let relational = (await deps.policies.get()).compiled.relationalTables;
  const unsubscribe = deps.policies.subscribe(({ compiled }) => {
    relational = compiled.relationalTables;
    attempted = new WeakMap();
    reconcile().catch((e: unknown) => {
      logger.warn(
        { err: e instanceof Error ? e.message : String(e) },
        'reconciling row-level security failed',
      );
    });
  });

  /**
   * Compares the database with what reconcile left; a table whose policies were changed by hand is
   * refused, then restored. Privileges that differ are brought back in line by a reconcile (requests
   * wait for it, as for any reconcile): it reads the policies afresh, so grants another process
   * already changed for new policies are no tampering — only a table it had to grant again while
   * the policies withheld the same columns is reported as changed by hand.
   */
  const check = async (): Promise<void> => {
    const expected = state.withheld;
    const refused = state.refused;
    const report = await readRlsIntegrity(adapter, state.applied.keys(), { role, withheld: expected });
    for (const [table, stamp] of report.stamps) stamps.set(table, stamp);
    // A table refused because PUBLIC or a role the request role belongs to may read a withheld
    // column was reported when it was refused; it is reconciled again once that grant is gone.
    const changed = [...report.privileges].filter(([table]) => !refused.has(table));
    const recovered = [...expected.keys()].filter((t) => refused.has(t) && !report.privileges.has(t));
    if (report.tampered.size === 0 && changed.length === 0 && recovered.length === 0) return;
    const warn = (table: string, found: readonly string[], refusing: boolean): void =>
      logger.warn(
        { table, found },
        `the generated row-level security of ${table} was changed by hand (${found.join('; ')}); ${refusing ? 'refusing requests to it until it is restored' : 'restoring it'}`,
      );
    for (const [table, found] of report.tampered) {
      if (!tampered.has(table)) warn(table, found, true);
      tampered.set(table, { found: found.join('; '), since: started });
    }
    const next = await reconcile();
    const restored = (table: string): void =>
      logger.info({ table }, 'row-level security restored; requests to the table are served again');
    for (const [table, found] of changed) {
      if (report.tampered.has(table) || !sameColumns(expected.get(table), next.withheld.get(table))) continue;
      if (next.refused.has(table)) {
        warn(table, found, true);
      } else if (next.regranted.includes(table)) {
        warn(table, found, false);
        restored(table);
      }
    }
    for (const table of recovered) if (next.applied.has(table)) restored(table);
  };
  const watch =
    deps.tamperWatch === false
      ? { poke: () => undefined, close: () => undefined }
      : await startTamperWatch({ adapter, url: deps.url, logger, check });

  return {
    role,
    authorizer: createNativeAuthorizer({ policies: deps.policies, rls: { ensure } }),
    runner: createNativeRunner({
      adapter,
      role,
      ...stampsFor(adapter, stamps),
      onNotInForce: () => watch.poke(),
      customPlans: (table) => relational.has(table) || relational.has('all'),
    }),
    reconcile,
    close: () => {
      unsubscribe();
      watch.close();
    },
  };
}
