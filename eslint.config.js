import js from '@eslint/js';
import globals from 'globals';
import tseslint from 'typescript-eslint';

const RUNTIME_DB =
  'runtime/db/ is the bottom of the runtime: drivers, adapters and their errors; it imports only compiler/ and errors/ besides itself.';
/** What runtime/db/ may not import, written from a file `up` levels below runtime/. */
const runtimeDbRestricted = (up) => [
  ...['plan', 'request', 'handlers', 'http', 'enforce', 'policies', 'rls', 'auth'].map((folder) => `${up}${folder}/**`),
  `${up}*.js`,
  '**/cli/**',
  '**/bench/**',
  '**/test/**',
];

export default tseslint.config(
  { ignores: ['dist/**', 'dist-bench/**', 'node_modules/**', 'coverage/**', '**/*.config.js', '**/*.config.ts'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    // The peer harness: plain Node scripts.
    files: ['bench/peers/**/*.mjs'],
    languageOptions: { globals: globals.node },
  },
  {
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/consistent-type-imports': 'error',
      'no-restricted-syntax': ['error', { selector: 'ExportDefaultDeclaration', message: 'Named exports only.' }],
    },
  },
  {
    files: ['compiler/**/*.ts', 'grammar/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            { group: ['node:*', 'pg', 'mysql2*', 'better-sqlite3', 'express', '**/runtime/**', '**/cli/**'], message: 'The compiler is pure: no I/O, no runtime imports.' },
          ],
        },
      ],
    },
  },
  {
    // The code map (README): data flows grammar → compiler → runtime → HTTP/CLI, never back.
    files: ['errors/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        { patterns: [{ group: ['../*/**', '../*.js'], message: 'errors/ is the bottom layer: it imports nothing of the project.' }] },
      ],
    },
  },
  {
    files: ['runtime/**/*.ts'],
    ignores: ['runtime/db/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        { patterns: [{ group: ['**/cli/**', '**/bench/**', '**/test/**'], message: 'The runtime serves the CLI and HTTP; it never imports them.' }] },
      ],
    },
  },
  {
    files: ['runtime/db/*.ts'],
    rules: {
      'no-restricted-imports': ['error', { patterns: [{ group: runtimeDbRestricted('../'), message: RUNTIME_DB }] }],
    },
  },
  {
    // One folder per database (postgres/, mysql/, sqlite/): its adapter and its driver's errors.
    files: ['runtime/db/*/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            { group: runtimeDbRestricted('../../'), message: RUNTIME_DB },
            {
              group: ['../postgres/**', '../mysql/**', '../sqlite/**'],
              message: "A database's folder imports the shared runtime/db/ files, never another database's.",
            },
          ],
        },
      ],
    },
  },
  {
    // A command's definition (name, flags, help) is loaded by every run, --help included; what it
    // does lives in cli/handlers/, imported with import() when it runs (test/unit/cli/lazy-commands.test.ts).
    files: ['cli/commands/**/*.ts'],
    rules: {
      '@typescript-eslint/no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              group: ['**/runtime/**', '**/grammar/**', '**/compiler/**', '!**/compiler/types.js', '**/handlers/**', '**/config/load-config.js', '**/config/config-file.js', '**/output/**', '**/format/**'],
              allowTypeImports: true,
              message: 'Command definitions stay light: import the implementation in the handler with import().',
            },
            {
              group: ['chevrotain', 'pg', 'mysql2*', 'better-sqlite3', 'express', 'pino', 'bcrypt', 'yaml', 'jose', 'postgres-migrations'],
              allowTypeImports: true,
              message: 'Command definitions stay light: a package is loaded by the handler that uses it.',
            },
          ],
        },
      ],
    },
  },
);
