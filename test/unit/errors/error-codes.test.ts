// The registry against the source: every `new RestError(category, code, …)` (and the super call of
// a subclass) names a registered code with one of its registered categories, every registered code
// is given somewhere, and no retired code comes back. The call sites are read from the .ts files.

import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import {
  categoriesOf,
  ERROR_CODES,
  POLICY_DENIAL,
  RETIRED_CODES,
  type ErrorCode,
} from '../../../errors/error-codes.js';
import { exitCodeOf, type ErrorCategory } from '../../../errors/rest-error.js';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const SOURCES = ['index.ts', 'errors', 'grammar', 'compiler', 'runtime', 'cli'];

/**
 * Code arguments that pass on a code chosen elsewhere, and where that code comes from. A new
 * indirect form must be added here, with the place its codes are checked.
 */
const FORWARDED: Readonly<Record<string, string>> = {
  // policyDenied: the literals of `code: '…'` in DenyReason objects, checked below.
  'reason.code': 'a DenyReason code (runtime/enforce/denials.ts)',
  // changeOwnPassword re-throws validatePassword's error with the field renamed.
  'e.code': "the caught RestError's own code",
};

const CATEGORIES: ReadonlySet<string> = new Set(Object.keys(exitCodeOf));
const registered = (code: string): code is ErrorCode => Object.hasOwn(ERROR_CODES, code);
const retired: ReadonlySet<string> = new Set(RETIRED_CODES.map((r) => r.code));

function sourceFiles(path: string): string[] {
  if (statSync(path).isDirectory()) return readdirSync(path).flatMap((name) => sourceFiles(join(path, name)));
  return path.endsWith('.ts') ? [path] : [];
}

const files = SOURCES.flatMap((s) => sourceFiles(join(ROOT, s))).map((path) => ({
  file: relative(ROOT, path),
  text: readFileSync(path, 'utf8'),
}));

/** The first two top-level arguments of the call whose `(` is at `open`, as written. */
function firstTwoArguments(text: string, open: number): [string, string] {
  const args: string[] = [];
  let depth = 0;
  let start = open + 1;
  for (let i = open + 1; i < text.length && args.length < 2; i += 1) {
    const ch = text.charAt(i);
    if (ch === "'" || ch === '"' || ch === '`') {
      i = text.indexOf(ch, i + 1);
      while (text.charAt(i - 1) === '\\') i = text.indexOf(ch, i + 1);
    } else if ('([{'.includes(ch)) depth += 1;
    else if (')]}'.includes(ch) && depth > 0) depth -= 1;
    else if ((ch === ',' || ch === ')') && depth === 0) {
      args.push(text.slice(start, i).trim());
      start = i + 1;
    }
  }
  return [args[0] ?? '', args[1] ?? ''];
}

interface Site {
  readonly where: string;
  readonly categories: readonly string[];
  /** The code when the call names it (or names it as the fallback of `x ?? 'code'`). */
  readonly code: string | undefined;
  /** The expression of a code chosen elsewhere. */
  readonly forwarded: string | undefined;
}

const lineOf = (text: string, index: number): number => text.slice(0, index).split('\n').length;
const literals = (expression: string): string[] =>
  [...expression.matchAll(/'([a-z_]+)'/g)].map((m) => m[1] ?? '');

const sites: Site[] = files.flatMap(({ file, text }) => {
  const calls = /new RestError\(/g;
  const pattern = text.includes('extends RestError') ? /new RestError\(|super\(/g : calls;
  const inComment = (index: number): boolean =>
    /^\s*(\/\/|\*|\/\*)/.test(text.slice(text.lastIndexOf('\n', index) + 1));
  return [...text.matchAll(pattern)]
    .filter((m) => !inComment(m.index))
    .map((m): Site => {
      const [category, code] = firstTwoArguments(text, m.index + m[0].length - 1);
      const literal = /^'([a-z_]+)'$/.exec(code)?.[1];
      const fallback = /^(.+?)\s*\?\?\s*'([a-z_]+)'$/.exec(code);
      return {
        where: `${file}:${lineOf(text, m.index)}`,
        categories: literals(category),
        code: literal ?? fallback?.[2],
        forwarded: literal === undefined ? (fallback?.[1] ?? code) : undefined,
      };
    });
});

/** `code: '…'` literals: the codes of DenyReason objects (and the error middleware's bare 500). */
const codeProperties = files.flatMap(({ file, text }) =>
  [...text.matchAll(/\bcode: '([a-z_]+)'/g)].map((m) => ({
    where: `${file}:${lineOf(text, m.index)}`,
    code: m[1] ?? '',
    denial: file.endsWith('enforce/denials.ts') || /from '[./]*(enforce\/)?denials\.js'/.test(text),
  })),
);

describe('the error code registry', () => {
  it('finds the call sites (the scan is not silently empty)', () => {
    expect(sites.length).toBeGreaterThan(100);
    expect(codeProperties.length).toBeGreaterThan(3);
  });

  it('has snake_case codes, each with a category and a one-line meaning', () => {
    for (const code of Object.keys(ERROR_CODES) as ErrorCode[]) {
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

  it.each(sites.map((s) => [s.where, s] as const))(
    '%s gives a registered code with its category',
    (_, site) => {
      expect(
        site.categories.length,
        'the category should be a literal (or a choice of literals)',
      ).toBeGreaterThan(0);
      for (const c of site.categories) expect(CATEGORIES.has(c), `${c} is not an ErrorCategory`).toBe(true);
      if (site.forwarded !== undefined) {
        expect(
          FORWARDED[site.forwarded],
          `the code ${site.forwarded} is neither a literal nor a known forwarded code: add it to FORWARDED`,
        ).toBeDefined();
      }
      if (site.code === undefined) return;
      expect(retired.has(site.code), `${site.code} is retired (errors/error-codes.ts): pick a new code`).toBe(
        false,
      );
      expect(registered(site.code), `register ${site.code} in errors/error-codes.ts`).toBe(true);
      const allowed = categoriesOf(site.code as ErrorCode);
      for (const c of site.categories) {
        expect(
          allowed,
          `${site.code} is registered as ${allowed.join(' or ')}, given here as ${c}`,
        ).toContain(c);
      }
    },
  );

  it.each(codeProperties.map((p) => [p.where, p] as const))(
    '%s names a registered code',
    (_, { code, denial }) => {
      expect(retired.has(code), `${code} is retired (errors/error-codes.ts): pick a new code`).toBe(false);
      expect(registered(code), `register ${code} in errors/error-codes.ts`).toBe(true);
      if (denial) {
        // policyDenied gives it as unauthenticated or forbidden, whichever the user calls for.
        const outside = categoriesOf(code as ErrorCode).filter(
          (c) => !(POLICY_DENIAL as readonly ErrorCategory[]).includes(c),
        );
        expect(outside, `${code} is given through policyDenied`).toEqual([]);
      }
    },
  );

  it('has no code that nothing gives (retire it instead)', () => {
    const given = new Set([...sites.flatMap((s) => s.code ?? []), ...codeProperties.map((p) => p.code)]);
    expect((Object.keys(ERROR_CODES) as ErrorCode[]).filter((code) => !given.has(code))).toEqual([]);
  });
});
