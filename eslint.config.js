import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import js from '@eslint/js';
import globals from 'globals';
import tseslint from 'typescript-eslint';

// The code map (docs/architecture.md), written once as data and enforced below: each list runs
// from the top floor to the bottom, and a file never imports a room listed before its own (nor a
// sibling on its own floor). Type-only imports count too, and so does import('…')
// (importExpressions below); typeof import('…') is not written (consistent-type-imports).

/** The layers of the repository; index.ts and start-server.ts (the library API) stand above them. */
const LAYERS = ['cli', 'runtime', 'compiler', 'grammar', 'errors'];

/** The rooms of runtime/; RUNTIME_VOCABULARY is below every room. */
const RUNTIME_ROOMS = [
  ['policy-test'],
  ['server'],
  ['console'],
  ['explain', 'http'],
  ['rls', 'handlers', 'openapi'],
  ['policies', 'plan'],
  ['enforce'],
  ['auth'],
  ['db', 'request'],
];

/** The loose files of runtime/: the vocabulary every room uses; they import no room. */
const RUNTIME_VOCABULARY = ['config.ts', 'logger.ts'];

/** The rooms of compiler/: files and folders, so that no two of them import each other. */
const COMPILER_ROOMS = [
  ['index.ts'],
  ['rls'],
  ['policy-set.ts', 'escalations.ts'],
  ['column-rules.ts'],
  ['columns.ts'],
  ['sql', 'evaluate.ts', 'cycles.ts'],
  ['analyze.ts', 'resolve.ts'],
  ['scope.ts', 'semantics.ts'],
  ['types.ts'],
];

/** The rooms of cli/: a command's definition imports its handler only as a type (it loads it with import()). */
const CLI_ROOMS = [
  ['main.ts'],
  ['commands'],
  ['handlers'],
  ['context.ts', 'output'],
  ['config', 'skip-help-cache.ts', 'exit-status.ts'],
];

const LAYER_MESSAGE =
  'Data flows one way: errors ← grammar ← compiler ← runtime ← cli (docs/architecture.md); never import a layer above.';
const ROOM_MESSAGE =
  'This room sits below the one it imports (COMPILER_ROOMS / RUNTIME_ROOMS / CLI_ROOMS in eslint.config.js).';

/** Every folder and .ts file of `parent` has its floor: a new room is placed before it is linted. */
function assertPlaced(parent, floors, loose = []) {
  const placed = new Set([...floors.flat(), ...loose]);
  const unplaced = readdirSync(join(import.meta.dirname, parent), { withFileTypes: true })
    .filter((e) => (e.isDirectory() || e.name.endsWith('.ts')) && !placed.has(e.name))
    .map((e) => e.name);
  if (unplaced.length > 0) {
    throw new Error(`eslint.config.js: place ${parent}/${unplaced.join(', ')} on a floor of its room list`);
  }
}
assertPlaced('compiler', COMPILER_ROOMS);
assertPlaced('runtime', RUNTIME_ROOMS, RUNTIME_VOCABULARY);
assertPlaced('cli', CLI_ROOMS);

/**
 * A `group` glob of no-restricted-imports, as written in this file, as a RegExp over an import's
 * source; as in .gitignore, a glob without a slash also matches a folder's contents (`pg/lib/…`).
 */
function globToRegExp(glob) {
  const body = glob
    .replace(/[.+?^${}()|[\]\\]/g, '\\$&')
    .replace(/\*\*\/|\/\*\*|\*/g, (m) => ({ '**/': '(?:.*/)?', '/**': '/.+', '*': '[^/]*' })[m]);
  return new RegExp(glob.includes('/') ? `^${body}$` : `^(?:.*/)?${body}(?:/.*)?$`);
}

/**
 * no-restricted-imports for what it does not see, `import('…')`, checked against the same
 * patterns' globs: a lazy import cannot point up either.
 */
