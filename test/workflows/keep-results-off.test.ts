import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/index.js';
import { startTestAgent, type TestAgent } from '../../src/testing/agent.js';
import { createTimeSkippingEnvironment } from '../../src/testing/environment.js';

let env: TestWorkflowEnvironment;
const agents: TestAgent[] = [];

beforeAll(async () => {
  env = await createTimeSkippingEnvironment();
});

afterAll(async () => {
  await Promise.allSettled(agents.map((agent) => agent.close()));
  await env?.teardown();
});

/** An agent whose worker asks "does Temporal answer?" through a connection that counts the asking. */
async function countingAgent(keepResults: boolean) {
  const probes = { count: 0 };
  const { workflowService } = env.connection;
  const agent = await startTestAgent({
    env,
    script: [{ content: 'kept or not, answered' }],
    workerOptions: {
      keepFinished: keepResults ? undefined : false,
      workerConnection: {
        workflowService: {
          getSystemInfo: ((request) => {
            probes.count++;
            return workflowService.getSystemInfo(request);
          }) as typeof workflowService.getSystemInfo,
        },
      },
    },
  });
  agents.push(agent);
  return { agent, probes };
}

describe('kept results through outages, turned off', () => {
  it('DURABLE_AGENT_KEEP_RESULTS is on by default and false turns it off', () => {
    expect(loadConfig({}).keepResults).toBe(true);
    expect(loadConfig({ DURABLE_AGENT_KEEP_RESULTS: 'false' }).keepResults).toBe(false);
    expect(() => loadConfig({ DURABLE_AGENT_KEEP_RESULTS: 'sometimes' })).toThrow(/DURABLE_AGENT_KEEP_RESULTS/);
  });

  it('off, a turn runs with no probe of the server; on, the worker probes it', async () => {
    const off = await countingAgent(false);
    const result = await off.agent.ask('Hi');
    expect(result.answer).toBe('kept or not, answered');
    expect(off.probes.count).toBe(0);

    const on = await countingAgent(true);
    expect((await on.agent.ask('Hi')).answer).toBe('kept or not, answered');
    expect(on.probes.count).toBeGreaterThan(0);
  });
});
