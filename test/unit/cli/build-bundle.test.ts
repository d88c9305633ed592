// The bundled `rest` binary (cli/build-bundle.ts): which dependencies esbuild inlines and which stay
// packages loaded from node_modules.

import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { externalPackages } from '../../../cli/build-bundle.js';

const dependencies = (
  JSON.parse(readFileSync(new URL('../../../package.json', import.meta.url), 'utf8')) as {
    dependencies: Record<string, string>;
  }
).dependencies;

describe('externalPackages', () => {
  it('inlines chevrotain, yargs and yaml, and leaves every other dependency a package', () => {
    const external = externalPackages(dependencies);
    expect(external).not.toContain('chevrotain');
    expect(external).not.toContain('yargs');
    expect(external).not.toContain('yaml');
    expect(external.length).toBe(Object.keys(dependencies).length - 3);
  });

  it('keeps native addons and the packages that find files or start workers external', () => {
    expect(externalPackages(dependencies)).toEqual(
      expect.arrayContaining([
        'better-sqlite3',
        'bcrypt',
        'pg',
        'mysql2',
        'pino',
        'postgres-migrations',
        'express',
      ]),
    );
  });

  it('leaves a dependency it does not know about external', () => {
    expect(externalPackages({ 'some-new-driver': '1.0.0', chevrotain: '11.2.0' })).toEqual([
      'some-new-driver',
    ]);
  });
});
