import { fileURLToPath } from 'node:url';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { Worker } from '@temporalio/worker';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { createLocalEnvironment } from '../../src/testing/environment.js';
import { greet } from './workflows.js';

const workflowsPath = fileURLToPath(new URL('./workflows.ts', import.meta.url));

let environment: TestWorkflowEnvironment | undefined;

beforeAll(async () => {
  environment = await createLocalEnvironment();
});

afterAll(async () => {
  await environment?.teardown();
});

test('dev server: a workflow run by a real Worker completes and shows up in client.workflow.list()', async () => {
  const env = environment!;
  expect(env.supportsTimeSkipping).toBe(false);
  const taskQueue = `smoke-dev-server-${crypto.randomUUID()}`;
  const workflowId = `greet-${crypto.randomUUID()}`;
  const worker = await Worker.create({ connection: env.nativeConnection, taskQueue, workflowsPath });
  const result = await worker.runUntil(env.client.workflow.execute(greet, { taskQueue, workflowId, args: ['Ada'] }));
  expect(result).toBe('Hello, Ada, from greet');

  // Visibility is eventually consistent, even on the dev server.
  await expect
    .poll(
      async () => {
        const listed = [];
        for await (const execution of env.client.workflow.list({ query: `WorkflowId = '${workflowId}'` })) {
          listed.push({ workflowId: execution.workflowId, status: execution.status.name });
        }
        return listed;
      },
      { timeout: 10_000, interval: 200 },
    )
    .toEqual([{ workflowId, status: 'COMPLETED' }]);
});
