// The registry against the source: every registered code has a category and a meaning, is given
// somewhere in the product, and no retired code comes back. The type of `new RestError(code, …)`
// already refuses an unregistered code, and the constructor refuses a category the registry does not
// list for it.

import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import {
  categoriesOf,
  ERROR_CODES,
  RETIRED_CODES,
  type ErrorCategory,
  type ErrorCode,
} from '../../../errors/error-codes.js';
import { exitCodeOf, RestError } from '../../../errors/rest-error.js';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
/** The product's sources outside the registry itself. */
const SOURCES = ['index.ts', 'grammar', 'compiler', 'runtime', 'cli'];

const CATEGORIES: ReadonlySet<string> = new Set(Object.keys(exitCodeOf));
const CODES = Object.keys(ERROR_CODES) as ErrorCode[];
const registered = (code: string): code is ErrorCode => Object.hasOwn(ERROR_CODES, code);

function sourceFiles(path: string): string[] {
  if (statSync(path).isDirectory()) return readdirSync(path).flatMap((name) => sourceFiles(join(path, name)));
  return path.endsWith('.ts') ? [path] : [];
}

/** Every single-quoted snake_case literal of the product's sources. */
const literals: ReadonlySet<string> = new Set(
  SOURCES.flatMap((s) => sourceFiles(join(ROOT, s))).flatMap((path) =>
    [...readFileSync(path, 'utf8').matchAll(/'([a-z]+(?:_[a-z]+)*)'/g)].map((m) => m[1] ?? ''),
  ),
);

describe('the error code registry', () => {
  it('has snake_case codes, each with a category and a one-line meaning', () => {
    for (const code of CODES) {
      expect(code).toMatch(/^[a-z]+(_[a-z]+)*$/);
      const categories = categoriesOf(code);
      expect(categories.length, code).toBeGreaterThan(0);
      expect(new Set(categories).size, code).toBe(categories.length);
      for (const c of categories) expect(CATEGORIES.has(c), `${code}: ${c}`).toBe(true);
      expect(ERROR_CODES[code].meaning, code).toMatch(/^\S[^\n]*$/);
    }
  });

  it('never registers a retired code, and retires each code once, saying why', () => {
    expect(new Set(RETIRED_CODES.map((r) => r.code)).size).toBe(RETIRED_CODES.length);
    for (const { code, why } of RETIRED_CODES) {
      expect(registered(code), `${code} is retired: it cannot be registered again`).toBe(false);
      expect(why.trim(), code).not.toBe('');
    }
  });

  it('has no code that nothing gives (retire it instead)', () => {
    expect(literals.size).toBeGreaterThan(100);
    expect(CODES.filter((code) => !literals.has(code))).toEqual([]);
  });

  it.each(CODES)('%s: an error takes its category from the registry', (code) => {
    const categories = categoriesOf(code);
    if (categories.length === 1) {
      expect(new RestError(code, 'x').category).toBe(categories[0]);
      return;
    }
    // A choice: the call site names one of the registered categories, and only those.
    expect(() => new RestError(code, 'x')).toThrow(/registered as/);
    for (const c of categories) expect(new RestError(code, 'x', { category: c }).category).toBe(c);
    const other = [...CATEGORIES].find((c) => !categories.includes(c as ErrorCategory)) as ErrorCategory;
    expect(() => new RestError(code, 'x', { category: other })).toThrow(/registered as/);
  });

  it('refuses a category the registry does not list for a code', () => {
    expect(() => new RestError('unknown_table', 'x', { category: 'forbidden' })).toThrow(
      'error code unknown_table is registered as not_found, not forbidden',
    );
  });
});
