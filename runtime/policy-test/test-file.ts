// The policy test file (docs/policy-tests.md): YAML text → a checked TestFile whose every part
// carries its line. Anything malformed is one RestError `invalid_test_file` naming the line and
// column (`cases.yml:12:5: …`), exit 2.

import { LineCounter, isMap, isScalar, isSeq, parseDocument, type Node } from 'yaml';
import { ACTIONS, type Action } from '../../compiler/types.js';
import { RestError } from '../../errors/rest-error.js';

/** Who sends a case's request. */
export type Caller =
  | { readonly kind: 'anonymous' }
  | { readonly kind: 'admin' }
  | { readonly kind: 'user'; readonly name: string }
  | { readonly kind: 'claims'; readonly claims: Readonly<Record<string, unknown>> };

export interface Located {
  /** 1-based line and column of the item in its file. */
  readonly line: number;
  readonly column: number;
}

export interface FixtureUser extends Located {
  readonly name: string;
  readonly isAdmin: boolean;
}

export interface FixtureRow extends Located {
  readonly table: string;
  readonly values: Readonly<Record<string, unknown>>;
}

export interface FilePolicy extends Located {
  readonly table: string;
  readonly action: string;
  readonly expression: string;
  readonly description: string;
  readonly columns: string | undefined;
}

export interface Expectation {
  readonly status?: number;
  readonly code?: string;
  /** Exactly these primary keys (a key of several columns is a list), in any order. */
  readonly rows?: readonly unknown[];
  /** Exactly these keys in each returned row. */
  readonly columns?: readonly string[];
  readonly count?: number;
}

export interface TestCase extends Located {
  /** `as request` as written, for reports. */
  readonly name: string;
  readonly as: Caller;
  readonly callerText: string;
  readonly method: string;
  readonly path: string;
  readonly body?: unknown;
  readonly expect: Expectation;
}

export interface MatrixEntry extends Located {
  readonly as: Caller;
  readonly callerText: string;
  readonly table: string;
  readonly allow: ReadonlySet<Action>;
}

export interface TestFile {
  readonly name: string;
  readonly users: readonly FixtureUser[];
  readonly rows: readonly FixtureRow[];
  /** Undefined: the stored policies stay in force. */
  readonly policies: readonly FilePolicy[] | undefined;
  readonly cases: readonly TestCase[];
  readonly matrix: readonly MatrixEntry[];
}

