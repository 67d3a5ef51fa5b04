import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import { noImportCycle } from './scripts/eslint/no-import-cycle.mjs';

/** Layers that point one way: which folders of src/ a folder may not import from (each message says why). */
const cliOnly = { group: ['**/cli', '**/cli/*', '**/cli/**'], message: 'Only src/cli imports the CLI.' };

export default tseslint.config(
  { ignores: ['dist/', 'node_modules/', 'coverage/', '**/*.js', '**/*.mjs', '**/*.cjs'] },
  js.configs.recommended,
  ...tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': ['error', { checksVoidReturn: { arguments: false } }],
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/require-await': 'off',
      '@typescript-eslint/restrict-template-expressions': ['error', { allowNumber: true, allowBoolean: true }],
      'object-shorthand': ['error', 'always'],
    },
  },
  {
    // The embedded example's own tsconfig.json builds it where it is installed on its own; here it is checked with the
    // project's, whose paths resolve durable-agent to these sources.
    files: ['examples/embedded/**/*.ts'],
    languageOptions: {
      parserOptions: { projectService: false, project: './tsconfig.json', tsconfigRootDir: import.meta.dirname },
    },
  },
  {
    // No import cycles anywhere in src/, type-only imports included.
    files: ['src/**/*.ts'],
    plugins: { 'durable-agent': { rules: { 'no-import-cycle': noImportCycle } } },
    rules: { 'durable-agent/no-import-cycle': 'error' },
  },
  {
    files: ['src/**/*.ts'],
    ignores: ['src/cli/**'],
    rules: { 'no-restricted-imports': ['error', { patterns: [cliOnly] }] },
  },
  {
    // Workflow code runs in Temporal's deterministic sandbox: an allow-list of what it may load at run time. Anything
    // else (Node built-ins, SDKs that do I/O, the worker, the client, the CLI) only as `import type`.
    files: ['src/workflows/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              // Everything but the allowed: @temporalio/workflow and /common, ajv, this folder, src/shared, the
              // marker the worker's codec hands the workflow for a payload it could not decrypt (plain data), and the
              // OpenTelemetry API (no I/O: a no-op, or the tracer Temporal's workflow interceptors register in the sandbox).
              regex: String.raw`^(?!(?:@temporalio/(?:workflow|common)|@opentelemetry/api|ajv|\./[^/]+|\.\./shared/[^/]+|\.\./codec/undecodable\.js)$)`,
              allowTypeImports: true,
              message:
                'Workflow code loads only @temporalio/workflow, @temporalio/common, @opentelemetry/api, ajv, src/workflows ' +
                'and src/shared ' +
                '(deterministic, no I/O); import anything else as a type, or call an activity.',
            },
            cliOnly,
          ],
        },
      ],
    },
  },
  {
    files: ['test/**/*.ts'],
    rules: {
      '@typescript-eslint/no-unsafe-assignment': 'off',
      '@typescript-eslint/no-unsafe-member-access': 'off',
      '@typescript-eslint/no-non-null-assertion': 'off',
    },
  },
);
