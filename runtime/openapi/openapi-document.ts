// The OpenAPI 3.1 document of a caller's view (caller-view.ts): for each table the caller may use,
// its row, insert and update schemas and the operations of both dialects its actions allow —
// `/<table>` (and `/<table>/{key}`) and `/rest/v1/<table>` — plus the fixed paths. Pure.

import type { Action } from '../../compiler/types.js';
import type { ColumnInfo } from '../db/adapter.js';
import type { CallerView, TableView } from './caller-view.js';
import { columnSchema, type JsonSchema } from './column-schemas.js';
import { AUTH_PATHS, META_PATHS, type PathItem } from './fixed-paths.js';
import {
  PGRST_PARAMETERS,
  SEED_PARAMETERS,
  pgrstFilters,
  ref,
  seedFilters,
  type Parameter,
} from './parameters.js';

export interface OpenApiDocument {
  readonly openapi: '3.1.0';
  readonly info: Readonly<Record<string, unknown>>;
  readonly paths: Readonly<Record<string, PathItem>>;
  readonly components: Readonly<Record<string, unknown>>;
  readonly [key: string]: unknown;
}

/** Component names allow `[A-Za-z0-9._-]` only: other characters become `_`, clashes get `_2`, `_3`… */
const COMPONENT_UNSAFE = /[^A-Za-z0-9_-]/g;

/** A component-safe name for each of `names` (table or column names), distinct, in the same order. */
function componentNames(names: readonly string[]): string[] {
  const used = new Set<string>();
  return names.map((original) => {
    const base = original.replace(COMPONENT_UNSAFE, '_');
    let name = base;
    for (let n = 2; used.has(name); n += 1) name = `${base}_${n}`;
    used.add(name);
    return name;
  });
}

/**
 * The filter parameters of one table in one dialect, put once under components.parameters as
 * `<prefix>.<column>`; each operation refers to them, so a table's filters are written once.
 */
function filterRefs(
  filters: readonly Parameter[],
  prefix: string,
  registry: Record<string, Parameter>,
): Parameter[] {
  const names = componentNames(filters.map((f) => String(f['name'])));
  return filters.map((filter, i) => {
    const key = `${prefix}.${names[i] ?? ''}`;
    registry[key] = filter;
    return ref(key);
  });
}

const schemaRef = (name: string): JsonSchema => ({ $ref: `#/components/schemas/${name}` });
const jsonContent = (schema: JsonSchema): JsonSchema => ({ 'application/json': { schema } });
const arrayOf = (items: JsonSchema): JsonSchema => ({ type: 'array', items });
const SEED_ERROR = { default: { $ref: '#/components/responses/Error' } };
const PGRST_ERROR = { default: { $ref: '#/components/responses/PgrstError' } };

function objectSchema(
  title: string,
  columns: readonly ColumnInfo[],
  required: readonly string[],
): JsonSchema {
  return {
    type: 'object',
    title,
    properties: Object.fromEntries(columns.map((c) => [c.name, columnSchema(c)])),
    ...(required.length === 0 ? {} : { required }),
  };
}

/** A body column a create must give: not null, no default, not generated. */
const mustGive = (c: ColumnInfo): boolean => !c.nullable && !c.hasDefault && !c.autoIncrement;

interface Names {
  readonly row: string;
  readonly insert: string;
  readonly update: string;
}

function tableSchemas(view: TableView, base: string): Record<string, JsonSchema> {
  const { table, readable, writable } = view;
  return {
    [base]: objectSchema(
      `a row of ${table.name}`,
      readable,
      readable.map((c) => c.name),
    ),
    [`${base}.insert`]: objectSchema(
      `a new row of ${table.name}`,
      writable,
      writable.filter(mustGive).map((c) => c.name),
    ),
    [`${base}.update`]: objectSchema(`a change to rows of ${table.name}`, writable, []),
  };
}

const has = (view: TableView, ...actions: Action[]): boolean => actions.some((a) => view.actions.has(a));

const operation = (
  view: TableView,
  id: string,
  summary: string,
  tags: readonly string[],
  fields: Record<string, unknown>,
): Readonly<Record<string, unknown>> => ({
  operationId: `${id}:${view.table.name}`,
  summary: `${summary} ${view.table.name}`,
  tags,
  ...fields,
});

