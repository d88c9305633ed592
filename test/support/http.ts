// Real HTTP calls for the e2e tests: fetch with JSON in and out, the raw text kept.

export interface Reply {
  readonly status: number;
  readonly headers: Headers;
  readonly text: string;
  /** The parsed body; undefined when the body is empty or not JSON. */
  readonly json: unknown;
}

export interface CallOptions {
  /** Sent as JSON with `Content-Type: application/json`. */
  readonly json?: unknown;
  /** Sent as is (no Content-Type unless given in headers). */
  readonly body?: string | Uint8Array;
  readonly headers?: Readonly<Record<string, string>>;
}

export async function call(
  baseUrl: string,
  method: string,
  path: string,
  options: CallOptions = {},
): Promise<Reply> {
  const headers: Record<string, string> = { ...options.headers };
  let body: string | Uint8Array | undefined = options.body;
  if (options.json !== undefined) {
    body = JSON.stringify(options.json);
    headers['content-type'] ??= 'application/json';
  }
  const response = await fetch(baseUrl + path, { method, headers, ...(body === undefined ? {} : { body }) });
  const text = await response.text();
  let json: unknown;
  try {
    json = text === '' ? undefined : JSON.parse(text);
  } catch {
    json = undefined;
  }
  return { status: response.status, headers: response.headers, text, json };
}

/** A client bound to one server. */
export function client(baseUrl: string) {
  return {
    get: (path: string, options?: CallOptions) => call(baseUrl, 'GET', path, options),
    post: (path: string, json: unknown, options?: CallOptions) =>
      call(baseUrl, 'POST', path, { ...options, json }),
    patch: (path: string, json: unknown, options?: CallOptions) =>
      call(baseUrl, 'PATCH', path, { ...options, json }),
    put: (path: string, json: unknown, options?: CallOptions) =>
      call(baseUrl, 'PUT', path, { ...options, json }),
    delete: (path: string, options?: CallOptions) => call(baseUrl, 'DELETE', path, options),
    call: (method: string, path: string, options?: CallOptions) => call(baseUrl, method, path, options),
  };
}

export type Client = ReturnType<typeof client>;
