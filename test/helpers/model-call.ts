import { prefixDigests } from '../../src/shared/digest.js';
import type { ChatMessage, ModelCallInput, ToolDefinition } from '../../src/shared/types.js';

/** A read-only MCP tool, as the pool lists it. */
export const READ_FILE_TOOL: ToolDefinition = {
  name: 'files__read_file',
  description: 'Read a file.',
  inputSchema: { type: 'object', properties: { path: { type: 'string' } }, required: ['path'] },
  annotations: { readOnlyHint: true },
  server: 'files',
  originalName: 'read_file',
  timeoutMs: 30_000,
};

/** A model call's input whose prefix is `prefix` (the worker reads it from its transcript source). */
export function modelCallInput(
  prefix: readonly ChatMessage[],
  overrides: Partial<ModelCallInput> = {},
): ModelCallInput {
  return {
    workflowId: 'conv-1',
    runId: 'run-1',
    turn: 1,
    round: 1,
    prefix: { count: prefix.length, digest: prefixDigests([...prefix])[prefix.length]! },
    newMessages: [],
    toolsDigest: undefined,
    model: undefined,
    temperature: undefined,
    maxCompletionTokens: undefined,
    maxInputTokens: undefined,
    toolChoice: 'auto',
    instruction: undefined,
    ...overrides,
  };
}
