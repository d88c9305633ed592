// The console's static files (docs/console.md): built by `npm run build` into dist/console/ —
// index.html and assets/ whose names carry a hash of their content — and read into memory once, on
// the first request for the console. An asset is cached by the browser for a year (its name changes
// with it); index.html is revalidated every time.

import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, extname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

export interface ConsoleFile {
  readonly bytes: Buffer;
  readonly type: string;
  readonly cacheControl: string;
}

export interface ConsoleAssets {
  /** The file at `name` (`index.html`, `assets/console-<hash>.js`), or undefined. */
  file(name: string): ConsoleFile | undefined;
}

const TYPES: Readonly<Record<string, string>> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.map': 'application/json; charset=utf-8',
  '.svg': 'image/svg+xml',
};

const IMMUTABLE = 'public, max-age=31536000, immutable';

/** dist/console of the package this module belongs to, found from its own location (source or bundle). */
export function consoleDirectory(from: string = fileURLToPath(import.meta.url)): string | undefined {
  let dir = dirname(from);
  for (;;) {
    if (existsSync(join(dir, 'package.json'))) {
      const built = join(dir, 'dist', 'console');
      return existsSync(join(built, 'index.html')) ? built : undefined;
    }
    const parent = dirname(dir);
    if (parent === dir) return undefined;
    dir = parent;
  }
}

function load(dir: string): ReadonlyMap<string, ConsoleFile> {
  const files = new Map<string, ConsoleFile>();
  const add = (name: string, cacheControl: string): void => {
    const type = TYPES[extname(name)];
    if (type !== undefined) files.set(name, { bytes: readFileSync(join(dir, name)), type, cacheControl });
  };
  add('index.html', 'no-cache');
  const assets = join(dir, 'assets');
  if (existsSync(assets)) for (const name of readdirSync(assets)) add(`assets/${name}`, IMMUTABLE);
  return files;
}

/** The built console, read when first asked for; an empty set when the package was not built. */
export function consoleAssets(dir: string | undefined = consoleDirectory()): ConsoleAssets {
  let files: ReadonlyMap<string, ConsoleFile> | undefined;
  return {
    file(name) {
      files ??= dir === undefined ? new Map() : load(dir);
      return files.get(name);
    },
  };
}
