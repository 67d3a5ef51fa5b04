import { setTimeout as sleep } from 'node:timers/promises';
import { noopMetricMeter } from '@temporalio/common';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { DefaultLogger, type LogEntry } from '@temporalio/worker';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startConversationGauge } from '../../src/worker/telemetry/conversation-gauge.js';
import { createTimeSkippingEnvironment } from '../../src/testing/environment.js';
import { until } from '../reliability/helpers.js';

/**
 * A count that fails is logged and skipped, and counting goes on: the time-skipping server has no visibility, so every
 * `workflow.count()` it gets fails, as one against a cluster whose visibility is down would.
 */

let env: TestWorkflowEnvironment;

beforeAll(async () => {
  env = await createTimeSkippingEnvironment();
});

afterAll(async () => {
  await env?.teardown();
});

describe('conversation gauge', () => {
  it('conversations: a failed count is logged and tried again at the next interval, and stop ends the counting', async () => {
    const warnings: LogEntry[] = [];
    const gauge = startConversationGauge({
      client: env.client,
      meter: noopMetricMeter,
      intervalMs: 100,
      logger: new DefaultLogger('WARN', (entry) => warnings.push(entry)),
    });
    try {
      await until(() => warnings.length >= 2, 'two failed counts', { timeoutMs: 30_000 });
    } finally {
      await gauge.stop();
    }
    expect(warnings[0]!.message).toMatch(
      /Could not count conversations by status for durable_agent.conversations; trying again in 0.1 s/,
    );
    expect(warnings[0]!.meta).toMatchObject({ error: expect.any(String) });
    const afterStop = warnings.length;
    await sleep(500);
    expect(warnings).toHaveLength(afterStop);
  });
});
