// Keeps the better-sqlite3 addon that `npm ci` just compiled in prebuild-install's own cache
// (<npm cache>/_prebuilds/, where it keeps the prebuilt binaries it downloads), under the name it
// looks for: the next `npm ci` on this machine then unpacks it instead of compiling SQLite again
// (about a minute of one core; GitHub, where the prebuilt binaries live, is out of reach here).
// The name holds the package's version, Node's ABI, the platform and the architecture, so another
// version or Node compiles afresh; prebuild-install loads an unpacked addon before it accepts it
// and compiles when that fails. Nothing is written when the file is there or no addon was built.

import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, renameSync } from 'node:fs';
import { homedir } from 'node:os';
import console from 'node:console';
import process from 'node:process';
import { join } from 'node:path';

const pkgDir = 'node_modules/better-sqlite3';
const addon = join(pkgDir, 'build/Release/better_sqlite3.node');
if (!existsSync(addon)) process.exit(0);

const { version } = JSON.parse(readFileSync(join(pkgDir, 'package.json'), 'utf8'));
const file = `better-sqlite3-v${version}-node-v${process.versions.modules}-${process.platform}-${process.arch}.tar.gz`;
const url = `https://github.com/WiseLibs/better-sqlite3/releases/download/v${version}/${file}`;
const cacheDir = join(process.env.npm_config_cache || join(homedir(), '.npm'), '_prebuilds');
const cached = join(cacheDir, `${createHash('sha512').update(url).digest('hex').slice(0, 6)}-${file}`);
if (existsSync(cached)) process.exit(0);

mkdirSync(cacheDir, { recursive: true });
const partial = `${cached}.${process.pid}.tmp`;
execFileSync('tar', ['-czf', partial, '-C', pkgDir, 'build/Release/better_sqlite3.node']);
renameSync(partial, cached);
console.log(`kept the compiled better-sqlite3 addon for the next install: ${cached}`);
