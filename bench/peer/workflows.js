// Workflow code of the peer contender, bundled by the peer's own @temporalio/worker (1.23) with OpenAIAgentsPlugin.
// CommonJS on purpose (this directory's package.json says so): from an ES module, webpack picks the Agents SDK's ESM
// build, whose `import.meta.url` needs an "automatic publicPath" that the workflow sandbox does not have; TypeScript
// users compiling to CommonJS get the CJS build, as this file does.
const { Agent, user } = require('@openai/agents-core');
const { statelessMcpServer, TemporalOpenAIRunner } = require('@temporalio/openai-agents/workflow');

/** The Agents SDK's default is 10 model calls per run; a chain of ten tool calls needs eleven. */
const MAX_TURNS = 100;

/**
 * The same chain as the other contenders, written as users of Temporal's integration write it: an Agent whose MCP
 * server is the worker's stdio test server, run by TemporalOpenAIRunner once per user message. Later messages carry
 * the earlier run's history as their input, which is how the Agents SDK continues a conversation without a session.
 */
async function chainAgentWorkflow(prompts) {
  const agent = new Agent({
    name: 'bench',
    instructions: 'Call the echo tool as the user asks, then answer.',
    model: 'scripted-model',
    mcpServers: [statelessMcpServer('bench')],
  });
  const runner = new TemporalOpenAIRunner();
  let history = [];
  let answer = '';
  for (const prompt of prompts) {
    const result = await runner.run(agent, [...history, user(prompt)], { maxTurns: MAX_TURNS });
    history = result.history;
    answer = result.finalOutput ?? '';
  }
  return answer;
}

module.exports = { chainAgentWorkflow };
