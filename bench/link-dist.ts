// `npm run bench:build`, after tsc: links dist/bench to dist-bench/bench, for harnesses that look
// for the bench's modules beside the build they measure (the peer harness imports
// `$REST_DIR/dist/bench/pg-proxy.js`). A link, not a copy: node resolves it to dist-bench/, so the
// bench's own imports stay there. `npm run build` neither needs nor makes it, and `npm pack` leaves
// links out of the published package.

import { lstatSync, mkdirSync, readlinkSync, rmSync, symlinkSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const benchOut = dirname(fileURLToPath(import.meta.url));
const repoRoot = resolve(benchOut, '..', '..');
const link = join(repoRoot, 'dist', 'bench');
const target = relative(dirname(link), benchOut);

function currentTarget(): string | undefined {
  try {
    return lstatSync(link).isSymbolicLink() ? readlinkSync(link) : '(not a link)';
  } catch {
    return undefined;
  }
}

const current = currentTarget();
if (current !== target) {
  if (current !== undefined) rmSync(link, { recursive: true, force: true });
  mkdirSync(dirname(link), { recursive: true });
  symlinkSync(target, link, 'dir');
}
