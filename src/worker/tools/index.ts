export {
  defineTool,
  ToolDefinitionError,
  ToolError,
  type FunctionTool,
  type JsonSchemaToolDefinition,
  type ToolCallContext,
  type ToolOutput,
  type ZodToolDefinition,
} from './define-tool.js';
export { createToolRegistry, ToolRegistry, type ToolRegistryOptions } from './registry.js';
export { defineSubAgent, type SubAgent, type SubAgentDefinition } from './define-sub-agent.js';
export type { SubAgentSettings } from '../../shared/types.js';
