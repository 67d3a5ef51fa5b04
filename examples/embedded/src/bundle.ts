import { fileURLToPath } from 'node:url';
import { bundleWorkflowCode } from '@temporalio/worker';
import type { DurableAgentPlugin } from 'durable-agent/worker';

/** A bundle built ahead of time (e.g. in an image build): the same plugin joins the agent's workflows to it. */
export async function bundleOrderWorkflows(agent: DurableAgentPlugin) {
  return await bundleWorkflowCode({
    workflowsPath: fileURLToPath(new URL('./workflows.js', import.meta.url)),
    plugins: [agent],
  });
}
