import type { Client, Tool } from '@modelcontextprotocol/client';
import type { JsonObject, ToolAnnotations, ToolDefinition } from '../../shared/types.js';
import { serverApproval } from '../../shared/approval-policy.js';
import { DEFAULT_ELICITATION_TIMEOUT_MS, type McpServerConfig } from './config.js';
import { assignToolNames } from './names.js';

/** MCP tools → the `ToolDefinition`s the workflow records: plain JSON, named `server__tool`. */

/** The tools of each server, in configuration order, as one list with model-facing names unique across servers. */
export function toToolDefinitions(servers: Array<{ config: McpServerConfig; tools: Tool[] }>): ToolDefinition[] {
  const entries = servers.flatMap(({ config, tools }) => tools.map((tool) => ({ config, tool })));
  const names = assignToolNames(entries.map(({ config, tool }) => ({ server: config.name, tool: tool.name })));
  return entries.map(({ config, tool }, index) => toToolDefinition(names[index]!, config, tool));
}

function toToolDefinition(name: string, config: McpServerConfig, tool: Tool): ToolDefinition {
  const annotations: ToolAnnotations = {};
  for (const key of ['readOnlyHint', 'idempotentHint', 'destructiveHint', 'openWorldHint'] as const) {
    const value = tool.annotations?.[key];
    if (typeof value === 'boolean') annotations[key] = value;
  }
  const approval = serverApproval(config, { name, originalName: tool.name, annotations });
  return {
    name,
    description: tool.description ?? tool.title ?? tool.annotations?.title ?? '',
    // Round-trip through JSON so only plain data crosses into workflow history.
    inputSchema: JSON.parse(JSON.stringify(tool.inputSchema)) as JsonObject,
    annotations,
    server: config.name,
    originalName: tool.name,
    timeoutMs: config.timeoutMs,
    // Only when required, so the tool lists (and their digests) of servers without approvals are as before.
    ...(approval !== undefined ? { approval } : {}),
    elicitationTimeoutMs: config.elicitationTimeoutMs ?? DEFAULT_ELICITATION_TIMEOUT_MS,
    ...taskCall(config, tool),
  };
}

/**
 * Whether the tool is called as an MCP task (docs/mcp.md, "Tasks"): when its server says it must be, or may be and the
 * server's `optionalTasks` asks for it; only when the server declares task-augmented tool calls at all.
 */
function taskCall(config: McpServerConfig, tool: Tool): Pick<ToolDefinition, 'task'> {
  const support = tool.execution?.taskSupport;
  if (support === 'required') return { task: 'required' };
  if (support === 'optional' && config.optionalTasks === true) return { task: 'optional' };
  return {};
}

/** All of a server's tools, page by page. */
export async function listAllTools(client: Client, timeoutMs: number): Promise<Tool[]> {
  // A server without the tools capability (prompts or resources only) would answer "method not found".
  if (client.getServerCapabilities()?.tools === undefined) return [];
  const tools: Tool[] = [];
  let cursor: string | undefined;
  do {
    const page = await client.listTools(cursor === undefined ? {} : { cursor }, { timeout: timeoutMs });
    tools.push(...page.tools);
    cursor = page.nextCursor;
  } while (cursor !== undefined);
  return tools;
}
