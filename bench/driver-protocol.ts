// The messages between the bench orchestrator and its load driver process (IPC over fork).

export interface LoadRequest {
  readonly method: 'GET' | 'POST' | 'PUT' | 'DELETE';
  readonly path: string;
  readonly headers: Readonly<Record<string, string>>;
  readonly body?: string;
}

/** One autocannon run against one server; several in one command run at the same time. */
export interface LoadSpec {
  readonly label: string;
  readonly baseUrl: string;
  readonly connections: number;
  readonly durationSeconds: number;
  /** Sent in turn, one sequence shared by all connections, wrapping around. */
  readonly requests: readonly LoadRequest[];
}

export interface LoadResult {
  readonly label: string;
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