const COUNT = { type: 'object', properties: { count: { type: 'integer' } }, required: ['count'] };
const AFFECTED = (key: 'updated' | 'deleted'): JsonSchema => ({
  type: 'object',
  properties: { [key]: { type: 'integer' } },
  required: [key],
});

/** `/<table>`: the seed dialect of docs/http-api.md. */
function seedCollection(view: TableView, names: Names, filters: readonly Parameter[]): PathItem {
  const tags = [view.table.name];
  const item: Record<string, unknown> = {};
  if (has(view, 'read', 'read_mine')) {
    item['get'] = operation(view, 'list', 'Read rows of', tags, {
      ...(view.actions.has('read')
        ? {}
        : { description: 'Only with `mine`: the caller may use `read_mine`.' }),
      parameters: [
        ...['select', 'order', 'page', 'page_size', 'count', 'mine'].map((p) => ref(`seed.${p}`)),
        ...filters,
      ],
      responses: {
        '200': {
          description: 'The rows (or `{"count": N}` with `count`)',
          content: jsonContent({ oneOf: [arrayOf(schemaRef(names.row)), COUNT] }),
        },
        ...SEED_ERROR,
      },
    });
  }
  if (has(view, 'create')) {
    item['post'] = operation(view, 'create', 'Create rows in', tags, {
      requestBody: {
        required: true,
        content: jsonContent({ oneOf: [schemaRef(names.insert), arrayOf(schemaRef(names.insert))] }),
      },
      responses: {
        '201': {
          description: 'The created row (for an object) or rows (for an array), as stored',
          content: jsonContent({ oneOf: [schemaRef(names.row), arrayOf(schemaRef(names.row))] }),
        },
        ...SEED_ERROR,
      },
    });
  }
  if (has(view, 'update')) {
    const update = (method: string): Readonly<Record<string, unknown>> =>
      operation(view, `update.${method}`, 'Update the filtered rows of', tags, {
        description: 'At least one filter is required.',
        parameters: filters,
        requestBody: { required: true, content: jsonContent(schemaRef(names.update)) },
        responses: {
          '200': { description: 'How many rows changed', content: jsonContent(AFFECTED('updated')) },
          ...SEED_ERROR,
        },
      });
    item['put'] = update('put');
    item['patch'] = update('patch');
  }
  if (has(view, 'delete')) {
    item['delete'] = operation(view, 'delete', 'Delete the filtered rows of', tags, {
      description: 'At least one filter is required.',
      parameters: filters,
      responses: {
        '200': { description: 'How many rows were deleted', content: jsonContent(AFFECTED('deleted')) },
        ...SEED_ERROR,
      },
    });
  }
  return item;
}

/** `/<table>/{key}`: tables with a one-column primary key. */
function seedItem(view: TableView, names: Names, key: ColumnInfo): PathItem | undefined {
  const tags = [view.table.name];
  const keySchema = columnSchema({ ...key, nullable: false });
  const parameters = [{ name: 'key', in: 'path', required: true, description: key.name, schema: keySchema }];
  const item: Record<string, unknown> = { parameters };
  const notFound = { '404': { $ref: '#/components/responses/Error' } };
  if (has(view, 'read')) {
    item['get'] = operation(view, 'get', 'Read one row of', tags, {
      parameters: [ref('seed.select')],
      responses: {
        '200': { description: 'The row', content: jsonContent(schemaRef(names.row)) },
        ...notFound,
        ...SEED_ERROR,
      },
    });
  }
  if (has(view, 'update')) {
    const update = (method: string): Readonly<Record<string, unknown>> =>
      operation(view, `update.key.${method}`, 'Update one row of', tags, {
        requestBody: { required: true, content: jsonContent(schemaRef(names.update)) },
        responses: {
          '200': { description: 'How many rows changed', content: jsonContent(AFFECTED('updated')) },
          ...notFound,
          ...SEED_ERROR,
        },
      });
    item['put'] = update('put');
    item['patch'] = update('patch');
  }
  if (has(view, 'delete')) {
    item['delete'] = operation(view, 'delete.key', 'Delete one row of', tags, {
      responses: {
        '200': { description: 'How many rows were deleted', content: jsonContent(AFFECTED('deleted')) },
        ...SEED_ERROR,
      },
    });
  }
  return Object.keys(item).length > 1 ? item : undefined;
}

