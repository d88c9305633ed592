// `npm run build`, after tsc: the `rest` binary (dist/cli/main.js) rebuilt by esbuild from
// cli/main.ts as one bundle, so that a command starts fast (docs/cli.md). Unbundled, chevrotain's ESM
// build alone loads some 600 lodash-es modules; bundled, they are one file. Each handler that a
// command definition (cli/commands/*) loads with import() stays its own chunk under
// dist/cli/chunks/, loaded when its command runs. The library (dist/index.js) and the rest of dist/ stay tsc's output.
//
// Bundled: the pure-JavaScript packages, the server's included (express, pino, jose, and the pg and
// mysql2 drivers, each in the chunk of its adapter, loaded only for its database): resolving and
// compiling express's hundred-odd files one by one cost a server start some 100–150 ms of its
// 650–800 ms of CPU (docs/performance.md). What stays a package loaded from node_modules:
// native addons (better-sqlite3, bcrypt), postgres-migrations (it finds files of its own, and is
// given rest's pg client), and pg's optional pg-native, which rest never asks for. pino's
// transports, which start workers from files, are not used (runtime/logger.ts writes to a
// destination). dist/cli/ is as deep as dist/runtime/auth/, so runtime/auth/pg-migrations.ts finds
// sql/ from a chunk as it does from tsc's output.

import { readFileSync, realpathSync, rmSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build, type Plugin } from 'esbuild';

const BUNDLED: readonly string[] = ['chevrotain', 'yargs', 'yaml', 'express', 'pino', 'jose', 'pg', 'mysql2'];
/** Optional packages that bundled ones require only when asked to (never by rest). */
const NEVER_LOADED: readonly string[] = ['pg-native'];

/** The dependencies esbuild leaves as imports: all but the bundled ones. */
export function externalPackages(dependencies: Readonly<Record<string, string>>): string[] {
  return Object.keys(dependencies).filter((name) => !BUNDLED.includes(name));
}

// pg asks, when it is loaded, whether it runs in a Cloudflare Worker: on a Node.js without a global
// `navigator` (20) it reads the global `Response`, which makes Node load its fetch implementation
// (undici, http2) for nothing: some 70 ms of CPU of every start that loads pg. rest runs on
// Node.js only, so the bundled pg is told so; the build fails if pg's check is no longer there as
// written (then look again at what pg does).
const PG_STREAM = /[\\/]node_modules[\\/]pg[\\/]lib[\\/]stream\.js$/;
const PG_CLOUDFLARE_CHECK = 'function isCloudflareRuntime() {';

/** pg/lib/stream.js with its Cloudflare check answering false at once. */
export function nodeOnlyPgStream(source: string): string {
  if (!source.includes(PG_CLOUDFLARE_CHECK)) {
    throw new Error(`pg/lib/stream.js no longer has '${PG_CLOUDFLARE_CHECK}': see scripts/build-bundle.ts`);
  }
  return source.replace(
    PG_CLOUDFLARE_CHECK,
    `${PG_CLOUDFLARE_CHECK}\n  return false; // rest runs on Node.js (scripts/build-bundle.ts)`,
  );
}

const pgOnNode: Plugin = {
  name: 'pg-on-node',
  setup(b) {
    b.onLoad({ filter: PG_STREAM }, (args) => ({
      contents: nodeOnlyPgStream(readFileSync(args.path, 'utf8')),
      loader: 'js',
    }));
  },
};

// Packages that other bundled packages load at start-up for what most runs never use, each given
// to its importers as functions that load the package itself (bundled, initialised on that first
// call) when first called:
// - string-width: yargs' help layout (cliui, wrap-ansi) measures text with it, and its module
//   builds an Intl.Segmenter and Unicode-property regular expressions (\p{RGI_Emoji}) when loaded —
//   three copies in the bundle, some 40 ms of CPU at every start, for help that most commands never
//   print;
// - body-parser: express exposes its parsers (express.json, …); rest reads bodies itself
//   (runtime/http/read-json-body.ts).
// What each importer takes from the package is listed; the test of the built binary
// (test/unit/cli/build-bundle.test.ts) proves what is then loaded, and when.
export const LAZY_PACKAGES: Readonly<Record<string, readonly string[]>> = {
  'string-width': ['default'],
  'body-parser': ['json', 'raw', 'text', 'urlencoded'],
};
const LAZY = 'lazy-package';

/** The module an importer of `name` is given: each export a function that loads `name` first. */
export function lazyPackageSource(name: string, exports: readonly string[]): string {
  const load = `let loaded;\nconst load = () => (loaded ??= require(${JSON.stringify(name)}));\n`;
  return (
    load +
    exports
      .map((e) =>
        e === 'default'
          ? 'export default (...args) => load().default(...args);\n'
          : `export const ${e} = (...args) => load().${e}(...args);\n`,
      )
      .join('')
  );
}

const lazyPackages = (root: string): Plugin => ({
  name: LAZY,
  setup(b) {
    const names = Object.keys(LAZY_PACKAGES).map((n) => n.replace(/[-/]/g, '\\$&'));
    b.onResolve({ filter: new RegExp(`^(${names.join('|')})$`) }, (args) =>
      args.namespace === LAZY ? undefined : { path: args.path, namespace: LAZY },
    );
    b.onLoad({ filter: /.*/, namespace: LAZY }, (args) => ({
      contents: lazyPackageSource(args.path, LAZY_PACKAGES[args.path] ?? []),
      loader: 'js',
      resolveDir: root,
    }));
  },
});

async function bundle(root: string): Promise<void> {
  const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as {
    dependencies: Record<string, string>;
  };
  const outdir = join(root, 'dist/cli');
  rmSync(join(outdir, 'chunks'), { recursive: true, force: true });
  await build({
    absWorkingDir: root,
    entryPoints: ['cli/main.ts'],
    tsconfig: 'tsconfig.build.json',
    bundle: true,
    splitting: true,
    format: 'esm',
    platform: 'node',
    target: 'node20',
    outdir,
    chunkNames: 'chunks/[name]-[hash]',
    allowOverwrite: true,
    sourcemap: true,
    external: [...externalPackages(pkg.dependencies), ...NEVER_LOADED],
    // yaml is CommonJS and requires node's modules: its bundled require() is node's own.
    banner: {
      js: "import { createRequire as __bundleRequire } from 'node:module'; const require = __bundleRequire(import.meta.url);",
    },
    plugins: [pgOnNode, lazyPackages(root)],
    logLevel: 'warning',
  });
}

// Run as a script by `npm run build` (compiled by scripts/tsconfig.json, outside dist/ so that it
// is not published), which runs it from the repository's root. Compared as real paths: when
// node_modules is a symbolic link (a git worktree sharing another's), the script's own URL is
// the link's target, and a plain comparison silently skipped the bundle.
if (
  process.argv[1] !== undefined &&
  realpathSync(resolve(process.argv[1])) === realpathSync(fileURLToPath(import.meta.url))
) {
  await bundle(process.cwd());
}
