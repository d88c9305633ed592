// The messages between the bench orchestrator and its load driver process (IPC over fork).

export interface LoadRequest {
  readonly method: 'GET' | 'POST' | 'PUT' | 'DELETE';
  readonly path: string;
  readonly headers: Readonly<Record<string, string>>;
  readonly body?: string;
}

/**
 * How a load window ends: after a time (autocannon's `duration`) or after a number of requests
 * (autocannon's `amount`, spread over the connections; at least one per connection).
 */
export type LoadWindow =
  | { readonly kind: 'seconds'; readonly seconds: number }
  | { readonly kind: 'requests'; readonly requests: number };

/** One autocannon run against one server; several in one command run at the same time. */
export interface LoadSpec {
  readonly label: string;
  readonly baseUrl: string;
  readonly connections: number;
  /** `beside`: runs until every other load of the same command has finished. */
  readonly window: LoadWindow | { readonly kind: 'beside' };
  /** Sent in turn, one sequence shared by all connections, wrapping around. */
  readonly requests: readonly LoadRequest[];
}

export interface LoadResult {
  readonly label: string;
  /**
   * Seconds the window lasted: autocannon's own figure for a timed window; for a window that ends
   * with its requests (or beside others), from the start to the last response, measured here.
   */
  readonly durationSeconds: number;
  /** Completed responses, every status. */
  readonly responses: number;
  readonly rps: number;
  readonly non2xx: number;
  readonly errors: number;
  readonly timeouts: number;
  /** Responses per status code, e.g. { "200": 1000, "401": 3 }. */
  readonly statusCounts: Readonly<Record<string, number>>;
  /** Percentiles of every response's latency, measured in µs resolution by the driver. */
  readonly latencyMs: {
    readonly p50: number;
    readonly p90: number;
    readonly p99: number;
    readonly max: number;
  };
}

export type DriverCommand =
  | { readonly kind: 'run'; readonly runId: number; readonly loads: readonly LoadSpec[] }
  | { readonly kind: 'exit' };

export type DriverReply =
  | { readonly kind: 'ready' }
  | { readonly kind: 'done'; readonly runId: number; readonly results: readonly LoadResult[] }
  | { readonly kind: 'failed'; readonly runId: number; readonly message: string };
