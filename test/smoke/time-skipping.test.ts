import { fileURLToPath } from 'node:url';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { Worker } from '@temporalio/worker';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { createTimeSkippingEnvironment } from '../../src/testing/environment.js';
import { sleepThirtyDays } from './workflows.js';

const workflowsPath = fileURLToPath(new URL('./workflows.ts', import.meta.url));

let environment: TestWorkflowEnvironment | undefined;

beforeAll(async () => {
  environment = await createTimeSkippingEnvironment();
});

afterAll(async () => {
  await environment?.teardown();
});

test('time skipping: a workflow that sleeps for 30 days finishes in seconds', async () => {
  const env = environment!;
  const taskQueue = `smoke-time-skipping-${crypto.randomUUID()}`;
  const worker = await Worker.create({ connection: env.nativeConnection, taskQueue, workflowsPath });
  const startedAt = Date.now();
  const result = await worker.runUntil(
    env.client.workflow.execute(sleepThirtyDays, { taskQueue, workflowId: `sleep-${crypto.randomUUID()}` }),
  );
  expect(result).toBe('slept 30 days');
  expect(Date.now() - startedAt).toBeLessThan(30_000);
});
