// A table route + query string + body → ParsedRequest: which parameters each request accepts,
// flags, and the shape of the body. Pure; names are checked against the schema in plan/.

import { RestError } from '../../errors/rest-error.js';
import { parseFilter } from './parse-filter.js';
import { parseOrder } from './parse-order.js';
import { parsePage } from './parse-page.js';
import type { Operation } from './parse-route.js';
import { parseSelect } from './parse-select.js';
import type { ColumnFilter, JsonObject, JsonValue, ParsedRequest } from './types.js';

export interface TableRequestInput {
  readonly table: string;
  readonly key: string | undefined;
  readonly operation: Operation;
  readonly query: URLSearchParams;
  /** The parsed JSON body of a write; undefined for reads and deletes. */
  readonly body: JsonValue | undefined;
  /** Most rows one `POST` array may hold (`-http.max_rows`). */
  readonly maxRows: number;
}

const RESERVED = ['select', 'order', 'page', 'page_size', 'count', 'mine'] as const;
type Reserved = (typeof RESERVED)[number];
const isReserved = (name: string): name is Reserved => (RESERVED as readonly string[]).includes(name);

interface SplitQuery {
  readonly reserved: ReadonlyMap<Reserved, string>;
  readonly filters: readonly ColumnFilter[];
}

function splitQuery(query: URLSearchParams): SplitQuery {
  const reserved = new Map<Reserved, string>();
  const filters: ColumnFilter[] = [];
  for (const [name, value] of query) {
    if (isReserved(name)) {
      if (reserved.has(name)) {
        throw new RestError('invalid_parameter', `${name} may be given only once`, {
          details: { parameter: name },
        });
      }
      reserved.set(name, value);
    } else {
      filters.push(parseFilter(name, value));
    }
  }
  return { reserved, filters };
}

function flag(reserved: ReadonlyMap<Reserved, string>, name: 'count' | 'mine'): boolean {
  const value = reserved.get(name);
  if (value === undefined) return false;
  if (value === '' || value === 'true') return true;
  throw new RestError('invalid_parameter', `${name} takes no value (write ?${name})`, {
    details: { parameter: name },
  });
}

function onlyAllowed(
  reserved: ReadonlyMap<Reserved, string>,
  filters: readonly ColumnFilter[],
  allowed: readonly Reserved[],
  filtersAllowed: boolean,
  what: string,
): void {
  for (const name of reserved.keys()) {
    if (!allowed.includes(name)) {
      throw new RestError('invalid_parameter', `${name} is not accepted by ${what}`, {
        details: { parameter: name },
      });
    }
  }
  const first = filters[0];
  if (!filtersAllowed && first !== undefined) {
    throw new RestError('invalid_parameter', `filters are not accepted by ${what}`, {
      details: { parameter: first.column },
    });
  }
}

const isObject = (v: JsonValue | undefined): v is JsonObject =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

function invalidBody(message: string): RestError {
  return new RestError('invalid_body', message);
}

function tooManyRows(rows: number, maxRows: number): RestError {
  return new RestError(
    'too_many_rows',
    `a POST may create at most ${maxRows} rows at once; this one has ${rows} (-http.max_rows)`,
    { details: { rows, max_rows: maxRows } },
  );
}

export function parseTableRequest(input: TableRequestInput): ParsedRequest {
  const { table, key, operation, body } = input;
  const { reserved, filters } = splitQuery(input.query);
  switch (operation) {
    case 'read': {
      const mine = flag(reserved, 'mine');
      if (key !== undefined) {
        onlyAllowed(reserved, filters, ['select', 'mine'], true, 'a request for one row');
        return { kind: 'get', table, key, select: parseSelect(reserved.get('select')), filters, mine };
      }
      if (flag(reserved, 'count')) {
        onlyAllowed(reserved, filters, ['count', 'mine'], true, 'a count');
        return { kind: 'count', table, filters, mine };
      }
      return {
        kind: 'list',
        table,
        select: parseSelect(reserved.get('select')),
        filters,
        order: parseOrder(reserved.get('order')),
        window: parsePage(reserved.get('page'), reserved.get('page_size')),
        mine,
      };
    }
    case 'create': {
      onlyAllowed(reserved, filters, ['select'], false, 'a create');
      const select = parseSelect(reserved.get('select'));
      if (isObject(body)) return { kind: 'create', table, rows: [body], many: false, select };
      if (Array.isArray(body)) {
        const rows = body as readonly JsonValue[];
        if (rows.length > input.maxRows) throw tooManyRows(rows.length, input.maxRows);
        if (!rows.every(isObject))
          throw invalidBody('every element of the array must be a JSON object (one row)');
        return { kind: 'create', table, rows, many: true, select };
      }
      throw invalidBody('the body must be a JSON object (one row) or an array of objects');
    }
    case 'update': {
      onlyAllowed(reserved, filters, [], true, 'an update');
      requireTarget(key, filters, 'update');
      if (!isObject(body))
        throw invalidBody('the body of an update must be a JSON object of the columns to change');
      if (Object.keys(body).length === 0)
        throw invalidBody('the body of an update names no column to change');
      return { kind: 'update', table, key, filters, patch: body };
    }
    case 'delete':
      onlyAllowed(reserved, filters, [], true, 'a delete');
      requireTarget(key, filters, 'delete');
      return { kind: 'delete', table, key, filters };
  }
}

function requireTarget(key: string | undefined, filters: readonly ColumnFilter[], what: string): void {
  if (key === undefined && filters.length === 0) {
    throw new RestError(
      'missing_filter',
      `an ${what} needs a primary key (/<table>/<key>) or at least one filter; refusing to ${what} every row`,
    );
  }
}