const METHODS = new Set(['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'HEAD']);

/** A file's position lookups and its one kind of error. */
class Reader {
  readonly #lines = new LineCounter();
  constructor(readonly file: string) {}

  get counter(): LineCounter {
    return this.#lines;
  }

  at(node: Node | null | undefined): Located {
    const pos = this.#lines.linePos(node?.range?.[0] ?? 0);
    return { line: pos.line, column: pos.col };
  }

  fail(where: Located, message: string): RestError {
    return fileError(this.file, where, message);
  }
}

type Json = unknown;

function mapEntries(r: Reader, node: unknown, what: string, allowed: readonly string[]): Map<string, Node> {
  if (!isMap(node)) throw r.fail(r.at(node as Node), `${what} must be a mapping`);
  const out = new Map<string, Node>();
  for (const pair of node.items) {
    const key = isScalar(pair.key) ? String(pair.key.value) : undefined;
    if (key === undefined || !allowed.includes(key)) {
      throw r.fail(
        r.at(pair.key as Node),
        `${what} has an unknown key ${JSON.stringify(key ?? '?')}; expected one of ${allowed.join(', ')}`,
      );
    }
    out.set(key, pair.value as Node);
  }
  return out;
}

function seqItems(r: Reader, node: Node | undefined, what: string): readonly Node[] {
  if (node === undefined || (isScalar(node) && node.value === null)) return [];
  if (!isSeq(node)) throw r.fail(r.at(node), `${what} must be a list`);
  return node.items as Node[];
}

const json = (node: Node | undefined): Json => (node === undefined ? undefined : (node.toJSON() as Json));

function text(r: Reader, node: Node | undefined, what: string, where: Located): string {
  const value = json(node);
  if (typeof value !== 'string')
    throw r.fail(node === undefined ? where : r.at(node), `${what} must be text`);
  return value;
}

function caller(r: Reader, node: Node | undefined, where: Located): { as: Caller; text: string } {
  if (node === undefined)
    throw r.fail(where, '`as` is missing: a user name, anonymous, admin or {claims: {…}}');
  const value = json(node);
  if (typeof value === 'string') {
    if (value === 'anonymous') return { as: { kind: 'anonymous' }, text: value };
    if (value === 'admin') return { as: { kind: 'admin' }, text: value };
    return { as: { kind: 'user', name: value }, text: value };
  }
  const entries = mapEntries(r, node, '`as`', ['claims']);
  const claims = json(entries.get('claims'));
  if (typeof claims !== 'object' || claims === null || Array.isArray(claims)) {
    throw r.fail(r.at(node), '`as: {claims: …}` needs a mapping of claims');
  }
  return {
    as: { kind: 'claims', claims: claims as Record<string, unknown> },
    text: `claims ${JSON.stringify(claims)}`,
  };
}

function expectation(r: Reader, node: Node | undefined, where: Located): Expectation {
  if (node === undefined) throw r.fail(where, '`expect` is missing');
  const e = mapEntries(r, node, '`expect`', ['status', 'code', 'rows', 'columns', 'count']);
  const out: {
    status?: number;
    code?: string;
    rows?: readonly unknown[];
    columns?: readonly string[];
    count?: number;
  } = {};
  const status = e.get('status');
  if (status !== undefined) {
    const v = json(status);
    if (typeof v !== 'number' || !Number.isInteger(v) || v < 100 || v > 599)
      throw r.fail(r.at(status), '`status` must be an HTTP status (100–599)');
    out.status = v;
  }
  const code = e.get('code');
  if (code !== undefined) out.code = text(r, code, '`code`', where);
  const rows = e.get('rows');
  if (rows !== undefined) {
    const v = json(rows);
    if (!Array.isArray(v)) throw r.fail(r.at(rows), '`rows` must be a list of primary keys');
    out.rows = v;
  }
  const columns = e.get('columns');
  if (columns !== undefined) {
    const v = json(columns);
    if (!Array.isArray(v) || !v.every((c) => typeof c === 'string'))
      throw r.fail(r.at(columns), '`columns` must be a list of column names');
    out.columns = v as string[];
  }
  const count = e.get('count');
  if (count !== undefined) {
    const v = json(count);
    if (typeof v !== 'number' || !Number.isInteger(v) || v < 0)
      throw r.fail(r.at(count), '`count` must be a whole number');
    out.count = v;
  }
  if (Object.keys(out).length === 0) throw r.fail(r.at(node), '`expect` names nothing to check');
  return out;
}

function testCase(r: Reader, node: Node): TestCase {
  const where = r.at(node);
  const c = mapEntries(r, node, 'a case', ['as', 'request', 'body', 'expect', 'name']);
  const who = caller(r, c.get('as'), where);
  const request = text(r, c.get('request'), '`request`', where);
  const match = /^([A-Za-z]+)\s+(\/\S*)$/.exec(request.trim());
  const method = match?.[1]?.toUpperCase();
  if (match === null || method === undefined || !METHODS.has(method)) {
    throw r.fail(
      r.at(c.get('request')),
      `request ${JSON.stringify(request)} is not "<METHOD> /path[?query]" (GET, POST, PUT, PATCH, DELETE, HEAD)`,
    );
  }
  const path = match[2] ?? '/';
  const name = c.get('name');
  return {
    ...where,
    name: name === undefined ? `${who.text} ${method} ${path}` : text(r, name, '`name`', where),
    as: who.as,
    callerText: who.text,
    method,
    path,
    ...(c.has('body') ? { body: json(c.get('body')) } : {}),
    expect: expectation(r, c.get('expect'), where),
  };
}

function matrixEntry(r: Reader, node: Node): MatrixEntry {
  const where = r.at(node);
  const m = mapEntries(r, node, 'a matrix entry', ['as', 'table', 'allow']);
  const who = caller(r, m.get('as'), where);
  if (who.as.kind === 'claims' || who.as.kind === 'admin') {
    throw r.fail(where, 'the matrix covers fixture users and anonymous: `as` must name one of them');
  }
  const table = text(r, m.get('table'), '`table`', where);
  const allow = new Set<Action>();
  for (const item of seqItems(r, m.get('allow'), '`allow`')) {
    const action = ACTIONS.find((a) => a === json(item));
    if (action === undefined)
      throw r.fail(r.at(item), `action ${JSON.stringify(json(item))} is not one of ${ACTIONS.join(', ')}`);
    allow.add(action);
  }
  return { ...where, as: who.as, callerText: who.text, table, allow };
}

function policy(r: Reader, node: Node): FilePolicy {
  const where = r.at(node);
  const p = mapEntries(r, node, 'a policy', ['table', 'action', 'expression', 'description', 'columns']);
  const expression = p.has('expression') ? json(p.get('expression')) : '';
  const columns = p.get('columns');
  return {
    ...where,
    table: text(r, p.get('table'), '`table`', where),
    action: text(r, p.get('action'), '`action`', where),
    expression: expression === null ? '' : text(r, p.get('expression'), '`expression`', where),
    description: p.has('description') ? text(r, p.get('description'), '`description`', where) : 'policy test',
    columns: columns === undefined ? undefined : text(r, columns, '`columns`', where),
  };
}

function fixtures(r: Reader, node: Node | undefined): { users: FixtureUser[]; rows: FixtureRow[] } {
  if (node === undefined) return { users: [], rows: [] };
  const f = mapEntries(r, node, '`fixtures`', ['users', 'rows']);
  const users = seqItems(r, f.get('users'), '`fixtures.users`').map((item): FixtureUser => {
    const where = r.at(item);
    const u = mapEntries(r, item, 'a fixture user', ['name', 'is_admin']);
    const isAdmin = u.has('is_admin') ? json(u.get('is_admin')) : false;
    if (typeof isAdmin !== 'boolean')
      throw r.fail(r.at(u.get('is_admin')), '`is_admin` must be true or false');
    const name = text(r, u.get('name'), '`name`', where);
    if (name === 'anonymous' || name === 'admin')
      throw r.fail(where, `"${name}" is a reserved caller in policy tests: give the user another name`);
    return { ...where, name, isAdmin };
  });
  const rows: FixtureRow[] = [];
  const byTable = f.get('rows');
  if (byTable !== undefined && !(isScalar(byTable) && byTable.value === null)) {
    if (!isMap(byTable)) throw r.fail(r.at(byTable), '`fixtures.rows` must map table names to lists of rows');
    for (const pair of byTable.items) {
      const table = String(json(pair.key as Node));
      for (const item of seqItems(r, pair.value as Node, `rows of ${table}`)) {
        const values = json(item);
        if (typeof values !== 'object' || values === null || Array.isArray(values))
          throw r.fail(r.at(item), `a row of ${table} must be a mapping of columns to values`);
        rows.push({ ...r.at(item), table, values: values as Record<string, unknown> });
      }
    }
  }
  return { users, rows };
}

/** Parses and checks the shape of a test file; names (users, tables, policies) are checked when it runs. */
export function parseTestFile(source: string, file: string): TestFile {
  const r = new Reader(file);
  const doc = parseDocument(source, { lineCounter: r.counter, prettyErrors: false, uniqueKeys: true });
  const first = doc.errors[0];
  if (first !== undefined) {
    const pos = first.linePos?.[0] ?? { line: 1, col: 1 };
    throw r.fail({ line: pos.line, column: pos.col }, first.message.split('\n')[0] ?? 'not YAML');
  }
  const top = mapEntries(r, doc.contents, 'a policy test file', ['fixtures', 'policies', 'cases', 'matrix']);
  const { users, rows } = fixtures(r, top.get('fixtures'));
  const seen = new Set<string>();
  for (const u of users) {
    if (seen.has(u.name)) throw r.fail(u, `fixture user "${u.name}" is listed twice`);
    seen.add(u.name);
  }
  const cases = seqItems(r, top.get('cases'), '`cases`').map((n) => testCase(r, n));
  const matrix = seqItems(r, top.get('matrix'), '`matrix`').map((n) => matrixEntry(r, n));
  if (cases.length === 0 && matrix.length === 0) {
    throw r.fail(r.at(doc.contents), 'the file has no cases and no matrix: nothing to test');
  }
  return {
    name: file,
    users,
    rows,
    policies: top.has('policies')
      ? seqItems(r, top.get('policies'), '`policies`').map((n) => policy(r, n))
      : undefined,
    cases,
    matrix,
  };
}

/** An error at `where` in `file` (a name the database does not know, an invalid policy). */
export const fileError = (file: string, where: Located, message: string): RestError =>
  new RestError('invalid_test_file', `${file}:${where.line}:${where.column}: ${message}`, {
    details: { file, line: where.line, column: where.column },
  });
