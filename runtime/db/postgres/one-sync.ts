// Several extended-protocol statements sent with one Sync: PostgreSQL runs them in one implicit
// transaction that the Sync commits, or that the first error rolls back — the statements after a
// failing one are skipped (https://www.postgresql.org/docs/current/protocol-flow.html#PROTOCOL-FLOW-PIPELINING).
// So a request's settings statement and its one statement need no BEGIN and no COMMIT: two
// statements and one ReadyForQuery instead of four of each. Transaction-local settings
// (set_config(…, true)) last until that Sync.
//
// It is a pg Query whose submit and message handlers are its own: the client queues it like any
// query and hands it the messages of its turn, one ReadyForQuery ending it. (pg's pipeline mode,
// which the adapter uses, accepts only Query instances, since other submittables such as pg-cursor
// keep portals open across round trips; this one never does.)

import pg from 'pg';
import Result from 'pg/lib/result.js';
import { prepareValue } from 'pg/lib/utils.js';

/** The pg Connection methods this file uses (pg ships no types for them). */
interface Connection {
  readonly stream: { cork?(): void; uncork?(): void };
  readonly parsedStatements: Record<string, string | undefined>;
  parse(message: { text: string; name?: string; types?: unknown[] }): void;
  bind(message: {
    portal: string;
    statement?: string;
    values: readonly unknown[];
    binary: boolean;
    valueMapper: (value: unknown, index: number) => unknown;
  }): void;
  describe(message: { type: 'P'; name: string }): void;
  execute(message: { portal: string }): void;
  sync(): void;
}

/** How the statements ended: every result, or the first error and the index of its statement. */
export type OneSyncOutcome =
  | { readonly ok: true; readonly results: readonly pg.QueryResult[] }
  | { readonly ok: false; readonly index: number; readonly error: unknown };

/**
 * True when every named statement of `statements` is already prepared on `client`: only then can
 * they go in one Sync. A statement parsed in a Sync that then fails may or may not exist
 * afterwards, and pg could not know; so a text's first run on a connection goes the ordinary way,
 * which records its name.
 */
export function preparedOn(client: pg.ClientBase, statements: readonly pg.QueryConfig[]): boolean {
  const { parsedStatements } = (client as unknown as { connection: Connection }).connection;
  return statements.every((s) => s.name === undefined || s.name === '' || parsedStatements[s.name] !== undefined);
}

/** The statements of one Sync as one pg query: settles with their outcome, rejects only when the connection fails. */
export class OneSync extends pg.Query {
  readonly #statements: readonly pg.QueryConfig[];
  readonly #types: pg.CustomTypesConfig;
  readonly #settle: (outcome: OneSyncOutcome) => void;
  readonly #fail: (error: unknown) => void;
  readonly #results: Result[] = [];
  #current: Result | undefined;
  #failed = false;

  private constructor(
    statements: readonly pg.QueryConfig[],
    types: pg.CustomTypesConfig,
    settle: (outcome: OneSyncOutcome) => void,
    fail: (error: unknown) => void,
  ) {
    // No name: pg's parse bookkeeping (by `activeQuery.name`) leaves these statements alone.
    super({ text: '' });
    this.#statements = statements;
    this.#types = types;
    this.#settle = settle;
    this.#fail = fail;
  }

  /** Sends `statements` (each named one prepared on `client`: preparedOn) with one Sync. */
  static run(
    client: pg.ClientBase,
    statements: readonly pg.QueryConfig[],
    types: pg.CustomTypesConfig,
  ): Promise<OneSyncOutcome> {
    return new Promise((resolve, reject) => {
      void client.query(new OneSync(statements, types, resolve, reject));
    });
  }

  /** Called by pg with the client's connection when it is this query's turn. */
  override submit = (pgConnection: pg.Connection): void => {
    const connection = pgConnection as unknown as Connection;
    connection.stream.cork?.();
    try {
      for (const statement of this.#statements) {
        const name = statement.name ?? '';
        // An unnamed statement is parsed every time; a named one was checked by preparedOn.
        if (name === '') connection.parse({ text: statement.text, name: '', types: [] });
        connection.bind({
          portal: '',
          statement: name,
          values: statement.values ?? [],
          binary: false,
          valueMapper: prepareValue,
        });
        connection.describe({ type: 'P', name: '' });
        connection.execute({ portal: '' });
      }
      connection.sync();
    } finally {
      connection.stream.uncork?.();
    }
  };

  #result(): Result {
    this.#current ??= new Result(undefined, this.#types);
    return this.#current;
  }

  handleRowDescription(message: { fields: unknown[] }): void {
    this.#result().addFields(message.fields);
  }

  handleDataRow(message: { fields: unknown[] }): void {
    const result = this.#result();
    result.addRow(result.parseRow(message.fields));
  }

  handleCommandComplete(message: unknown): void {
    const result = this.#result();
    result.addCommandComplete(message);
    this.#results.push(result);
    this.#current = undefined;
  }

  handleEmptyQuery(): void {
    this.#results.push(this.#result());
    this.#current = undefined;
  }

  /**
   * A statement failed (PostgreSQL skips the rest until the Sync and rolls back), or the
   * connection did. pg deactivates this query on an error and gives the ReadyForQuery that follows
   * to nobody, so the outcome is settled here. A server error carries a severity; anything else is
   * the connection's.
   */
  handleError(error: unknown): void {
    this.#failed = true;
    if ((error as { severity?: unknown } | null)?.severity === undefined) this.#fail(error);
    else this.#settle({ ok: false, index: this.#results.length, error });
  }

  handleReadyForQuery(): void {
    if (!this.#failed) this.#settle({ ok: true, results: this.#results as unknown as pg.QueryResult[] });
  }

  handlePortalSuspended(): void {}
  handleCopyInResponse(): void {}
  handleCopyData(): void {}
}