const CONTENT_RANGE = { 'Content-Range': { $ref: '#/components/headers/Content-Range' } };

/** `/rest/v1/<table>`: the PostgREST dialect. */
function pgrstCollection(view: TableView, names: Names, filters: readonly Parameter[]): PathItem {
  const tags = [`rest/v1/${view.table.name}`];
  const logic = [ref('pgrst.or'), ref('pgrst.and')];
  const rows = arrayOf(schemaRef(names.row));
  const item: Record<string, unknown> = {};
  const written = (what: string, created: boolean): JsonSchema => ({
    [created ? '201' : '200']: {
      description: `With \`Prefer: return=representation\`: the ${what} rows as stored`,
      headers: CONTENT_RANGE,
      content: jsonContent(rows),
    },
    ...(created
      ? {}
      : { '204': { description: `The rows were ${what} (\`return=minimal\`)`, headers: CONTENT_RANGE } }),
    ...PGRST_ERROR,
  });
  const writeParams = [ref('pgrst.select'), ref('pgrst.prefer_write'), ref('pgrst.content_profile')];
  if (has(view, 'read')) {
    const parameters = [
      ...['select', 'order', 'limit', 'offset'].map((p) => ref(`pgrst.${p}`)),
      ...logic,
      ...filters,
      ref('pgrst.prefer_read'),
      ref('pgrst.range'),
      ref('pgrst.accept_profile'),
    ];
    const read = (description: string): Readonly<Record<string, unknown>> => ({
      description,
      headers: CONTENT_RANGE,
      content: {
        ...jsonContent(rows),
        'application/vnd.pgrst.object+json': { schema: schemaRef(names.row) },
      },
    });
    item['get'] = operation(view, 'pgrst.list', 'Read rows of', tags, {
      parameters,
      responses: {
        '200': read('The rows; with `Accept: application/vnd.pgrst.object+json`, the one row (else 406)'),
        '206': read('Part of the rows: the count in `Content-Range` shows more'),
        ...PGRST_ERROR,
      },
    });
    item['head'] = operation(view, 'pgrst.head', 'Count rows of', tags, {
      parameters,
      responses: {
        '200': { description: 'The headers of the read, no body', headers: CONTENT_RANGE },
        '206': { description: 'The headers of a partial read, no body', headers: CONTENT_RANGE },
        ...PGRST_ERROR,
      },
    });
  }
  if (has(view, 'create')) {
    const upsert = has(view, 'update')
      ? 'Upsert with `Prefer: resolution=merge-duplicates|ignore-duplicates` and `on_conflict`.'
      : 'The caller may not update, so an upsert that updates a row is refused.';
    item['post'] = operation(view, 'pgrst.create', 'Create rows in', tags, {
      description: upsert,
      parameters: [ref('pgrst.columns'), ref('pgrst.on_conflict'), ...writeParams],
      requestBody: {
        required: true,
        content: jsonContent({ oneOf: [schemaRef(names.insert), arrayOf(schemaRef(names.insert))] }),
      },
      responses: {
        ...written('created', true),
        '200': { description: 'An upsert where every row updated', content: jsonContent(rows) },
      },
    });
  }
  if (has(view, 'update')) {
    item['patch'] = operation(view, 'pgrst.update', 'Update the filtered rows of', tags, {
      parameters: [...logic, ...filters, ref('pgrst.columns'), ...writeParams],
      requestBody: { required: true, content: jsonContent(schemaRef(names.update)) },
      responses: written('updated', false),
    });
  }
  if (has(view, 'delete')) {
    item['delete'] = operation(view, 'pgrst.delete', 'Delete the filtered rows of', tags, {
      parameters: [...logic, ...filters, ...writeParams],
      responses: written('deleted', false),
    });
  }
  return item;
}

