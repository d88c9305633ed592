// A `/rest/v1/<table>` request → the same ParsedRequest the seed dialect gives, plus how PostgREST's
// clients want the answer (docs/postgrest.md). Query parameters, `Prefer`, `Accept` and the profile
// headers are read here; names are checked against the schema in plan/.

import { RestError } from '../../errors/rest-error.js';
import { parseOrder } from './parse-order.js';
import { checkColumnName, parseCondition, parseLogic, unsupportedFeature } from './parse-pgrst-filter.js';
import type { Operation } from './parse-route.js';
import type { Filter, JsonObject, JsonValue, ParsedRequest, Select } from './types.js';

export interface PgrstHeaders {
  /** Every `Prefer` header, in order. */
  readonly prefer: readonly string[];
  readonly accept: string | undefined;
}

export interface PgrstRequestInput {
  readonly table: string;
  readonly operation: Operation;
  readonly method: string;
  readonly query: URLSearchParams;
  readonly headers: PgrstHeaders;
  readonly body: JsonValue | undefined;
  readonly maxRows: number;
}

/** How the answer is shaped; what the request does is in `request`. */
export interface PgrstAnswer {
  /** `Prefer: return=representation`: the written rows come back. */
  readonly representation: boolean;
  /** `Prefer: count=…`: `Content-Range` carries the total. */
  readonly count: boolean;
  /** `Accept: application/vnd.pgrst.object+json`: one row as an object, else 406. */
  readonly singular: boolean;
  /** `nulls=stripped`: keys whose value is null are left out of each row. */
  readonly stripNulls: boolean;
  /** `HEAD`: headers only. */
  readonly headOnly: boolean;
}

export interface PgrstRequest {
  readonly request: ParsedRequest;
  readonly answer: PgrstAnswer;
}

// ---------------------------------------------------------------------------------------------
// Prefer (RFC 7240): several values in one header or several headers.

interface Preferences {
  readonly return: 'minimal' | 'representation' | 'headers-only' | undefined;
  readonly count: boolean;
  readonly resolution: 'merge' | 'ignore' | undefined;
  readonly missingDefault: boolean;
  readonly maxAffected: number | undefined;
  readonly rollback: boolean;
}

const PREFERENCE_VALUES: Readonly<Record<string, readonly string[] | 'integer' | 'any'>> = {
  return: ['minimal', 'representation', 'headers-only'],
  count: ['exact', 'planned', 'estimated'],
  resolution: ['merge-duplicates', 'ignore-duplicates'],
  missing: ['default', 'null'],
  handling: ['strict', 'lenient'],
  'max-affected': 'integer',
  tx: ['commit', 'rollback'],
  timezone: 'any',
};

function invalidPreference(message: string): RestError {
  return new RestError('invalid_preference', message);
}

// Clients send the same few `Prefer` and `Accept` values with every request: each text is parsed
// once and its (frozen) result reused; a text that is refused is parsed, and refused, every time.
// At most MEMO_SIZE texts of at most MEMO_TEXT characters are kept.
const MEMO_SIZE = 64;
const MEMO_TEXT = 256;

function memoized<T>(parse: (text: string) => T): (text: string) => T {
  const memo = new Map<string, T>();
  return (text) => {
    let parsed = memo.get(text);
    if (parsed === undefined) {
      parsed = parse(text);
      if (text.length > MEMO_TEXT) return parsed;
      if (memo.size >= MEMO_SIZE) memo.clear();
      memo.set(text, parsed);
    }
    return parsed;
  };
}

