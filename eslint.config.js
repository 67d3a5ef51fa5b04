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
    // Workflow code runs in Temporal's deterministic sandbox: no I/O, no Node built-ins, no SDKs that do I/O.
    files: ['src/workflows/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            { group: ['node:*'], message: 'Workflow code may not import Node built-ins.' },
            {
              group: ['openai', 'openai/*', '@modelcontextprotocol/*'],
              allowTypeImports: true,
              message: 'Workflow code may not do I/O: call an activity instead.',
            },
            {
              group: ['../activities', '../activities/*', '../mcp', '../mcp/*'],
              allowTypeImports: true,
              message: 'Workflows import activities as types only.',
            },
            {
              group: ['../servers', '../servers/*', '../client', '../client/*', '../streaming', '../streaming/*'],
              message: 'Workflow code imports only src/workflows and src/shared: the rest does I/O.',
            },
            cliOnly,
          ],
          paths: ['fs', 'path', 'child_process', 'crypto', 'http', 'https', 'net', 'os'].map((name) => ({
            name,
            message: 'Workflow code may not import Node built-ins.',
          })),
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
