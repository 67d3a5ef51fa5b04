import { setTimeout as sleep } from 'node:timers/promises';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { SubscriptionCalls } from '../../src/client/subscription-calls.js';
import { createLocalEnvironment } from '../../src/testing/environment.js';

/*
 * A subscription's calls end with it. The Temporal connection cancels a call only when its signal fires after the
 * call was made; a call that first prepares its request (as an update encodes its input) is made a moment later, so a
 * subscription that ended in that moment would leave a long poll running to its end and its viewer waiting for it.
 */

let env: TestWorkflowEnvironment;

beforeAll(async () => {
  env = await createLocalEnvironment();
});

afterAll(async () => {
  await env?.teardown();
});

it('a subscription call whose subscription ends before its request is made is let go at once', async () => {
  // A run no worker takes: a long poll for its close event waits until the server's long-poll timeout.
  const workflowId = `subscription-calls-${Date.now()}`;
  const handle = await env.client.workflow.start('neverRun', { taskQueue: 'no-worker-here', workflowId });
  const controller = new AbortController();
  const calls = new SubscriptionCalls(env.client, controller.signal);
  try {
    const longPoll = calls.run(async () => {
      // The subscription ends while the call prepares its request.
      controller.abort();
      await sleep(0);
      return await env.client.workflowService.getWorkflowExecutionHistory({
        namespace: 'default',
        execution: { workflowId, runId: handle.firstExecutionRunId },
        waitNewEvent: true,
        historyEventFilterType: 2, // the close event only
      });
    });
    const outcome = await Promise.race([
      longPoll.then(
        () => 'answered',
        (error: unknown) => error,
      ),
      // The bound only keeps a call that is not let go (it would wait for the server's long-poll timeout) from hanging.
      sleep(5_000).then(() => 'still polling'),
    ]);
    expect(outcome).toBeInstanceOf(Error);
    expect(String(outcome)).toMatch(/cancel/i);
    // And once ended, nothing is sent.
    let sent = false;
    await expect(calls.run(async () => (sent = true))).rejects.toThrow(/cancel/i);
    expect(sent).toBe(false);
  } finally {
    await calls.close();
    await handle.terminate();
  }
});
