// The bundled `rest` binary (scripts/build-bundle.ts): which dependencies esbuild inlines and which stay
// packages loaded from node_modules, and what the built binary loads only when it is used.

import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  externalPackages,
  LAZY_PACKAGES,
  lazyPackageSource,
  nodeOnlyPgStream,
} from '../../../scripts/build-bundle.js';

const dependencies = (
  JSON.parse(readFileSync(new URL('../../../package.json', import.meta.url), 'utf8')) as {
    dependencies: Record<string, string>;
  }
).dependencies;

describe('externalPackages', () => {
  it('inlines the pure-JavaScript packages, the server and its drivers included', () => {
    const external = externalPackages(dependencies);
    const inlined = ['chevrotain', 'yargs', 'yaml', 'express', 'pino', 'jose', 'pg', 'mysql2'];
    for (const name of inlined) expect(external, name).not.toContain(name);
    expect(external.length).toBe(Object.keys(dependencies).length - inlined.length);
  });

  it('keeps native addons and the package that finds files of its own external', () => {
    expect([...externalPackages(dependencies)].sort()).toEqual([
      'bcrypt',
      'better-sqlite3',
      'postgres-migrations',
    ]);
  });

  it('leaves a dependency it does not know about external', () => {
    expect(externalPackages({ 'some-new-driver': '1.0.0', chevrotain: '11.2.0' })).toEqual([
      'some-new-driver',
    ]);
  });
});

describe('nodeOnlyPgStream', () => {
  const source = readFileSync(new URL('../../../node_modules/pg/lib/stream.js', import.meta.url), 'utf8');

  it("answers pg's Cloudflare check with false before it reads any global", () => {
    const patched = nodeOnlyPgStream(source);
    const body = patched.slice(patched.indexOf('function isCloudflareRuntime() {'));
    expect(body.split('\n')[1]?.trim()).toMatch(/^return false;/);
    expect(patched.replace(/\n {2}return false;.*\n/, '\n')).toBe(source);
  });

  it('fails the build when pg no longer has the check as written', () => {
    expect(() => nodeOnlyPgStream('module.exports = {}')).toThrow(/isCloudflareRuntime/);
  });
});

describe('lazyPackageSource: what an importer of a package loaded on first use is given', () => {
  /** Evaluates the module text with a require that counts loads; its exports as an object. */
  const evaluate = (source: string, pkg: Record<string, unknown>) => {
    let loads = 0;
    const exports: Record<string, unknown> = {};
    const body = source
      .replace(/^export default /m, 'exports.default = ')
      .replace(/^export const (\w+) = /gm, 'exports.$1 = ');
    new Function('require', 'exports', body)(() => (loads++, pkg), exports);
    return { exports, loads: () => loads };
  };

  it('forwards each named export to the package, loaded once, on the first call', () => {
    const m = evaluate(lazyPackageSource('body-parser', ['json', 'text']), {
      json: (o: unknown) => ['json', o],
      text: () => 'text',
    });
    expect(m.loads()).toBe(0);
    expect((m.exports['json'] as (o: unknown) => unknown)({ limit: 1 })).toEqual(['json', { limit: 1 }]);
    expect((m.exports['text'] as () => unknown)()).toBe('text');
    expect(m.loads()).toBe(1);
  });

  it("forwards a default export to the package's default", () => {
    const m = evaluate(lazyPackageSource('string-width', ['default']), { default: (s: string) => s.length });
    expect((m.exports['default'] as (s: string) => number)('abc')).toBe(3);
  });

  it("lists what the bundled importers take from each package (a dependency's upgrade that takes more fails here)", () => {
    const read = (path: string) =>
      readFileSync(new URL(`../../../node_modules/${path}`, import.meta.url), 'utf8');
    for (const importer of ['cliui/index.mjs', 'wrap-ansi/index.js', 'yargs/lib/platform-shims/esm.mjs']) {
      const imports = read(importer).match(/^import .* from 'string-width';?$/gm);
      expect(imports, importer).toEqual([
        expect.stringMatching(/^import stringWidth from 'string-width';?$/),
      ]);
    }
    const express = read('express/lib/express.js');
    expect(express.match(/require\('body-parser'\)/g)).toHaveLength(1);
    const used = new Set([...express.matchAll(/bodyParser\.(\w+)/g)].map((m) => m[1]));
    expect({
      'string-width': ['default'],
      'body-parser': [...used].sort(),
    }).toEqual(LAZY_PACKAGES);
  });
});

describe('the help layout of the built binary (dist/cli/main.js) loads when help is printed', () => {
  const entry = fileURLToPath(new URL('../../../dist/cli/main.js', import.meta.url));
  let dir = '';
  let preload = '';
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'rest-bundle-'));
    // Says so on standard error whenever anything in the process builds an Intl.Segmenter.
    preload = join(dir, 'count-segmenters.mjs');
    writeFileSync(
      preload,
      `const Segmenter = Intl.Segmenter;
Intl.Segmenter = class extends Segmenter {
  constructor(...args) {
    super(...args);
    process.stderr.write('[a segmenter was built]\\n');
  }
};
`,
    );
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  const run = (args: readonly string[]) =>
    spawnSync(process.execPath, ['--import', pathToFileURL(preload).href, entry, ...args], {
      encoding: 'utf8',
      env: { PATH: process.env['PATH'] ?? '' },
    });

  // One after the other: the list reads what the setup wrote.
  it.each([
    ['auth', 'setup'],
    ['auth', 'policy', 'list'],
  ])('rest %s %s … builds no segmenter (string-width is loaded on first use)', (...args) => {
    const result = run(['-db.url', `sqlite://${dir}/app.db`, ...args]);
    expect(result.status, result.stderr).toBe(0);
    expect(result.stderr).not.toContain('[a segmenter was built]');
  });

  it('rest --help measures its text with it and lays the commands out in columns', () => {
    const result = run(['--help']);
    expect(result.status, result.stderr).toBe(0);
    expect(result.stderr).toContain('[a segmenter was built]');
    expect(result.stdout).toMatch(
      /^ {2}rest serve +run the HTTP server \(the default command\) +\[default\]$/m,
    );
  });
});
