// Server-side prepared statements for the SQL of requests on PostgreSQL: each statement text gets
// a stable name, so a connection parses and plans it once and later requests only bind and
// execute (https://www.postgresql.org/docs/current/protocol-flow.html#PROTOCOL-FLOW-EXT-QUERY).
// Memory stays bounded: each connection prepares at most `capacity` texts (further ones run
// unnamed), and a schema change retires every connection prepared before it, since PostgreSQL
// refuses a prepared statement whose result columns changed type ("cached plan must not change
// result type", SQLSTATE 0A000).

import { createHash, randomBytes } from 'node:crypto';
import type pg from 'pg';
import type { RenderedSql } from '../../../compiler/sql/fragment.js';
import { RestError } from '../../../errors/rest-error.js';
import { bindParam } from '../db-values.js';

export const DEFAULT_PREPARED_PER_CONNECTION = 256;

const FEATURE_NOT_SUPPORTED = '0A000';

interface ClientState {
  readonly generation: number;
  /**
   * Unique per connection (a random part per adapter, a counter per connection): a backend shared
   * by several connections and processes (PGlite's socket server) never sees one name twice.
   */
  readonly prefix: string;
  readonly names: Set<string>;
}

export interface PreparedStatements {
  /** The query for `sql` on `client`: named while the client has room for one more text. */
  queryFor(client: pg.ClientBase, sql: RenderedSql): pg.QueryConfig;
  /** True for a client prepared before the latest schema change: release it with `true` (destroy). */
  isStale(client: pg.ClientBase): boolean;
  /** The schema changed: clients prepared until now are retired as they are released. */
  invalidate(): void;
  /** A pooler was found in between: every statement goes unnamed from now on. */
  stopNaming(): void;
  /**
   * A named statement refused because its table changed under it (0A000): invalidates and
   * answers 503 `schema_changed`, which the next request does not meet. Other errors: undefined.
   */
  schemaChanged(e: unknown, query: pg.QueryConfig): RestError | undefined;
}

const digestOf = (text: string): string => createHash('sha1').update(text).digest('base64url');

/** Texts whose digest is remembered; past it the memo starts over (texts are few per table). */
const DIGEST_MEMO_SIZE = 4096;

/** `capacity` 0: every statement unnamed (through a transaction pooler, which keeps none). */
export function createPreparedStatements(capacity = DEFAULT_PREPARED_PER_CONNECTION): PreparedStatements {
  const instance = randomBytes(5).toString('hex');
  let generation = 0;
  let connections = 0;
  const clients = new WeakMap<pg.ClientBase, ClientState>();

  const stateOf = (client: pg.ClientBase): ClientState => {
    let state = clients.get(client);
    if (state === undefined) {
      connections += 1;
      state = { generation, prefix: `rest_${instance}_${connections.toString(36)}_`, names: new Set() };
      clients.set(client, state);
    }
    return state;
  };

  // A request's SQL text is built afresh each time; hashing it into a name costs more than
  // finding it in a Map (the same text recurs with every request of its shape).
  const digests = new Map<string, string>();
  const nameOf = (text: string): string => {
    let digest = digests.get(text);
    if (digest === undefined) {
      if (digests.size >= DIGEST_MEMO_SIZE) digests.clear();
      digest = digestOf(text);
      digests.set(text, digest);
    }
    return digest;
  };

  let room = capacity;
  const invalidate = (): void => {
    generation += 1;
  };

  return {
    queryFor(client, sql) {
      const values = sql.values.map(bindParam);
      if (room === 0) return { text: sql.text, values };
      const state = stateOf(client);
      if (state.generation !== generation) return { text: sql.text, values };
      const name = state.prefix + nameOf(sql.text);
      if (!state.names.has(name)) {
        if (state.names.size >= room) return { text: sql.text, values };
        state.names.add(name);
      }
      return { name, text: sql.text, values };
    },
    stopNaming: () => {
      room = 0;
    },
    isStale: (client) => (clients.get(client)?.generation ?? generation) !== generation,
    invalidate,
    schemaChanged(e, query) {
      if (query.name === undefined || (e as { code?: unknown } | null)?.code !== FEATURE_NOT_SUPPORTED) {
        return undefined;
      }
      invalidate();
      return new RestError(
        'schema_changed',
        'The table changed while the request was prepared; send the request again.',
        { cause: e },
      );
    },
  };
}
