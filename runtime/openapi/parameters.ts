// The query parameters and headers of both dialects (docs/http-api.md: `/<table>` and the
// PostgREST dialect at `/rest/v1/<table>`), as OpenAPI parameter objects: the shared ones under
// components.parameters, the filters one per column.

import type { ColumnInfo } from '../db/adapter.js';
import type { JsonSchema } from './column-schemas.js';

export type Parameter = Readonly<Record<string, unknown>>;

const STRING: JsonSchema = { type: 'string' };

const query = (name: string, description: string, schema: JsonSchema = STRING): Parameter => ({
  name,
  in: 'query',
  description,
  schema,
});

const header = (name: string, description: string, schema: JsonSchema = STRING): Parameter => ({
  name,
  in: 'header',
  description,
  schema,
});

const ORDER =
  'Sort order: `col[.asc|.desc][.nullsfirst|.nullslast]`, comma-separated (default: the primary key, also the tiebreaker).';

/** The seed dialect's reserved parameters (never filter columns) and the other shared ones. */
export const SEED_PARAMETERS: Readonly<Record<string, Parameter>> = {
  'seed.select': query(
    'select',
    'Columns to return, comma-separated: `a,b` (default: every readable column).',
  ),
  'seed.order': query('order', ORDER),
  'seed.page': query('page', 'Page number, from 1.', { type: 'integer', minimum: 1 }),
  'seed.page_size': query('page_size', 'Rows per page (default 100, at most 1000).', {
    type: 'integer',
    minimum: 1,
    maximum: 1000,
  }),
  'seed.count': {
    ...query('count', 'Present (no value): answer `{"count": N}`, the rows after filters and policies.'),
    allowEmptyValue: true,
  },
  'seed.mine': {
    ...query('mine', 'Present (no value): the request is the action `read_mine` (its own policies).'),
    allowEmptyValue: true,
  },
};

const SEED_RESERVED = new Set(['select', 'order', 'page', 'page_size', 'count', 'mine']);

const PREFER_READ =
  '`count=exact` (also `planned`, `estimated`, answered exactly): the total in `Content-Range` after policies; 206 when the answer is partial.';
const PREFER_WRITE = [
  'Comma-separated, in one header or several:',
  '`return=minimal` (default: 201/204 and no body) or `return=representation` (the rows as stored, an array);',
  '`count=exact` (`Content-Range: */<rows affected>`);',
  '`resolution=merge-duplicates|ignore-duplicates` (upsert on `on_conflict`, default the primary key);',
  '`missing=default` (a column listed in `columns` but missing in a row takes its default);',
  '`handling=strict` with `max-affected=<n>` (more rows affected → 400 `PGRST124`, nothing written);',
  '`tx=rollback` (judged, performed and answered, then rolled back).',
].join(' ');
const PROFILE = "The schema: `public` or the database's own default schema; another is 406 `PGRST106`.";

/** The PostgREST dialect's shared parameters and headers. */
export const PGRST_PARAMETERS: Readonly<Record<string, Parameter>> = {
  'pgrst.select': query('select', 'Columns to return: `*` or a comma-separated list.'),
  'pgrst.order': query('order', ORDER),
  'pgrst.limit': query('limit', 'Most rows to return.', { type: 'integer', minimum: 0 }),
  'pgrst.offset': query('offset', 'Rows to skip; past a counted total is 416 `PGRST103`.', {
    type: 'integer',
    minimum: 0,
  }),
  'pgrst.or': query(
    'or',
    'Any of the filters, nested: `(a.eq.1,and(b.gt.2,c.is.null))`; `not.or=(…)` negates.',
  ),
  'pgrst.and': query(
    'and',
    'All of the filters, nested: `(a.gte.1,or(b.is.null,b.lt.5))`; `not.and=(…)` negates.',
  ),
  'pgrst.columns': query(
    'columns',
    'Body keys to take, quoted and comma-separated: `"a","b"`; other keys are ignored, a listed key missing in a row is `NULL` (or its default with `Prefer: missing=default`).',
  ),
  'pgrst.on_conflict': query(
    'on_conflict',
    'The unique columns an upsert matches on (default: the primary key).',
  ),
  'pgrst.prefer_read': header('Prefer', PREFER_READ),
  'pgrst.prefer_write': header('Prefer', PREFER_WRITE),
  'pgrst.range': header(
    'Range',
    'Accepted and ignored: page with `limit` and `offset` (what the clients send).',
  ),
  'pgrst.accept_profile': header('Accept-Profile', PROFILE),
  'pgrst.content_profile': header('Content-Profile', PROFILE),
};

const PGRST_RESERVED = new Set(['select', 'order', 'limit', 'offset', 'or', 'and', 'columns', 'on_conflict']);

export const ref = (name: string): Parameter => ({ $ref: `#/components/parameters/${name}` });

const SEED_FILTER =
  'Filter `<op>.<value>`: `eq neq gt gte lt lte like ilike` (`*` wildcard), `in.(a,b)`, `is.null|true|false`.';
const PGRST_FILTER =
  'Filter `[not.]<op>.<value>`: `eq neq gt gte lt lte like ilike` (`%`, `*` wildcards), `in.(a,"b")`, `is`, `isdistinct`, `like(any|all)`/`ilike(any|all)` with `{a,b}`.';

/** One filter parameter per column the caller may filter on, for the seed dialect (`/<table>`). */
export function seedFilters(columns: readonly ColumnInfo[]): Parameter[] {
  return columns.filter((c) => !SEED_RESERVED.has(c.name)).map((c) => query(c.name, SEED_FILTER));
}

/** One filter parameter per column the caller may filter on, for `/rest/v1/<table>`. */
export function pgrstFilters(columns: readonly ColumnInfo[]): Parameter[] {
  return columns.filter((c) => !PGRST_RESERVED.has(c.name)).map((c) => query(c.name, PGRST_FILTER));
}