const importExpressions = {
  meta: {
    type: 'problem',
    schema: [{ type: 'object', properties: { patterns: { type: 'array' } }, additionalProperties: false }],
  },
  create(context) {
    const patterns = context.options[0].patterns.map(({ group, message }) => ({
      sources: group.map(globToRegExp),
      message,
    }));
    return {
      ImportExpression(node) {
        const source = node.source.type === 'Literal' ? node.source.value : undefined;
        if (typeof source !== 'string') return;
        const hit = patterns.find((p) => p.sources.some((re) => re.test(source)));
        if (hit === undefined) return;
        context.report({
          node,
          message: `'${source}' import is restricted from being used by a pattern. ${hit.message}`,
        });
      },
    };
  },
};

/** Two names, so that a file's layer rule and its room rule both apply (a later block's rule replaces an earlier one's). */
const importsPlugin = {
  rules: { 'layer-import-expressions': importExpressions, 'room-import-expressions': importExpressions },
};

/** The rooms listed before `room` (and its siblings), as paths relative to a file `depth` folders inside the parent. */
function roomsAbove(floors, room, depth) {
  const at = floors.findIndex((floor) => floor.includes(room));
  const up = '../'.repeat(depth);
  return floors
    .slice(0, at + 1)
    .flat()
    .filter((r) => r !== room)
    .map((r) => (r.endsWith('.ts') ? `${up}${r.slice(0, -3)}.js` : `${up}${r}/**`));
}

/**
 * One rule block per room and nesting depth: what files of `parent/room` may not import.
 * `options[room]` adds to the room's pattern; `more[room]` adds patterns of its own.
 */
function roomRules(parent, floors, options = {}, more = {}) {
  return floors.flat().flatMap((room) => {
    const depths = room.endsWith('.ts') ? [0] : [1, 2, 3];
    return depths.flatMap((depth) => {
      const above = roomsAbove(floors, room, depth).map((p) => (depth === 0 ? `./${p}` : p));
      const aboveRooms = above.length === 0 ? [] : [{ group: above, message: ROOM_MESSAGE }];
      const patterns = [
        ...aboveRooms.map((p) => ({ ...p, ...(options[room] ?? {}) })),
        ...(more[room] ?? []),
      ];
      if (patterns.length === 0) return [];
      const files = room.endsWith('.ts')
        ? [`${parent}/${room}`]
        : [`${parent}/${room}/${'*/'.repeat(depth - 1)}*.ts`];
      return [
        {
          files,
          rules: {
            '@typescript-eslint/no-restricted-imports': ['error', { patterns }],
            ...(aboveRooms.length === 0
              ? {}
              : { 'imports/room-import-expressions': ['error', { patterns: aboveRooms }] }),
          },
        },
      ];
    });
  });
}

/** What `layer` may not import: the layers above it, and what is not product code. */
const notBelow = (layer) => ({
  group: [
    ...LAYERS.slice(0, LAYERS.indexOf(layer)).map((above) => `**/${above}/**`),
    '**/bench/**',
    '**/scripts/**',
    '**/test/**',
  ],
  message: LAYER_MESSAGE,
});

/** A block forbidding `patterns` to files, in import declarations and in import(). */
const layerBlock = (files, patterns) => ({
  files,
  rules: {
    'no-restricted-imports': ['error', { patterns }],
    'imports/layer-import-expressions': ['error', { patterns }],
  },
});

const layerRules = LAYERS.map((layer) =>
  layerBlock(
    [`${layer}/**/*.ts`],
    [
      notBelow(layer),
      ...(layer === 'compiler' || layer === 'grammar'
        ? [
            {
              group: ['node:*', 'pg', 'mysql2*', 'better-sqlite3', 'express'],
              message: 'The compiler is pure: no I/O.',
            },
          ]
        : []),
    ],
  ),
);

