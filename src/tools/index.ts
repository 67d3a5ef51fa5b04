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
