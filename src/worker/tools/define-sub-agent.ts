import type { SubAgentSettings, ToolAnnotations, ToolDefinition } from '../../shared/types.js';
import { MAX_TOOL_NAME_LENGTH, NAMESPACE_SEPARATOR, TOOL_NAME_PATTERN } from '../mcp/names.js';
import { ToolDefinitionError } from './define-tool.js';

/**
 * Agents as tools: a sub-agent is offered to the model as the tool `agent__<name>`, and a call of it runs one agent
 * turn as a child workflow of the conversation (its own history, model, tools and budget; docs/embedding.md). It is
 * given to the worker in its `tools` beside the TypeScript tools, so it is listed, recorded and approved like them.
 */

/** `server` of a sub-agent's tool definition, and the first part of its name: `agent__<name>`. */
export const SUB_AGENT_SERVER = 'agent';

/** The tool's one argument: what the calling model asks the sub-agent to do. */
const SUB_AGENT_INPUT_SCHEMA = {
  type: 'object',
  properties: {
    task: { type: 'string', description: 'What the agent should do, with everything it needs to know.' },
  },
  required: ['task'],
  additionalProperties: false,
} as const;

export interface SubAgentDefinition {
  /** The agent's name: letters, digits, `_` and `-`; the model calls it as `agent__<name>`. */
  name: string;
  /** What the agent is good for, for the calling model. */
  description: string;
  /** Its model, system prompt, tool selection and budget. */
  settings?: SubAgentSettings;
  /** Annotations for the calling conversation's approval policy (`readOnlyHint`: `writes` does not ask). Default none. */
  annotations?: ToolAnnotations;
}

/** A sub-agent defined with {@link defineSubAgent}: give it to the worker in its `tools` option. */
export interface SubAgent {
  readonly kind: 'sub-agent';
  readonly definition: ToolDefinition;
}

/** An agent that another agent can call as a tool; each call is one turn of `agentTurnWorkflow`, run as a child. */
export function defineSubAgent(definition: SubAgentDefinition): SubAgent {
  const { name, description, settings = {} } = definition;
  const toolName = `${SUB_AGENT_SERVER}${NAMESPACE_SEPARATOR}${String(name)}`;
  if (typeof name !== 'string' || name.includes(NAMESPACE_SEPARATOR) || !TOOL_NAME_PATTERN.test(toolName)) {
    throw new ToolDefinitionError(
      `Sub-agent name ${JSON.stringify(name)} is not usable: the model calls it as "${toolName}", which must be 1 to ` +
        `${MAX_TOOL_NAME_LENGTH} letters, digits, "_" or "-"; use a name without "${NAMESPACE_SEPARATOR}" of at most ` +
        `${MAX_TOOL_NAME_LENGTH - toolName.length + String(name).length} characters.`,
    );
  }
  if (typeof description !== 'string' || description.trim() === '') {
    throw new ToolDefinitionError(`Sub-agent "${name}": "description" must say what the agent does, for the model.`);
  }
  const tools = settings.tools;
  if (tools !== undefined && !(Array.isArray(tools) && tools.every((entry) => typeof entry === 'string'))) {
    throw new ToolDefinitionError(
      `Sub-agent "${name}": "settings.tools" must be a list of tool names or patterns, e.g. ["files__*", "find_order"].`,
    );
  }
  return {
    kind: 'sub-agent',
    definition: {
      name: toolName,
      description,
      inputSchema: JSON.parse(JSON.stringify(SUB_AGENT_INPUT_SCHEMA)) as ToolDefinition['inputSchema'],
      annotations: { ...definition.annotations },
      server: SUB_AGENT_SERVER,
      originalName: name,
      // A sub-agent's call is a child workflow, not an activity: its time limit is its own budget's.
      timeoutMs: 0,
      source: 'agent',
      // Round-tripped so only plain data reaches the tool list the workflow records.
      agent: JSON.parse(JSON.stringify(settings)) as SubAgentSettings,
    },
  };
}

export function isSubAgent(value: unknown): value is SubAgent {
  return typeof value === 'object' && value !== null && (value as SubAgent).kind === 'sub-agent';
}
