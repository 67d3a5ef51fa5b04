import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import { noImportCycle } from './scripts/eslint/no-import-cycle.mjs';

/**
 * The walls of src/: each folder is a layer, and a layer imports only the layers below it (docs/architecture.md,
 * "Where code runs"). Lowest first: `shared/` is what the workflow sandbox and Node both load; `workflows/` runs in the
 * sandbox; `node/` holds Node helpers; `codec/`, `config/` and `temporal-servers/` are the worker's and the client's
 * common ground; `client/` drives conversations, `worker/` runs them; `bridge/` and `testing/` are built on both; `cli/`
 * on everything. Type-only imports count too: the one exception, the workflow's `import type` of the activities it
 * schedules, is in the workflow rule below.
 */
const LAYERS = [
  ['shared', 'code the workflow sandbox can load: it imports only itself and @temporalio/common'],
  ['workflows', 'workflow code: deterministic, sandboxed'],
  ['node', 'Node helpers of no one side'],
  ['codec', 'payload encryption, shared by the client and the worker'],
  ['config', 'the configuration, read by the client and the worker'],
  ['temporal-servers', 'provisioning of the Temporal servers'],
  ['client', 'the client: it never loads worker code'],
  ['worker', 'the worker: it never loads the bridge, the testing kit or the CLI'],
  ['bridge', 'the HTTP bridge'],
  ['testing', 'the testing kit'],
  ['cli', 'the CLI'],
];
/** Siblings that are one layer: neither imports the other. */
const SIBLINGS = { bridge: ['testing'], testing: ['bridge'] };
const layerIndex = new Map(LAYERS.map(([name], index) => [name, index]));

/** The import patterns a layer may not use: every layer above it, and its siblings. */
function wallsOf(layer) {
  const above = LAYERS.slice(layerIndex.get(layer) + 1).map(([name]) => name);
  return [...new Set([...above, ...(SIBLINGS[layer] ?? [])])].map((name) => ({
    regex: String.raw`^(?:\.\./)+${name}/`,
    message: `src/${layer}/ (${LAYERS[layerIndex.get(layer)][1]}) does not import src/${name}/, a layer above it.`,
  }));
}

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
  ...LAYERS.filter(([layer]) => layer !== 'workflows').map(([layer]) => ({
    files: [`src/${layer}/**/*.ts`],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            ...wallsOf(layer),
            ...(layer === 'shared'
              ? [
                  {
                    regex: String.raw`^(?!(?:@temporalio/common|\./[^/]+)$)`,
                    message: 'src/shared/ imports only itself and @temporalio/common: the workflow sandbox loads it.',
                  },
                ]
              : []),
          ],
        },
      ],
    },
  })),
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
              // Everything but the allowed: @temporalio/workflow and /common, ajv, this folder, src/shared, and the
              // OpenTelemetry API (no I/O: a no-op, or the tracer Temporal's workflow interceptors register in the
              // sandbox).
              regex: String.raw`^(?!(?:@temporalio/(?:workflow|common)|@opentelemetry/api|ajv|\./[^/]+|\.\./shared/[^/]+)$)`,
              allowTypeImports: true,
              message:
                'Workflow code loads only @temporalio/workflow, @temporalio/common, @opentelemetry/api, ajv, src/workflows ' +
                'and src/shared (deterministic, no I/O); import anything else as a type, or call an activity.',
            },
            // The activities' types are the one import that runs up a wall (the workflow schedules them by type).
            ...wallsOf('workflows').map((wall) =>
              wall.regex.endsWith('worker/')
                ? { ...wall, regex: String.raw`^(?:\.\./)+worker/(?!activities/index\.js$)` }
                : wall,
            ),
          ],
        },
      ],
    },
  },
  {
    // Sizes, in lines of code (comments and blank lines do not count: a file never loses its explanations to a
    // count). A file past them holds more than one idea; split it where the ideas part, never at a line number.
    files: ['src/**/*.ts'],
    // Tables, not logic: the scripted model's request handling and the test MCP server's list of tools.
    ignores: ['src/testing/scripted-model/**', 'src/testing/mcp-test-server-tools.ts'],
    rules: {
      'max-lines': ['error', { max: 400, skipBlankLines: true, skipComments: true }],
      'max-lines-per-function': ['error', { max: 120, skipBlankLines: true, skipComments: true }],
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