const parsePreferText = memoized((header: string): Preferences => {
  const seen = new Map<string, string>();
  const unknown: string[] = [];
  for (const item of header.split(',')) {
    const text = item.trim();
    if (text === '') continue;
    const eq = text.indexOf('=');
    const name = (eq === -1 ? text : text.slice(0, eq)).trim().toLowerCase();
    const value = eq === -1 ? '' : text.slice(eq + 1).trim();
    const allowed = PREFERENCE_VALUES[name];
    if (allowed === undefined) {
      unknown.push(name);
      continue;
    }
    const valid =
      allowed === 'any' || (allowed === 'integer' ? /^[0-9]{1,9}$/.test(value) : allowed.includes(value));
    if (!valid) throw invalidPreference(`Prefer: ${name}=${value.slice(0, 32)} is not a value rest knows`);
    seen.set(name, value);
  }
  const strict = seen.get('handling') === 'strict';
  if (strict && unknown.length > 0) {
    throw invalidPreference(`Prefer: ${unknown[0] ?? ''} is not a preference rest knows (handling=strict)`);
  }
  const resolution = seen.get('resolution');
  const maxAffected = seen.get('max-affected');
  return Object.freeze({
    return: seen.get('return') as Preferences['return'],
    count: seen.has('count'),
    resolution: resolution === undefined ? undefined : resolution === 'merge-duplicates' ? 'merge' : 'ignore',
    missingDefault: seen.get('missing') === 'default',
    // max-affected counts only with handling=strict, as in PostgREST.
    maxAffected: strict && maxAffected !== undefined ? Number(maxAffected) : undefined,
    rollback: seen.get('tx') === 'rollback',
  });
});

/** Every `Prefer` header in order: several headers read as one list, as RFC 7240 has it. */
export const parsePrefer = (headers: readonly string[]): Preferences =>
  parsePreferText(headers.length === 1 ? (headers[0] ?? '') : headers.join(','));

// ---------------------------------------------------------------------------------------------
// Accept

const SINGULAR = 'application/vnd.pgrst.object+json';
const PLURAL = ['application/json', 'application/vnd.pgrst.array+json', '*/*', 'application/*'];

interface Accepted {
  readonly singular: boolean;
  readonly stripNulls: boolean;
}

const ANY_JSON: Accepted = Object.freeze({ singular: false, stripNulls: false });

const parseAcceptText = memoized((accept: string): Accepted => {
  if (accept.trim() === '') return ANY_JSON;
  for (const range of accept.split(',')) {
    const [type = '', ...params] = range.split(';').map((p) => p.trim().toLowerCase());
    const stripNulls = params.includes('nulls=stripped');
    if (type === SINGULAR) return Object.freeze({ singular: true, stripNulls });
    if (PLURAL.includes(type)) return Object.freeze({ singular: false, stripNulls });
  }
  throw new RestError(
    'not_acceptable',
    `none of the media types in Accept can be answered: ${accept.slice(0, 80)}`,
    {
      details: { available: ['application/json', SINGULAR] },
    },
  );
});

export const parseAccept = (accept: string | undefined): Accepted =>
  accept === undefined ? ANY_JSON : parseAcceptText(accept);

// ---------------------------------------------------------------------------------------------
// Query parameters

const RESERVED = ['select', 'order', 'limit', 'offset', 'columns', 'on_conflict'] as const;
type Reserved = (typeof RESERVED)[number];
const isReserved = (name: string): name is Reserved => (RESERVED as readonly string[]).includes(name);
const LOGIC = /^(not\.)?(and|or)$/;

interface SplitQuery {
  readonly reserved: ReadonlyMap<Reserved, string>;
  readonly filters: readonly Filter[];
}

function splitQuery(query: URLSearchParams): SplitQuery {
  const reserved = new Map<Reserved, string>();
  const filters: Filter[] = [];
  for (const [name, value] of query) {
    if (isReserved(name)) {
      if (reserved.has(name)) {
        throw new RestError('invalid_parameter', `${name} may be given only once`, {
          details: { parameter: name },
        });
      }
      reserved.set(name, value);
      continue;
    }
    const logic = LOGIC.exec(name);
    if (logic !== null) {
      const tree = parseLogic(logic[2] === 'and' ? 'and' : 'or', value, name);
      filters.push(logic[1] === undefined ? tree : { kind: 'not', filter: tree });
      continue;
    }
    // `author.limit`, `author.order`: modifiers of an embedded resource.
    filters.push(parseCondition(checkColumnName(name, name), value));
  }
  return { reserved, filters };
}

