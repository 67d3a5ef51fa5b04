import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { DurableAgentClient } from '../../src/client/index.js';
import type { HttpServerConfig, McpServerConfig } from '../../src/worker/mcp/config.js';
import { startTestAgent, type TestAgent, type TestAgentOptions } from '../../src/testing/agent.js';
import { createLocalEnvironment } from '../../src/testing/environment.js';
import { startCrm, type Crm } from '../helpers/crm-server.js';
import { type CliRun, killAll, runCli } from './helpers.js';

/** What a CLI test file runs against: a dev server, the CRM MCP server and a worker with a scripted model. */
export interface CliAgent {
  env: TestWorkflowEnvironment;
  crm: Crm;
  agent: TestAgent;
  client: DurableAgentClient;
  /** The environment of the CLI processes: this dev server and this worker's task queue. */
  cliEnv: NodeJS.ProcessEnv;
  /** Run the built CLI with `args` against this agent. */
  cli(...args: string[]): Promise<CliRun>;
  /** Kill the CLI processes still running, then stop the worker, the CRM server and the dev server. */
  close(): Promise<void>;
}

/**
 * Start a {@link CliAgent}; `crm` is the CRM server's entry (e.g. its approval policy), `mcpServers` more servers the
 * worker is configured with after it.
 */
export async function startCliAgent(options: {
  script: TestAgentOptions['script'];
  crm?: Partial<HttpServerConfig>;
  mcpServers?: McpServerConfig[];
}): Promise<CliAgent> {
  const env = await createLocalEnvironment();
  const crm = await startCrm();
  const agent = await startTestAgent({
    env,
    script: options.script,
    mcpServers: [crm.config('crm', options.crm), ...(options.mcpServers ?? [])],
  });
  const client = new DurableAgentClient({ client: env.client, taskQueue: agent.taskQueue });
  const cliEnv = { ...process.env, TEMPORAL_ADDRESS: env.address, DURABLE_AGENT_TASK_QUEUE: agent.taskQueue };
  return {
    env,
    crm,
    agent,
    client,
    cliEnv,
    cli: (...args) => runCli(args, cliEnv),
    close: async () => {
      await killAll();
      await agent.close();
      await crm.close();
      await env.teardown();
    },
  };
}
