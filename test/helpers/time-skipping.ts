import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { afterAll, beforeAll } from 'vitest';
import { startTestAgent, type TestAgent, type TestAgentOptions } from '../../src/testing/agent.js';
import { createTimeSkippingEnvironment } from '../../src/testing/environment.js';
import { startCrm, type Crm } from './crm-server.js';

export interface CrmTestBed {
  readonly env: TestWorkflowEnvironment;
  readonly crm: Crm;
  /** A test agent with the CRM as its MCP server (unless `mcpServers` says otherwise), closed after the file. */
  agentWith: (script: TestAgentOptions['script'], extra?: Partial<Omit<TestAgentOptions, 'env'>>) => Promise<TestAgent>;
  /** Run `cleanup` after the file's tests, passing or failing. */
  onCleanup: (cleanup: () => Promise<void>) => void;
}

/** One time-skipping environment and one CRM MCP server per test file, torn down even when a test fails. */
export function useTimeSkippingWithCrm(): CrmTestBed {
  let env: TestWorkflowEnvironment | undefined;
  let crm: Crm | undefined;
  const cleanups: (() => Promise<void>)[] = [];

  beforeAll(async () => {
    env = await createTimeSkippingEnvironment();
    crm = await startCrm();
  });

  afterAll(async () => {
    await Promise.allSettled(cleanups.reverse().map((cleanup) => cleanup()));
    await crm?.close();
    await env?.teardown();
  });

  const bed: CrmTestBed = {
    get env() {
      if (!env) throw new Error('the environment starts in beforeAll');
      return env;
    },
    get crm() {
      if (!crm) throw new Error('the CRM starts in beforeAll');
      return crm;
    },
    agentWith: async (script, extra = {}) => {
      const agent = await startTestAgent({ env: bed.env, script, mcpServers: [bed.crm.config()], ...extra });
      cleanups.push(() => agent.close());
      return agent;
    },
    onCleanup: (cleanup) => {
      cleanups.push(cleanup);
    },
  };
  return bed;
}
