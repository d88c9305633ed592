// The YAML config file (`-config rest.yml`): parsed and shape-checked; unknown keys are errors
// so that a typo never silently falls back to a default.

import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import type * as Yaml from 'yaml';
import { configError } from './parse-values.js';

// yaml is loaded when a file is parsed, not when this module is: every command reads its
// configuration through here, and most are given no file — loading yaml (some 260 KB) was a tenth
// of `rest auth policy list`'s start-up work (docs/performance.md). Loaded through node's own
// require, it is the package's CommonJS build from node_modules, outside the CLI bundle.
const loadPackage = createRequire(import.meta.url);
let yaml: typeof Yaml | undefined;
const loadYaml = (): typeof Yaml => (yaml ??= loadPackage('yaml') as typeof Yaml);

export interface FileConfig {
  readonly addr?: string;
  readonly workers?: string | number;
  readonly db?: {
    readonly url?: string;
    readonly rls?: string | boolean;
    readonly statement_timeout?: string | number;
    readonly pooler?: string;
    readonly listen_url?: string;
    readonly max_waiting?: string | number;
  };
  readonly auth?: {
    readonly enabled?: string | boolean;
    readonly secret?: string;
    readonly token_ttl?: string | number;
    readonly refresh_ttl?: string | number;
  };
  readonly http?: {
    readonly max_rows?: string | number;
    readonly trust_proxy?: string | boolean;
    readonly console?: string | boolean;
  };
  readonly cors?: { readonly enabled?: boolean; readonly origins?: readonly string[] };
}

type Leaf = 'string' | 'boolean' | 'string|boolean' | 'string|number' | 'string[]';
interface Shape {
  readonly [key: string]: Leaf | Shape;
}

const SHAPE: Shape = {
  addr: 'string',
  workers: 'string|number',
  db: {
    url: 'string',
    rls: 'string|boolean',
    statement_timeout: 'string|number',
    pooler: 'string',
    listen_url: 'string',
    max_waiting: 'string|number',
  },
  auth: {
    enabled: 'string|boolean',
    secret: 'string',
    token_ttl: 'string|number',
    refresh_ttl: 'string|number',
  },
  http: { max_rows: 'string|number', trust_proxy: 'string|boolean', console: 'string|boolean' },
  cors: { enabled: 'boolean', origins: 'string[]' },
};

const isPlainObject = (v: unknown): v is Readonly<Record<string, unknown>> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

function check(value: unknown, shape: Shape, where: string, source: string): void {
  if (!isPlainObject(value)) throw configError(`${source}: ${where || 'the document'} must be a mapping`);
  for (const [key, v] of Object.entries(value)) {
    const path = where === '' ? key : `${where}.${key}`;
    const expected = shape[key];
    if (expected === undefined) throw configError(`${source}: unknown setting ${path}`);
    if (v === null || v === undefined) continue;
    if (typeof expected === 'object') {
      check(v, expected, path, source);
      continue;
    }
    const ok =
      expected === 'string[]'
        ? Array.isArray(v) && v.every((x) => typeof x === 'string')
        : expected.split('|').includes(typeof v);
    if (!ok)
      throw configError(
        `${source}: ${path} must be ${expected.replace('|', ' or ').replace('string[]', 'a list of strings')}`,
      );
  }
}

/** Settings where a key without a value is an empty value, refused later (docs/cli.md "Fail closed"). */
const EMPTY_WHEN_NULL: ReadonlySet<string> = new Set(['auth.secret']);

/** Drops null values so that an empty key means "not set", except the settings above. */
function withoutNulls(value: unknown, where = ''): unknown {
  if (!isPlainObject(value)) return value;
  return Object.fromEntries(
    Object.entries(value).flatMap(([k, v]): Array<[string, unknown]> => {
      const path = where === '' ? k : `${where}.${k}`;
      if (v !== null && v !== undefined) return [[k, withoutNulls(v, path)]];
      return EMPTY_WHEN_NULL.has(path) ? [[k, '']] : [];
    }),
  );
}

export function parseConfigFile(text: string, file: string): FileConfig {
  const { parse, YAMLError } = loadYaml();
  let doc: unknown;
  try {
    doc = parse(text);
  } catch (e) {
    if (e instanceof YAMLError) {
      const pos = e.linePos?.[0];
      const at = pos === undefined ? '' : ` at line ${pos.line}, column ${pos.col}`;
      throw configError(`config file ${file}: invalid YAML${at}: ${e.message.split('\n')[0] ?? ''}`);
    }
    throw e;
  }
  return checkSettings(doc, `config file ${file}`);
}

/**
 * Settings in the file's shape, checked like the file: from the YAML document, or given as an
 * object (the library's startServer). `source` names them in errors.
 */
export function checkSettings(doc: unknown, source: string): FileConfig {
  if (doc === null || doc === undefined) return {};
  check(doc, SHAPE, '', source);
  return withoutNulls(doc) as FileConfig;
}

export function readConfigFile(
  file: string,
  read: (path: string) => string = (p) => readFileSync(p, 'utf8'),
): FileConfig {
  let text: string;
  try {
    text = read(file);
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    const why =
      code === 'ENOENT' ? 'no such file' : code === 'EACCES' ? 'permission denied' : 'cannot be read';
    throw configError(`config file ${file}: ${why}`);
  }
  return parseConfigFile(text, file);
}
