// What a case's answer showed (status, error code, primary keys, keys of each row, count), how it
// is checked against the case's `expect`, and whether two paths saw the same thing.

import type { TableInfo } from '../db/adapter.js';
import type { Expectation } from './test-file.js';

export interface Observed {
  readonly status?: number;
  readonly code?: string;
  /** The primary keys of the returned rows, in the order returned (a key of several columns: a list). */
  readonly rows?: readonly unknown[];
  /** The keys of each returned row, sorted. */
  readonly columns?: readonly (readonly string[])[];
  readonly count?: number;
  /** A matrix cell: allow, deny or filter. */
  readonly decision?: string;
}

const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

/** The error code of either dialect's error body. */
function codeOf(body: unknown): string | undefined {
  if (!isObject(body)) return undefined;
  const error = body['error'];
  if (isObject(error) && typeof error['code'] === 'string') return error['code'];
  return typeof body['code'] === 'string' && typeof body['message'] === 'string' ? body['code'] : undefined;
}

const keyOf = (row: Record<string, unknown>, table: TableInfo | undefined): unknown => {
  const pk = table?.primaryKey ?? [];
  if (pk.length === 1) return row[pk[0] ?? ''];
  return pk.map((c) => row[c]);
};

/** What an answer shows, read with the addressed table's primary key. */
export function observe(status: number, body: unknown, table: TableInfo | undefined): Observed {
  const code = status >= 400 ? codeOf(body) : undefined;
  let rows: Record<string, unknown>[] | undefined;
  if (status < 400 && Array.isArray(body) && body.every(isObject)) rows = body;
  else if (status < 400 && isObject(body) && table !== undefined && table.primaryKey.every((c) => c in body))
    rows = [body];
  const counted = isObject(body) ? (body['count'] ?? body['updated'] ?? body['deleted']) : undefined;
  return {
    status,
    ...(code === undefined ? {} : { code }),
    ...(rows === undefined
      ? {}
      : { rows: rows.map((r) => keyOf(r, table)), columns: rows.map((r) => Object.keys(r).sort()) }),
    ...(rows !== undefined
      ? { count: rows.length }
      : typeof counted === 'number' && status < 400
        ? { count: counted }
        : {}),
  };
}

/** Keys compared as text: `1` in the file matches `1` or `"1"` in the answer (bigint columns). */
const canonical = (key: unknown): string =>
  JSON.stringify(Array.isArray(key) ? key.map(String) : String(key));
const sortedKeys = (keys: readonly unknown[]): string[] => keys.map(canonical).sort();
const show = (keys: readonly unknown[]): string => `[${keys.map((k) => JSON.stringify(k)).join(', ')}]`;

/** Each way `observed` differs from `expect`, as one sentence; empty when it passes. */
export function checkExpectation(expect: Expectation, observed: Observed): string[] {
  const problems: string[] = [];
  const got = `got ${observed.status ?? '?'}${observed.code === undefined ? '' : ` ${observed.code}`}`;
  if (expect.status !== undefined && expect.status !== observed.status)
    problems.push(`expected status ${expect.status}, ${got}`);
  if (expect.code !== undefined && expect.code !== observed.code)
    problems.push(`expected code ${expect.code}, ${got}`);
  if (expect.rows !== undefined) {
    if (observed.rows === undefined) problems.push(`expected rows ${show(expect.rows)}, ${got} without rows`);
    else if (JSON.stringify(sortedKeys(expect.rows)) !== JSON.stringify(sortedKeys(observed.rows)))
      problems.push(`expected rows ${show(expect.rows)}, got rows ${show(observed.rows)}`);
  }
  if (expect.columns !== undefined) {
    const want = [...expect.columns].sort();
    const wrong = (observed.columns ?? []).find((c) => JSON.stringify(c) !== JSON.stringify(want));
    if (observed.columns === undefined)
      problems.push(`expected columns [${want.join(', ')}], ${got} without rows`);
    else if (wrong !== undefined)
      problems.push(
        `expected columns [${want.join(', ')}] in each row, got a row with [${wrong.join(', ')}]`,
      );
  }
  if (expect.count !== undefined && expect.count !== observed.count)
    problems.push(`expected count ${expect.count}, got ${observed.count ?? 'no count'}`);
  return problems;
}

/** What two paths must agree on: status, code, the set of keys, the keys of rows, count, decision. */
const agreement = (o: Observed): string =>
  JSON.stringify([
    o.status,
    o.code,
    o.rows === undefined ? undefined : sortedKeys(o.rows),
    o.columns === undefined ? undefined : [...new Set(o.columns.map((c) => c.join(',')))].sort(),
    o.count,
    o.decision === 'deny' ? 'deny' : o.decision === undefined ? undefined : 'allowed',
  ]);

/** A sentence saying how the paths' observations differ, or undefined when they agree. */
export function disagreement(observed: ReadonlyMap<string, Observed>): string | undefined {
  const seen = [...observed.entries()];
  const first = seen[0];
  if (first === undefined) return undefined;
  const differs = seen.some(([, o]) => agreement(o) !== agreement(first[1]));
  if (!differs) return undefined;
  return `the paths disagree: ${seen.map(([path, o]) => `${path} ${describeObserved(o)}`).join('; ')}`;
}

/** One observation in a few words: `200 rows [1, 2]`, `403 policy_denied`, `filter`. */
export function describeObserved(o: Observed): string {
  if (o.decision !== undefined) return o.decision;
  const parts = [String(o.status ?? '?')];
  if (o.code !== undefined) parts.push(o.code);
  if (o.rows !== undefined) parts.push(`rows ${show(o.rows)}`);
  else if (o.count !== undefined) parts.push(`count ${o.count}`);
  return parts.join(' ');
}
