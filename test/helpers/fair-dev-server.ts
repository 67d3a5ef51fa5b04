import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { createLocalEnvironment } from '../../src/testing/environment.js';
import { dynamicConfigFlags } from '../../src/temporal-servers/dynamic-config.js';

/**
 * A dev server with Task Queue Fairness on, as under `durable-agent dev`, and one partition per task queue: the order
 * (and the rate limit) of one queue is what a test sees, not a share of it.
 */
export function createFairDevServer(): Promise<TestWorkflowEnvironment> {
  return createLocalEnvironment({
    extraArgs: [
      ...dynamicConfigFlags({ 'matching.enableFairness': true }),
      '--dynamic-config-value',
      'matching.numTaskqueueReadPartitions=1',
      '--dynamic-config-value',
      'matching.numTaskqueueWritePartitions=1',
    ],
  });
}
