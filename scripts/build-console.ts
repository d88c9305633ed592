// `npm run build`, after tsc: the policy console (docs/console.md) from ui/ — Preact and the policy
// grammar bundled by esbuild into dist/console/assets/ under names that carry a hash of their
// content (the policy editor and the grammar in a chunk of their own, fetched when the editor is
// first opened), and dist/console/index.html that loads them. Nothing in the page comes from
// another host.

import { mkdirSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { basename, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

/** The page: its own script and stylesheet, nothing else. */
export function indexHtml(script: string, stylesheet: string): string {
  return `<!doctype html>
<html lang="en">
  <head>
    <meta charset="utf-8" />
    <meta name="viewport" content="width=device-width, initial-scale=1" />
    <title>rest console</title>
    <link rel="stylesheet" href="/_/assets/${stylesheet}" />
    <script type="module" src="/_/assets/${script}"></script>
  </head>
  <body>
    <div id="app"></div>
  </body>
</html>
`;
}

async function bundleConsole(root: string): Promise<void> {
  const outdir = join(root, 'dist/console');
  rmSync(outdir, { recursive: true, force: true });
  mkdirSync(join(outdir, 'assets'), { recursive: true });
  const result = await build({
    absWorkingDir: root,
    entryPoints: ['ui/main.tsx', 'ui/console.css'],
    splitting: true,
    chunkNames: 'chunk-[hash]',
    tsconfig: 'ui/tsconfig.json',
    bundle: true,
    minify: true,
    format: 'esm',
    platform: 'browser',
    target: 'es2022',
    outdir: join(outdir, 'assets'),
    entryNames: '[name]-[hash]',
    jsx: 'automatic',
    jsxImportSource: 'preact',
    metafile: true,
    legalComments: 'none',
    logLevel: 'warning',
  });
  // The page loads the entry; the chunks it imports (the policy editor and the grammar among them)
  // are fetched by the browser from the same directory, the editor's only when first opened.
  const outputs = Object.entries(result.metafile.outputs);
  const named = (entry: string): string | undefined => {
    const found = outputs.find(([, o]) => o.entryPoint === entry);
    return found === undefined ? undefined : basename(found[0]);
  };
  const script = named('ui/main.tsx');
  const stylesheet = outputs.map(([p]) => basename(p)).find((n) => n.endsWith('.css'));
  if (script === undefined || stylesheet === undefined)
    throw new Error('the console bundle is missing a file');
  writeFileSync(join(outdir, 'index.html'), indexHtml(script, stylesheet));
}

// Run as a script by `npm run build` from the repository's root; node_modules may be a link, so
// the script's path is compared as the file it is.
if (
  process.argv[1] !== undefined &&
  realpathSync(resolve(process.argv[1])) === fileURLToPath(import.meta.url)
) {
  await bundleConsole(process.cwd());
}
