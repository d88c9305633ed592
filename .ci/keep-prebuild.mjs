// Keeps the better-sqlite3 addon that `npm ci` just compiled in prebuild-install's own cache
// (<npm cache>/_prebuilds/, where it keeps the prebuilt binaries it downloads), under the name it
// looks for: the next `npm ci` on this machine then unpacks it instead of compiling SQLite again
// (about a minute of one core; GitHub, where the prebuilt binaries live, is out of reach here).
// The name comes from prebuild-install itself (its configuration, download URL and cache path, as
// better-sqlite3's install computes them): it holds the package's version, Node's ABI, the platform
// and the architecture, so another version or Node compiles afresh. prebuild-install loads an
// unpacked addon before it accepts it and compiles when that fails. Nothing is written when the
// file is there or no addon was built.

import { execFileSync } from 'node:child_process';
import console from 'node:console';
import { existsSync, mkdirSync, readFileSync, renameSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, resolve } from 'node:path';
import process from 'node:process';

const pkgDir = resolve('node_modules/better-sqlite3');
const addon = join(pkgDir, 'build/Release/better_sqlite3.node');
if (!existsSync(addon)) process.exit(0);

// The prebuild-install that better-sqlite3's install script runs.
const fromPackage = createRequire(join(pkgDir, 'package.json'));
const rc = fromPackage('prebuild-install/rc');
const util = fromPackage('prebuild-install/util');
const pkg = JSON.parse(readFileSync(join(pkgDir, 'package.json'), 'utf8'));
const cached = util.cachedPrebuild(util.getDownloadUrl({ ...rc(pkg), pkg }));
if (existsSync(cached)) process.exit(0);

mkdirSync(dirname(cached), { recursive: true });
const partial = `${cached}.${process.pid}.tmp`;
execFileSync('tar', ['-czf', partial, '-C', pkgDir, 'build/Release/better_sqlite3.node']);
renameSync(partial, cached);
console.log(`kept the compiled better-sqlite3 addon for the next install: ${cached}`);
