import { setTimeout as sleep } from 'node:timers/promises';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { DurableAgentClient } from '../../src/client/index.js';
import { MAX_RETRY_DELAY_MS } from '../../src/client/grpc-retry.js';
import { loadConfig } from '../../src/config/index.js';
import { createLocalEnvironment } from '../../src/testing/environment.js';

let env: TestWorkflowEnvironment | undefined;
const uncaught: unknown[] = [];
const onUncaught = (error: unknown) => uncaught.push(error);

beforeAll(async () => {
  env = await createLocalEnvironment();
  process.on('uncaughtException', onUncaught);
});

afterAll(async () => {
  process.off('uncaughtException', onUncaught);
  await env?.teardown();
});

it('DurableAgentClient.connect: a call made under a signal that is already aborted is not sent', async () => {
  const agent = await DurableAgentClient.connect({
    temporal: { ...loadConfig({}).temporal, address: env!.address },
    taskQueue: 'grpc-retry',
  });
  try {
    const service = agent.client.workflowService;
    // The same call under a live signal is answered: the refusal below is the signal's doing.
    await expect(
      agent.client.withAbortSignal(new AbortController().signal, () => service.getSystemInfo({})),
    ).resolves.toBeDefined();
    // The connection cancels a call when its signal fires, never one made after it fired: a long poll made so ran to its end.
    const outcome = await agent.client
      .withAbortSignal(AbortSignal.abort(), () => service.getSystemInfo({}))
      .then(
        () => 'answered',
        (error: unknown) => error,
      );
    expect(outcome).toBeInstanceOf(Error);
    expect(String(outcome)).toMatch(/cancel/i);
  } finally {
    await agent.close();
  }
});

it('DurableAgentClient.connect: a call cancelled while its retries wait settles at once, and nothing throws after close', async () => {
  const agent = await DurableAgentClient.connect({
    temporal: { ...loadConfig({}).temporal, address: env!.address },
    taskQueue: 'grpc-retry',
  });
  // The cluster goes away: every call is UNAVAILABLE and retried (for about 20 s).
  await env!.teardown();
  env = undefined;
  const controller = new AbortController();
  const call = agent.client.withAbortSignal(controller.signal, () =>
    agent.client.workflow.getHandle('conversation-gone').describe(),
  );
  const settled = call.then(
    () => 'answered',
    (error: unknown) => error,
  );
  // Long enough for a few attempts, so the cancellation finds the call between two of them.
  await sleep(700);
  controller.abort();
  // The bound only keeps a call that never stops (the SDK's own interceptor retries for 20 s more) from hanging.
  const outcome = await Promise.race([settled, sleep(5_000).then(() => 'still retrying')]);
  expect(outcome).toBeInstanceOf(Error);
  expect(String((outcome as Error).cause ?? outcome)).toMatch(/cancel/i);

  // A retry due after the connection closed would throw "Channel has been shut down" from a timer.
  await agent.close();
  await sleep(MAX_RETRY_DELAY_MS * 3);
  expect(uncaught).toEqual([]);
});

it('createLocalEnvironment: a call still retried at teardown fails, and nothing throws after', async () => {
  const own = await createLocalEnvironment();
  // A long poll nothing answers: the close event of a run no worker takes.
  const handle = await own.client.workflow.start('neverRun', {
    taskQueue: 'no-worker-here',
    workflowId: `grpc-retry-teardown-${Date.now()}`,
  });
  const longPoll = own.client.workflowService
    .getWorkflowExecutionHistory({
      namespace: 'default',
      execution: { workflowId: handle.workflowId, runId: handle.firstExecutionRunId },
      waitNewEvent: true,
      historyEventFilterType: 2, // the close event only
    })
    .then(
      () => 'answered',
      (error: unknown) => error,
    );
  // Teardown closes the connection, then stops the server, which drops the long poll: a retry falls due after close.
  await sleep(200);
  await own.teardown();
  // The bound only keeps a call that never settles (the SDK's interceptor throws from its timer instead) from hanging.
  const outcome = await Promise.race([longPoll, sleep(5_000).then(() => 'still retrying')]);
  expect(outcome).toBeInstanceOf(Error);
  expect(String(outcome)).toMatch(/Not sent again: Channel has been shut down/);
  await sleep(MAX_RETRY_DELAY_MS * 3);
  expect(uncaught).toEqual([]);
});
