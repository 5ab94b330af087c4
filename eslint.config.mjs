import js from '@eslint/js';
import simpleImportSort from 'eslint-plugin-simple-import-sort';
import globals from 'globals';
import tseslint from 'typescript-eslint';

/**
 * A rejection handler that drops its error unseen: `.catch(() => undefined)`, `.catch((_e) => [])`, `.then(ok, () =>
 * false)`. Nothing tells the next engineer whether it absorbs an expected case or a bug: shared/ignore.ts has handlers
 * that say which (`ifAbsent(fallback)`, `ignore('why')`), or the handler does something with the error.
 */
const SILENT_REJECTION_MESSAGE =
  "Say which failure this handler expects: .catch(ifAbsent(fallback)) or .catch(ignore('why')) from shared/ignore.ts, or use the error.";
const silentRejection = (call, arg) => [
  {
    selector: `CallExpression[callee.property.name='${call}'][arguments.${arg}.params.length=0]`,
    message: SILENT_REJECTION_MESSAGE,
  },
  {
    selector: `CallExpression[callee.property.name='${call}'][arguments.${arg}.params.0.name=/^_/]`,
    message: SILENT_REJECTION_MESSAGE,
  },
];

export default tseslint.config(
  { ignores: ['node_modules/**', '.data/**', 'coverage/**', 'web/dist/**', '.artifacts/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    files: ['**/*.ts', '**/*.tsx'],
    languageOptions: { parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname } },
    plugins: { 'simple-import-sort': simpleImportSort },
    rules: {
      // A forgotten await on a Temporal or MongoDB call is a bug, not a style choice.
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': ['error', { checksVoidReturn: { arguments: false } }],
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      // Packages, then our own top-level folders by alias (tsconfig.json "paths"), then the folder's own files.
      'simple-import-sort/imports': [
        'error',
        {
          groups: [
            ['^\\u0000'],
            ['^node:'],
            ['^@?\\w'],
            ['^@(activities|api|bench|cli|examples|scripts|shared|test|worker|workflows)/'],
            ['^\\.'],
          ],
        },
      ],
      'simple-import-sort/exports': 'error',
      // A catch that does nothing says why in a comment (the expected case it absorbs), or the next engineer cannot
      // tell an expected case from a swallowed bug; a comment makes the block non-empty for this rule.
      'no-empty': ['error', { allowEmptyCatch: false }],
    },
  },
  {
    // Where every silent failure has been given its reason; other folders join as theirs are.
    files: [
      'api/**/*.ts',
      'shared/**/*.ts',
      'scripts/**/*.ts',
      'cli/**/*.ts',
      'activities/**/*.ts',
      'workflows/**/*.ts',
      'worker/**/*.ts',
    ],
    ignores: ['shared/ai/**'],
    rules: { 'no-restricted-syntax': ['error', ...silentRejection('catch', 0), ...silentRejection('then', 1)] },
  },
  {
    // Workflow code is replayed deterministically in Temporal's sandbox: no Node built-ins, no I/O.
    files: ['workflows/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              group: ['node:*', 'fs', 'path', 'http', 'https', 'net', 'crypto', 'child_process', 'os'],
              message: 'Workflows must stay deterministic: no Node built-ins.',
            },
            {
              // The top-level activities/ (at any depth of workflows/), not a workflow's own activities.ts.
              regex: '^((\\.\\./)+|@)activities(/|$)',
              allowTypeImports: true,
              message: 'Import activities as types only (proxyActivities).',
            },
          ],
        },
      ],
    },
  },
  {
    // Nothing but the worker's bundle entry reaches into workflow code: what the api and the activities need of a
    // workflow (its type name, ID scheme, signals, updates, queries, input and output) is its contract in
    // shared/contracts/ (docs/architecture.md, "Layers and where code goes").
    files: ['api/**/*.ts', 'activities/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              regex: '^((\\.\\./)+|@)workflows(/|$)',
              message: "Import the workflow's contract from shared/contracts/ instead of workflow code.",
            },
          ],
        },
      ],
    },
  },
  {
    files: ['**/*.cjs', '**/*.js', '**/*.mjs'],
    languageOptions: { globals: globals.node, sourceType: 'commonjs' },
    rules: { '@typescript-eslint/no-require-imports': 'off' },
  },
);