/** `select=a,b` / `*`: embedding, renaming, casts and JSON paths are refused by name. */
export function parsePgrstSelect(raw: string | undefined): Select {
  if (raw === undefined) return undefined;
  const items = raw.split(',').map((s) => s.trim());
  if (raw.includes('(')) throw unsupportedFeature('embedding related tables in select', 'select');
  for (const item of items) {
    if (item.includes('->')) throw unsupportedFeature('selecting a JSON path', 'select');
    if (item.includes('::')) throw unsupportedFeature('casting a column', 'select');
    if (item.includes(':')) throw unsupportedFeature('renaming a column', 'select');
    if (item.startsWith('...')) throw unsupportedFeature('spreading an embedded resource', 'select');
  }
  if (items.length === 1 && items[0] === '*') return undefined;
  if (items.some((n) => n === '' || n === '*')) {
    throw new RestError('invalid_select', 'select must be * or a comma-separated list of column names');
  }
  return [...new Set(items.map((n) => (n.startsWith('"') && n.endsWith('"') ? n.slice(1, -1) : n)))];
}

const MAX_OFFSET = 2_147_483_647;

function nonNegative(name: string, raw: string | undefined): number | undefined {
  if (raw === undefined) return undefined;
  const n = /^[0-9]{1,10}$/.test(raw) ? Number(raw) : Number.NaN;
  if (!(n >= 0 && n <= MAX_OFFSET)) {
    throw new RestError('invalid_page', `${name} must be an integer from 0 to ${MAX_OFFSET}`, {
      details: { parameter: name },
    });
  }
  return n;
}

/** `"a","b"` or `a,b` → the names. */
function parseNameList(raw: string, parameter: string): readonly string[] {
  const names = raw.split(',').map((s) => {
    const t = s.trim();
    return t.startsWith('"') && t.endsWith('"') && t.length >= 2 ? t.slice(1, -1) : t;
  });
  if (names.some((n) => n === '')) {
    throw new RestError('invalid_parameter', `${parameter} must be a comma-separated list of column names`, {
      details: { parameter },
    });
  }
  return [...new Set(names)];
}

function notAccepted(name: string, what: string): RestError {
  return new RestError('invalid_parameter', `${name} is not accepted by ${what}`, {
    details: { parameter: name },
  });
}

function onlyAllowed(
  reserved: ReadonlyMap<Reserved, string>,
  allowed: readonly Reserved[],
  what: string,
): void {
  for (const name of reserved.keys()) if (!allowed.includes(name)) throw notAccepted(name, what);
}

const isObject = (v: JsonValue | undefined): v is JsonObject =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * `columns=` keeps only the listed keys of each row; a listed key a row lacks is NULL, or left to
 * its column's default with `Prefer: missing=default`.
 */
function restrictColumns(
  rows: readonly JsonObject[],
  columns: readonly string[] | undefined,
  missingDefault: boolean,
): readonly JsonObject[] {
  if (columns === undefined) return rows;
  return rows.map((row) => {
    const out: Record<string, JsonValue> = {};
    for (const name of columns) {
      if (Object.hasOwn(row, name)) out[name] = row[name] ?? null;
      else if (!missingDefault) out[name] = null;
    }
    return out;
  });
}

function bodyRows(
  body: JsonValue | undefined,
  maxRows: number,
): { rows: readonly JsonObject[]; many: boolean } {
  if (isObject(body)) return { rows: [body], many: false };
  if (Array.isArray(body)) {
    const rows = body as readonly JsonValue[];
    if (rows.length > maxRows) {
      throw new RestError(
        'too_many_rows',
        `a POST may create at most ${maxRows} rows at once; this one has ${rows.length} (-http.max_rows)`,
        { details: { rows: rows.length, max_rows: maxRows } },
      );
    }
    if (!rows.every(isObject))
      throw new RestError('invalid_body', 'every element of the array must be a JSON object (one row)');
    return { rows, many: true };
  }
  throw new RestError('invalid_body', 'the body must be a JSON object (one row) or an array of objects');
}

function requireFilter(filters: readonly Filter[], what: 'update' | 'delete'): void {
  if (filters.length === 0) {
    throw new RestError(
      'missing_filter',
      `an ${what} needs at least one filter; refusing to ${what} every row`,
    );
  }
}

