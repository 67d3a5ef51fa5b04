import { createRequire } from 'node:module';
import { durableAgentPlugin, type McpPool, type McpServerConfig } from 'durable-agent/worker';
import type OpenAI from 'openai';

/** The application's task queue: its workflows and the agent's share it. */
export const TASK_QUEUE = 'orders';

/** One MCP server, run by the worker over stdio: the reference server's tools (`everything__get-sum`, ...). */
export const mcpServers: McpServerConfig[] = [
  {
    name: 'everything',
    transport: 'stdio',
    command: process.execPath,
    args: [createRequire(import.meta.url).resolve('@modelcontextprotocol/server-everything/dist/index.js'), 'stdio'],
    env: {},
    cwd: undefined,
    allowTools: ['get-sum', 'echo'],
    denyTools: [],
    timeoutMs: 30_000,
    disabled: false,
  },
];

/** The agent as a plugin of the application's worker: the model it calls and the MCP pool its tools come from. */
export function agentPlugin(options: { openai: OpenAI; mcp: McpPool }) {
  return durableAgentPlugin({ openai: options.openai, defaultModel: 'gpt-4o-mini', mcp: options.mcp });
}