const COMMANDS_STAY_LIGHT = [
  {
    group: ['../handlers/**'],
    allowTypeImports: true,
    message:
      "A command definition imports its handler's types only; it loads the handler with import() when it runs.",
  },
  {
    group: [
      '**/runtime/**',
      '**/grammar/**',
      '**/compiler/**',
      '!**/compiler/types.js',
      '**/config/load-config.js',
      '**/config/config-file.js',
      '**/output/**',
    ],
    allowTypeImports: true,
    message: 'Command definitions stay light: import the implementation in the handler with import().',
  },
  {
    group: [
      'chevrotain',
      'pg',
      'mysql2*',
      'better-sqlite3',
      'express',
      'pino',
      'bcrypt',
      'yaml',
      'jose',
      'postgres-migrations',
    ],
    allowTypeImports: true,
    message: 'Command definitions stay light: a package is loaded by the handler that uses it.',
  },
];

const VOCABULARY_PATTERNS = [{ group: ['./*/**'], message: ROOM_MESSAGE }];

const RUNTIME_DB =
  "runtime/db/<kind>/ is one database's driver: it imports the shared runtime/db/ files, never another database's.";

export default tseslint.config(
  {
    ignores: [
      'dist/**',
      'dist-bench/**',
      'node_modules/**',
      'coverage/**',
      '**/*.config.js',
      '**/*.config.ts',
    ],
  },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    // The peer harness: plain Node scripts.
    files: ['bench/peers/**/*.mjs'],
    languageOptions: { globals: globals.node },
  },
  {
    plugins: { imports: importsPlugin },
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/consistent-type-imports': 'error',
      'no-restricted-syntax': [
        'error',
        { selector: 'ExportDefaultDeclaration', message: 'Named exports only.' },
      ],
    },
  },
  {
    // Promises are awaited, returned or handed to something that handles their failure.
    files: ['**/*.ts', 'ui/**/*.tsx'],
    languageOptions: {
      parserOptions: {
        // One program per tsconfig, the first that holds the file (tsconfig.json holds all but
        // scripts/): eslint . takes some 10 s here, against 14 s with projectService, which
        // grows its programs file by file as an editor does.
        project: [
          './tsconfig.json',
          './scripts/tsconfig.json',
          './bench/tsconfig.json',
          './ui/tsconfig.json',
        ],
        tsconfigRootDir: import.meta.dirname,
      },
    },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': 'error',
      '@typescript-eslint/await-thenable': 'error',
    },
  },
  ...layerRules,
  // The console's page runs in the browser: the pure grammar and preact, nothing of the server
  // but the console API's shapes (types only, checked by ui/tsconfig.json without Node.js types).
  layerBlock(
    ['ui/**/*.ts', 'ui/**/*.tsx'],
    [
      {
        group: [
          // runtime/ but its console-types.js (a directory left out cannot let a file back in).
          '**/runtime/*',
          '!**/runtime/console',
          '**/runtime/console/*',
          '!**/runtime/console/console-types.js',
          '**/compiler/**',
          '**/cli/**',
          '**/bench/**',
          '**/scripts/**',
          '**/test/**',
          'node:*',
        ],
        message:
          'The console page (ui/) imports the grammar and preact only: it talks to the server over HTTP.',
      },
    ],
  ),
  ...roomRules('compiler', COMPILER_ROOMS),
  ...roomRules('runtime', RUNTIME_ROOMS),
  {
    // The vocabulary every room uses imports no room.
    files: RUNTIME_VOCABULARY.map((file) => `runtime/${file}`),
    rules: {
      '@typescript-eslint/no-restricted-imports': ['error', { patterns: VOCABULARY_PATTERNS }],
      'imports/room-import-expressions': ['error', { patterns: VOCABULARY_PATTERNS }],
    },
  },
  layerBlock(
    ['runtime/db/*/**/*.ts'],
    [{ group: ['../postgres/**', '../mysql/**', '../sqlite/**'], message: RUNTIME_DB }, notBelow('runtime')],
  ),
  // A command's definition (name, flags, help) is loaded by every run, --help included; what it
  // does lives in cli/handlers/, imported with import() when it runs (test/unit/cli/lazy-commands.test.ts).
  ...roomRules('cli', CLI_ROOMS, { commands: { allowTypeImports: true } }, { commands: COMMANDS_STAY_LIGHT }),
);
