// The CLI starts fast (docs/operations.md) because what `rest --help` loads is small: cli/main.ts and the
// command definitions, with every handler (services, compiler, database drivers) behind an
// import(). Read from the sources, not timed: the static import graph of cli/main.ts must reach
// none of the heavy modules, and every handler must be reached lazily from its definition.

import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../../..');

interface Imports {
  /** Specifiers loaded when the module is (not `import type`, not `export type`). */
  readonly static: readonly string[];
  /** Specifiers of `import('…')` expressions. */
  readonly dynamic: readonly string[];
}

/** The imports of a TypeScript source, by regular expression (the sources are formatted). */
function importsOf(source: string): Imports {
  const statics: string[] = [];
  const code = source.replace(/\/\*[\s\S]*?\*\//g, '').replace(/^\s*\/\/.*$/gm, '');
  for (const m of code.matchAll(/^\s*(import|export)\s+(type\s+)?([^'";]*?)\s*from\s*['"]([^'"]+)['"]/gm)) {
    if (m[2] === undefined) statics.push(m[4] as string);
  }
  for (const m of code.matchAll(/^\s*import\s+['"]([^'"]+)['"]/gm)) statics.push(m[1] as string);
  const dynamic = [...code.matchAll(/\bimport\(\s*['"]([^'"]+)['"]\s*\)/g)].map((m) => m[1] as string);
  return { static: statics, dynamic };
}

/** A relative specifier of `from` (repository-relative, .ts) as the repository-relative .ts file. */
const resolveSource = (from: string, specifier: string): string =>
  relative(ROOT, join(ROOT, dirname(from), specifier)).replace(/\.js$/, '.ts');

const read = (file: string): string => readFileSync(join(ROOT, file), 'utf8');

/** Every module cli/main.ts loads before a command runs: its static import closure. */
function staticClosure(entry: string): { files: Set<string>; packages: Set<string> } {
  const files = new Set<string>();
  const packages = new Set<string>();
  const pending = [entry];
  while (pending.length > 0) {
    const file = pending.pop() as string;
    if (files.has(file)) continue;
    files.add(file);
    for (const specifier of importsOf(read(file)).static) {
      if (specifier.startsWith('.')) pending.push(resolveSource(file, specifier));
      else packages.add(specifier);
    }
  }
  return { files, packages };
}

const definitions = readdirSync(join(ROOT, 'cli/commands'))
  .filter((f) => f.endsWith('.ts'))
  .map((f) => `cli/commands/${f}`);
const handlers = readdirSync(join(ROOT, 'cli/handlers'))
  .filter((f) => f.endsWith('.ts'))
  .map((f) => `cli/handlers/${f}`);

describe('importsOf', () => {
  it('tells loaded imports from type-only ones and finds import()', () => {
    const source = [
      "import type { A } from './a.js';",
      "import { b, type C } from './b.js';",
      'import {',
      '  d,',
      "} from 'd-package';",
      "export { e } from './e.js';",
      "export type { F } from './f.js';",
      "import './side-effect.js';",
      "// import { g } from './commented.js';",
      "const h = () => import('./h.js');",
    ].join('\n');
    expect(importsOf(source)).toEqual({
      static: ['./b.js', 'd-package', './e.js', './side-effect.js'],
      dynamic: ['./h.js'],
    });
  });
});

describe('what `rest` loads before a command runs', () => {
  const { files, packages } = staticClosure('cli/main.ts');

  it('reaches every command definition', () => {
    // Otherwise the closure below would prove nothing about them.
    for (const definition of definitions) expect(files).toContain(definition);
  });

  it('is the command line and its definitions: no handler, runtime, grammar or compiler module', () => {
    const heavy = [...files].filter(
      (f) =>
        f.startsWith('cli/handlers/') ||
        f.startsWith('runtime/') ||
        f.startsWith('grammar/') ||
        (f.startsWith('compiler/') && f !== 'compiler/types.ts'),
    );
    expect(heavy).toEqual([]);
  });

  it('loads no package but yargs', () => {
    expect([...packages].filter((p) => !p.startsWith('node:'))).toEqual(['yargs']);
  });

  it('loads each handler with import() from its definition', () => {
    const lazilyLoaded = new Set(
      definitions.flatMap((d) => importsOf(read(d)).dynamic.map((s) => resolveSource(d, s))),
    );
    const entries = handlers.filter((h) => /^export async function run\b|^export const run\b/m.test(read(h)));
    expect(entries.length).toBeGreaterThan(10);
    for (const handler of entries) expect(lazilyLoaded).toContain(handler);
  });
});