const SEED_ERROR_SCHEMA: JsonSchema = {
  type: 'object',
  properties: {
    error: {
      type: 'object',
      properties: {
        code: { type: 'string', description: 'Stable snake_case code (docs/http-api.md)' },
        message: { type: 'string' },
        details: { type: 'object' },
      },
      required: ['code', 'message'],
    },
  },
  required: ['error'],
};

const PGRST_ERROR_SCHEMA: JsonSchema = {
  type: 'object',
  properties: {
    code: {
      type: 'string',
      description: "PostgREST's code where one applies (`PGRST116`, `42501`…), else rest's",
    },
    message: { type: 'string' },
    details: { type: ['string', 'null'], description: "Starts with rest's snake_case code" },
    hint: { type: ['string', 'null'] },
  },
  required: ['code', 'message', 'details', 'hint'],
};

/** The parts of the document that do not depend on the caller. */
function commonComponents(authEnabled: boolean): Record<string, unknown> {
  return {
    headers: {
      'Content-Range': {
        description: '`<first>-<last>/<total>` (`*` total without `Prefer: count`; `*/<total>` when no row)',
        schema: { type: 'string' },
      },
    },
    responses: {
      Error: { description: 'An error', content: jsonContent(schemaRef('Error')) },
      PgrstError: {
        description: "An error in PostgREST's shape",
        content: jsonContent(schemaRef('PgrstError')),
      },
    },
    ...(authEnabled
      ? {
          securitySchemes: {
            bearer: {
              type: 'http',
              scheme: 'bearer',
              bearerFormat: 'JWT',
              description: 'A token from `POST /auth/login`, or the anonymous API key (`rest auth anon-key`)',
            },
            apikey: {
              type: 'apiKey',
              in: 'header',
              name: 'apikey',
              description:
                'The anonymous API key; any token is checked, and read as the bearer token when alone',
            },
          },
        }
      : {}),
  };
}

export function openApiDocument(view: CallerView, version: string): OpenApiDocument {
  const names = componentNames(view.tables.map((t) => t.table.name));
  const paths: Record<string, PathItem> = { ...META_PATHS, ...(view.authEnabled ? AUTH_PATHS : {}) };
  const schemas: Record<string, JsonSchema> = { Error: SEED_ERROR_SCHEMA, PgrstError: PGRST_ERROR_SCHEMA };
  const parameters: Record<string, Parameter> = { ...SEED_PARAMETERS, ...PGRST_PARAMETERS };
  view.tables.forEach((table, i) => {
    const component = names[i] ?? '';
    const base = `table.${component}`;
    const tableNames = { row: base, insert: `${base}.insert`, update: `${base}.update` };
    Object.assign(schemas, tableSchemas(table, base));
    const seedFilterRefs = filterRefs(seedFilters(table.readable), `seed.filter.${component}`, parameters);
    const pgrstFilterRefs = filterRefs(pgrstFilters(table.readable), `pgrst.filter.${component}`, parameters);
    const path = `/${encodeURIComponent(table.table.name)}`;
    // A fixed path keeps its meaning: a table named `openapi.json` is documented under /rest/v1 only.
    if (!Object.hasOwn(paths, path)) paths[path] = seedCollection(table, tableNames, seedFilterRefs);
    const [keyName, ...more] = table.table.primaryKey;
    const key = keyName === undefined || more.length > 0 ? undefined : table.table.columnsByName.get(keyName);
    const item = key === undefined ? undefined : seedItem(table, tableNames, key);
    if (item !== undefined) paths[`${path}/{key}`] = item;
    const pgrst = pgrstCollection(table, tableNames, pgrstFilterRefs);
    if (Object.keys(pgrst).length > 0) paths[`/rest/v1${path}`] = pgrst;
  });
  return {
    openapi: '3.1.0',
    info: {
      title: 'rest',
      version,
      description:
        'The tables and actions this caller may use, in two dialects: `/<table>` and the PostgREST dialect at `/rest/v1/<table>`.',
    },
    ...(view.authEnabled ? { security: [{}, { bearer: [] }, { apikey: [] }] } : {}),
    paths,
    components: { schemas, parameters, ...commonComponents(view.authEnabled) },
  };
}
