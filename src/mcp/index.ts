export {
  DEFAULT_TOOL_TIMEOUT_MS,
  MAX_TOOL_TIMEOUT_MS,
  McpConfigError,
  isToolAllowed,
  loadMcpConfig,
  parseMcpConfig,
  type HttpServerConfig,
  type McpConfig,
  type McpServerConfig,
  type StdioServerConfig,
} from './config.js';
export {
  DEFAULT_TOOL_RESULT_MAX_CHARS,
  contentBlockToText,
  toolResultToText,
  truncateText,
  type McpToolResult,
  type ToolResultText,
} from './content.js';
export { McpProtocolError, McpToolNotConfiguredError, McpTransportError } from './errors.js';
export {
  MAX_TOOL_NAME_LENGTH,
  NAMESPACE_SEPARATOR,
  TOOL_NAME_PATTERN,
  assignToolNames,
  sanitizeNamePart,
  type ToolKey,
} from './names.js';
export {
  DEFAULT_CONNECT_TIMEOUT_MS,
  McpPool,
  type McpCallOptions,
  type McpLogger,
  type McpPoolOptions,
  type McpServerStatus,
  type McpToolTarget,
} from './pool.js';