export function parsePgrstRequest(input: PgrstRequestInput): PgrstRequest {
  const { table, operation, body } = input;
  const prefer = parsePrefer(input.headers.prefer);
  const accepted = parseAccept(input.headers.accept);
  const { reserved, filters } = splitQuery(input.query);
  const select = parsePgrstSelect(reserved.get('select'));
  const headOnly = input.method === 'HEAD';
  const answerOf = (representation: boolean): PgrstAnswer => ({
    representation,
    count: prefer.count,
    singular: accepted.singular,
    stripNulls: accepted.stripNulls,
    headOnly,
  });
  const rollback = prefer.rollback;
  const representation = prefer.return === 'representation';
  switch (operation) {
    case 'read': {
      onlyAllowed(reserved, ['select', 'order', 'limit', 'offset'], 'a read');
      const limit = nonNegative('limit', reserved.get('limit'));
      const offset = nonNegative('offset', reserved.get('offset')) ?? 0;
      return {
        request: {
          kind: 'list',
          table,
          select,
          filters,
          order: parseOrder(reserved.get('order')),
          // A singular read needs to know only whether there is more than one row.
          window: { limit: accepted.singular ? Math.min(limit ?? 2, 2) : limit, offset },
          mine: false,
          countAll: prefer.count,
        },
        answer: answerOf(true),
      };
    }
    case 'create': {
      onlyAllowed(reserved, ['select', 'columns', 'on_conflict'], 'a create');
      if (filters.length > 0) throw notAccepted(input.query.keys().next().value ?? 'filter', 'a create');
      const { rows, many } = bodyRows(body, input.maxRows);
      const columnsRaw = reserved.get('columns');
      const columns = columnsRaw === undefined ? undefined : parseNameList(columnsRaw, 'columns');
      const onConflictRaw = reserved.get('on_conflict');
      if (onConflictRaw !== undefined && prefer.resolution === undefined) {
        throw invalidPreference(
          'on_conflict needs Prefer: resolution=merge-duplicates or resolution=ignore-duplicates',
        );
      }
      const onConflict =
        onConflictRaw === undefined ? undefined : parseNameList(onConflictRaw, 'on_conflict');
      if (accepted.singular && rows.length !== 1) throw singularMismatch(rows.length);
      return {
        request: {
          kind: 'create',
          table,
          rows: restrictColumns(rows, columns, prefer.missingDefault),
          many,
          select,
          ...(prefer.resolution === undefined
            ? {}
            : { upsert: { resolution: prefer.resolution, onConflict } }),
          rollback,
        },
        answer: answerOf(representation),
      };
    }
    case 'update': {
      if (input.method === 'PUT') {
        throw new RestError(
          'method_not_allowed',
          'PUT is not part of the PostgREST dialect here; use PATCH',
          {
            headers: { Allow: 'GET, HEAD, POST, PATCH, DELETE' },
          },
        );
      }
      onlyAllowed(reserved, ['select', 'columns'], 'an update');
      requireFilter(filters, 'update');
      if (!isObject(body))
        throw new RestError(
          'invalid_body',
          'the body of an update must be a JSON object of the columns to change',
        );
      const columnsRaw = reserved.get('columns');
      const [patch = {}] =
        columnsRaw === undefined
          ? [body]
          : restrictColumns([body], parseNameList(columnsRaw, 'columns'), true);
      if (Object.keys(patch).length === 0)
        throw new RestError('invalid_body', 'the body of an update names no column to change');
      return {
        request: {
          kind: 'update',
          table,
          key: undefined,
          filters,
          patch,
          options: {
            select,
            returnRows: representation,
            singular: accepted.singular,
            maxAffected: prefer.maxAffected,
            rollback,
          },
        },
        answer: answerOf(representation),
      };
    }
    case 'delete':
      onlyAllowed(reserved, ['select'], 'a delete');
      requireFilter(filters, 'delete');
      return {
        request: {
          kind: 'delete',
          table,
          key: undefined,
          filters,
          options: {
            select,
            returnRows: representation,
            singular: accepted.singular,
            maxAffected: prefer.maxAffected,
            rollback,
          },
        },
        answer: answerOf(representation),
      };
  }
}

export function singularMismatch(rows: number): RestError {
  return new RestError('singular_mismatch', 'JSON object requested, multiple (or no) rows returned', {
    details: { rows },
  });
}
