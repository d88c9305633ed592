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
  /** Names whose Parse is on the wire, not yet answered (pg's own bookkeeping in pipeline mode). */
  readonly submittedNamedStatements: Record<string, string | undefined>;
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
  | {
      readonly ok: false;
      readonly index: number;
      readonly error: unknown;
      /**
       * A statement named and parsed in this Sync did not run, so whether PostgreSQL kept it is
       * unknown (its Parse may have failed, or been skipped): pg would parse that name again and
       * fail, so the client must not be reused.
       */
      readonly unsettledNames: boolean;
    };

/** The statements of one Sync as one pg query: settles with their outcome, rejects only when the connection fails. */
export class OneSync extends pg.Query {
  readonly #statements: readonly pg.QueryConfig[];
  /** How many statements, from the first, run for their effect only: no Describe, rows dropped. */
  readonly #rowless: number;
  readonly #types: pg.CustomTypesConfig;
  readonly #settle: (outcome: OneSyncOutcome) => void;
  readonly #fail: (error: unknown) => void;
  readonly #results: Result[] = [];
  #current: Result | undefined;
  #failed = false;
  #connection: Connection | undefined;
  /** The named statements this Sync parses, with their index. */
  #parsing: { readonly name: string; readonly text: string; readonly index: number }[] = [];

  private constructor(
    statements: readonly pg.QueryConfig[],
    rowless: number,
    types: pg.CustomTypesConfig,
    settle: (outcome: OneSyncOutcome) => void,
    fail: (error: unknown) => void,
  ) {
    // No name: pg's parse bookkeeping (by `activeQuery.name`) leaves these statements alone. A
    // string, not a config object: pg copies an object's property descriptors (about 2 µs).
    super('');
    this.#statements = statements;
    this.#rowless = rowless;
    this.#types = types;
    this.#settle = settle;
    this.#fail = fail;
  }

  /**
   * Sends `statements` with one Sync on `client` and settles with how they ended; rejects only when
   * the connection fails. A named statement not yet prepared on the client is parsed on the way and
   * entered in pg's own bookkeeping once it ran, so ordinary queries later bind it too. The first
   * `rowless` statements run for their effect only (e.g. settings): PostgreSQL is not asked to
   * describe their rows and their rows are dropped unread; their results are empty.
   */
  static run(
    client: pg.ClientBase,
    statements: readonly pg.QueryConfig[],
    types: pg.CustomTypesConfig,
    rowless = 0,
  ): Promise<OneSyncOutcome> {
    return new Promise((resolve, reject) => {
      void client.query(new OneSync(statements, rowless, types, resolve, reject));
    });
  }

  /** Called by pg with the client's connection when it is this query's turn. */
  override submit = (pgConnection: pg.Connection): void => {
    const connection = pgConnection as unknown as Connection;
    this.#connection = connection;
    connection.stream.cork?.();
    try {
      for (const [index, statement] of this.#statements.entries()) {
        const name = this.#nameFor(connection, statement);
        if (name === '' || connection.parsedStatements[name] === undefined) {
          connection.parse({ text: statement.text, name, types: [] });
          if (name !== '') {
            connection.submittedNamedStatements[name] = statement.text;
            this.#parsing.push({ name, text: statement.text, index });
          }
        }
        connection.bind({
          portal: '',
          statement: name,
          values: statement.values ?? [],
          binary: false,
          valueMapper: prepareValue,
        });
        if (index >= this.#rowless) connection.describe({ type: 'P', name: '' });
        connection.execute({ portal: '' });
      }
      connection.sync();
    } finally {
      connection.stream.uncork?.();
    }
  };

  /**
   * The name to bind `statement` by: its own, unless another query on this pipelined client parses
   * that name and has not been answered yet. Whether PostgreSQL keeps it depends on how that query
   * ends (a failure before its Parse skips it), so this one parses its text unnamed instead.
   */
  #nameFor(connection: Connection, statement: pg.QueryConfig): string {
    const name = statement.name ?? '';
    if (name === '' || connection.parsedStatements[name] !== undefined) return name;
    return connection.submittedNamedStatements[name] === undefined ? name : '';
  }

  #result(): Result {
    this.#current ??= new Result(undefined, this.#types);
    return this.#current;
  }

  handleRowDescription(message: { fields: unknown[] }): void {
    this.#result().addFields(message.fields);
  }

  handleDataRow(message: { fields: unknown[] }): void {
    // The results so far are the statements that completed: this row is the next one's.
    if (this.#results.length < this.#rowless) return;
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
    const index = this.#results.length;
    const unsettledNames = this.#recordParsed(index);
    if ((error as { severity?: unknown } | null)?.severity === undefined) this.#fail(error);
    else this.#settle({ ok: false, index, error, unsettledNames });
  }

  handleReadyForQuery(): void {
    if (this.#failed) return;
    this.#recordParsed(this.#statements.length);
    this.#settle({ ok: true, results: this.#results as unknown as pg.QueryResult[] });
  }

  /** Enters the names parsed by statements before `ran` as pg would; true if any later one was parsed. */
  #recordParsed(ran: number): boolean {
    const connection = this.#connection;
    // Names are parsed only once submitted: without a connection there are none.
    if (connection === undefined) return false;
    let unsettled = false;
    for (const { name, text, index } of this.#parsing) {
      delete connection.submittedNamedStatements[name];
      if (index < ran) connection.parsedStatements[name] = text;
      else unsettled = true;
    }
    this.#parsing = [];
    return unsettled;
  }

  handlePortalSuspended(): void {}
  handleCopyInResponse(): void {}
  handleCopyData(): void {}
}
