/**
 * durable-agent/testing: test your agents without a real LLM. A scripted OpenAI-compatible model server, Temporal
 * test environments on provisioned servers, and a real worker wired to both.
 */
export * from './scripted-model/index.js';
export {
  createTimeSkippingEnvironment,
  createLocalEnvironment,
  type TimeSkippingEnvironmentOptions,
  type LocalEnvironmentOptions,
} from './environment.js';
export {
  startTestAgent,
  registerSearchAttributes,
  conversationWorkflowId,
  type TestAgent,
  type TestAgentOptions,
} from './agent.js';
export { serveMcpOverHttp, type ServedMcp } from './mcp-http.js';
export { startTestMcpServer, type RunningTestMcpServer } from './mcp-test-server.js';
