// The bundled `rest` binary (cli/build-bundle.ts): which dependencies esbuild inlines and which stay
// packages loaded from node_modules.

import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { externalPackages, nodeOnlyPgStream } from '../../../cli/build-bundle.js';

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
