import { ESLint, type Linter } from 'eslint';
import tseslint from 'typescript-eslint';
import { describe, expect, it } from 'vitest';

/**
 * The lint rule that keeps workflow code deterministic is an allow-list: a new import into src/workflows is refused
 * unless it is one of the few modules that may run in Temporal's sandbox, or a type.
 */

// By URL: the config is plain JavaScript, outside what the type checker reads.
const configUrl = new URL('../eslint.config.js', import.meta.url).href;
const config = ((await import(configUrl)) as { default: Linter.Config[] }).default;
const workflowRules = config.find((entry) =>
  entry.files?.some((pattern) => pattern === 'src/workflows/**/*.ts'),
)?.rules;

async function refused(source: string): Promise<boolean> {
  const eslint = new ESLint({
    overrideConfigFile: true,
    overrideConfig: [{ files: ['**/*.ts'], languageOptions: { parser: tseslint.parser }, rules: workflowRules }],
  });
  const [result] = await eslint.lintText(`${source}\nexport const used = [value];\n`, {
    filePath: 'src/workflows/probe.ts',
  });
  return result!.messages.some((message) => message.ruleId === 'no-restricted-imports');
}

describe('workflow imports: an allow-list', () => {
  it('the workflow folder has its own import rule', () => {
    expect(workflowRules?.['no-restricted-imports']).toBeDefined();
  });

  it.each([
    "import { condition as value } from '@temporalio/workflow';",
    "import { ApplicationFailure as value } from '@temporalio/common';",
    "import value from 'ajv';",
    "import { trace as value } from '@opentelemetry/api';",
    "import { runTurn as value } from './turn.js';",
    "import { digest as value } from '../shared/digest.js';",
    "import { firstUndecodable as value } from '../shared/undecodable.js';",
    "import type { Activities as value } from '../worker/activities/index.js';",
    "import type { default as value } from 'openai';",
  ])('allowed in workflow code: %s', async (source) => {
    expect(await refused(source)).toBe(false);
  });

  it.each([
    "import { readFileSync as value } from 'node:fs';",
    "import value from 'fs';",
    "import value from 'openai';",
    "import { Client as value } from '@modelcontextprotocol/client';",
    "import { McpPool as value } from '../worker/mcp/pool.js';",
    "import { createActivities as value } from '../worker/activities/index.js';",
    "import { DurableAgentClient as value } from '../client/index.js';",
    "import { EncryptionCodec as value } from '../codec/encryption-codec.js';",
    "import { Worker as value } from '@temporalio/worker';",
    "import { loadConfig as value } from '../config/index.js';",
    "import { Hono as value } from 'hono';",
    "import { BasicTracerProvider as value } from '@opentelemetry/sdk-trace-base';",
  ])('refused in workflow code: %s', async (source) => {
    expect(await refused(source)).toBe(true);
  });
});
