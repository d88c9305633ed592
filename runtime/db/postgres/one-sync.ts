// Several extended-protocol statements sent with one Sync: PostgreSQL runs them in one implicit
// transaction that the Sync commits, or that the first error rolls back — the statements after a
// failing one are skipped (https://www.postgresql.org/docs/current/protocol-flow.html#PROTOCOL-FLOW-PIPELINING).
// So a request's settings statement and its one statement need no BEGIN and no COMMIT: two
// statements and one ReadyForQuery instead of four of each. Transaction-local settings
// (set_config(…, true)) last until that Sync.
//
// A named statement whose Parse completed (ParseComplete) is kept by PostgreSQL for the session
// even when its Bind or Execute fails in the same Sync and the transaction rolls back; one whose
// Parse failed or was skipped does not exist. The ParseComplete messages of its turn tell which,
// so a failing statement never leaves a name of unknown state and its client stays in use.
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
  on(event: 'parseComplete', listener: () => void): void;
  removeListener(event: 'parseComplete', listener: () => void): void;
}

/** The pg Client field this file reads: the query whose turn it is (pg's own bookkeeping). */
interface ActiveQuery {
  readonly _activeQuery?: unknown;
}

/** How the statements ended: every result, or the first error and the index of its statement. */
export type OneSyncOutcome =
  | { readonly ok: true; readonly results: readonly pg.QueryResult[] }
  | { readonly ok: false; readonly index: number; readonly error: unknown };

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
  readonly #client: ActiveQuery;
  #connection: Connection | undefined;
  /** The statements this Sync parses, in order ('' for an unnamed one). */
  #parsing: { readonly name: string; readonly text: string }[] = [];
  /** How many of them PostgreSQL has parsed so far (its ParseComplete messages in this turn). */
  #parsed = 0;

  private constructor(
    client: pg.ClientBase,
    statements: readonly pg.QueryConfig[],
    rowless: number,
    types: pg.CustomTypesConfig,
    settle: (outcome: OneSyncOutcome) => void,
    fail: (error: unknown) => void,
  ) {
    // No name: pg's parse bookkeeping (by `activeQuery.name`) leaves these statements alone. A
    // string, not a config object: pg copies an object's property descriptors (about 2 µs).
    super('');
    this.#client = client as unknown as ActiveQuery;
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
      void client.query(new OneSync(client, statements, rowless, types, resolve, reject));
    });
  }

  /** Called by pg with the client's connection when it is this query's turn. */
  override submit = (pgConnection: pg.Connection): void => {
    const connection = pgConnection as unknown as Connection;
    this.#connection = connection;
    connection.on('parseComplete', this.#onParseComplete);
    connection.stream.cork?.();
    try {
      for (const [index, statement] of this.#statements.entries()) {
        const name = this.#nameFor(connection, statement);
        if (name === '' || connection.parsedStatements[name] === undefined) {
          connection.parse({ text: statement.text, name, types: [] });
          this.#parsing.push({ name, text: statement.text });
          if (name !== '') connection.submittedNamedStatements[name] = statement.text;
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
    this.#recordParsed();
    const index = this.#results.length;
    if ((error as { severity?: unknown } | null)?.severity === undefined) this.#fail(error);
    else this.#settle({ ok: false, index, error });
  }

  handleReadyForQuery(): void {
    if (this.#failed) return;
    this.#recordParsed();
    this.#settle({ ok: true, results: this.#results as unknown as pg.QueryResult[] });
  }

  /**
   * A ParseComplete on this query's connection: this query's own while it is the client's active
   * query (in pipeline mode earlier queries' answers arrive after this one was sent).
   */
  #onParseComplete = (): void => {
    if (this.#client._activeQuery === this) this.#parsed += 1;
  };

  /**
   * Enters the names PostgreSQL parsed in this Sync as pg would (it keeps them whatever happened
   * after their Parse); a name whose Parse failed or was skipped is left unparsed, to be parsed
   * again by its next use. Once a server error ended the turn no Parse follows; a failed
   * connection takes its names with it.
   */
  #recordParsed(): void {
    const connection = this.#connection;
    // Names are parsed only once submitted: without a connection there are none.
    if (connection === undefined) return;
    connection.removeListener('parseComplete', this.#onParseComplete);
    for (const [at, { name, text }] of this.#parsing.entries()) {
      if (name === '') continue;
      delete connection.submittedNamedStatements[name];
      if (at < this.#parsed) connection.parsedStatements[name] = text;
    }
    this.#parsing = [];
  }

  handlePortalSuspended(): void {}
  handleCopyInResponse(): void {}
  handleCopyData(): void {}
}
