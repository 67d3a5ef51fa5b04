import type { ApprovalPolicy } from '../../shared/approval-messages.js';
import { isApprovalPolicy, serverApproval } from '../../shared/approval-policy.js';
import type { ToolDefinition } from '../../shared/types.js';
import { DEFAULT_TOOL_TIMEOUT_MS, MAX_TOOL_TIMEOUT_MS } from '../mcp/config.js';
import type { ToolListing } from '../mcp/pool.js';
import { ToolDefinitionError, type FunctionTool } from './define-tool.js';
import { isSubAgent, type SubAgent } from './define-sub-agent.js';

/**
 * The worker's TypeScript tools, by name. The model activity lists them with the MCP servers' tools on a turn's first
 * call, so the workflow records one tool list; the `callTool` activity runs a call of one of them when the recorded
 * definition says `source: 'function'`.
 */

/** `server` of a function tool's definition: where it runs, for people (approvals, the Web UI). */
export const FUNCTION_TOOLS_SERVER = 'worker';

export interface ToolRegistryOptions<Dependencies> {
  /**
   * The tools, or a function that makes them from `dependencies` (a database client, a service's SDK), so tools reach
   * what they need by injection instead of through module state.
   */
  tools: readonly (FunctionTool | SubAgent)[] | ((dependencies: Dependencies) => readonly (FunctionTool | SubAgent)[]);
  dependencies?: Dependencies;
  /**
   * Which calls wait for a person's approval (docs/approvals.md), as a server's `requireApproval`: `always`, `writes`
   * (tools not annotated read-only), `never`, or a list of tool names (`*` matches any run of characters). Default
   * `never`; a conversation's `approval.require` overrides it.
   */
  requireApproval?: ApprovalPolicy;
  /** Default time a call may run, in milliseconds, for tools that set no `timeoutMs`. Default 60,000. */
  timeoutMs?: number;
}

export class ToolRegistry {
  private readonly byName = new Map<string, FunctionTool>();
  /** As the workflow records them; the same objects every turn, so the tool list's digest stays the same. */
  readonly definitions: readonly ToolDefinition[];

  constructor(
    given: readonly (FunctionTool | SubAgent)[],
    options: Omit<ToolRegistryOptions<unknown>, 'tools' | 'dependencies'> = {},
  ) {
    const { requireApproval, timeoutMs = DEFAULT_TOOL_TIMEOUT_MS } = options;
    if (requireApproval !== undefined && !isApprovalPolicy(requireApproval)) {
      throw new ToolDefinitionError(
        `The tools' "requireApproval" must be "always", "writes", "never" or a list of tool names; got ${JSON.stringify(requireApproval)}.`,
      );
    }
    if (!(Number.isInteger(timeoutMs) && timeoutMs >= 1 && timeoutMs <= MAX_TOOL_TIMEOUT_MS)) {
      throw new ToolDefinitionError(
        `The tools' "timeoutMs" must be a whole number of milliseconds from 1 to ${MAX_TOOL_TIMEOUT_MS}; got ${timeoutMs}.`,
      );
    }
    const tools = given.filter((tool): tool is FunctionTool => !isSubAgent(tool));
    const subAgents = given.filter(isSubAgent).map((subAgent) => subAgent.definition);
    const names = new Set<string>();
    for (const { name } of [...tools, ...subAgents]) {
      if (names.has(name)) {
        throw new ToolDefinitionError(`Two tools are named "${name}": give each tool a name of its own.`);
      }
      names.add(name);
    }
    for (const tool of tools) {
      if (this.byName.has(tool.name)) {
        throw new ToolDefinitionError(`Two tools are named "${tool.name}": give each tool a name of its own.`);
      }
      this.byName.set(tool.name, tool);
    }
    const policy = { name: FUNCTION_TOOLS_SERVER, requireApproval };
    this.definitions = tools.map((tool) => {
      const approval = serverApproval(policy, {
        name: tool.name,
        originalName: tool.name,
        annotations: tool.annotations,
      });
      return {
        name: tool.name,
        description: tool.description,
        inputSchema: tool.inputSchema,
        annotations: tool.annotations,
        server: FUNCTION_TOOLS_SERVER,
        originalName: tool.name,
        timeoutMs: tool.timeoutMs ?? timeoutMs,
        ...(approval !== undefined ? { approval } : {}),
        source: 'function',
      } satisfies ToolDefinition;
    });
    this.definitions = [...this.definitions, ...subAgents.map((definition) => withApproval(policy, definition))];
  }

  get(name: string): FunctionTool | undefined {
    return this.byName.get(name);
  }

  get names(): string[] {
    return [...this.byName.keys()];
  }

  /**
   * A turn's tools: these first, then the MCP servers'. Function tools' names never contain `__`, which every MCP
   * tool's name has unless a server name of over 50 characters pushed it out; such a tool, if its name is taken,
   * is left out (and logged), so the model never sees two tools of one name.
   */
  withMcpTools(listing: ToolListing, warn: (message: string) => void = console.warn): ToolListing {
    if (this.definitions.length === 0) return listing;
    const taken = new Set(this.definitions.map((tool) => tool.name));
    const mcpTools = listing.tools.filter((tool) => {
      if (!taken.has(tool.name)) return true;
      warn(
        `The tool "${tool.originalName}" of MCP server "${tool.server}" is left out: its name "${tool.name}" is ` +
          "one of the worker's TypeScript tools. Give the server a shorter name.",
      );
      return false;
    });
    return { ...listing, tools: [...this.definitions, ...mcpTools] };
  }
}

/** A sub-agent's definition with the registry's approval policy applied, as a TypeScript tool's. */
function withApproval(
  policy: { name: string; requireApproval?: ApprovalPolicy },
  definition: ToolDefinition,
): ToolDefinition {
  const approval = serverApproval(policy, definition);
  return approval !== undefined ? { ...definition, approval } : definition;
}

/**
 * The worker's TypeScript tools with their dependencies, for `createAgentWorker({ tools })`:
 * `createToolRegistry({ dependencies: { db }, tools: ({ db }) => [lookupOrder(db)] })`.
 */
export function createToolRegistry<Dependencies = undefined>(options: ToolRegistryOptions<Dependencies>): ToolRegistry {
  const tools =
    typeof options.tools === 'function' ? options.tools(options.dependencies as Dependencies) : options.tools;
  return new ToolRegistry(tools, options);
}
