import Anthropic from '@anthropic-ai/sdk';
import { MockActivityEnvironment } from '@temporalio/testing';
import { DefaultLogger } from '@temporalio/worker';
import OpenAI from 'openai';
import { afterEach } from 'vitest';
import { createModelActivities } from '../../src/worker/activities/model/call.js';
import { TranscriptCache } from '../../src/worker/activities/model/transcript-cache.js';
import { chainDigest, EMPTY_DIGEST, prefixDigests } from '../../src/shared/digest.js';
import type { ChatMessage, ModelCallInput, ModelCallResult, ToolDefinition } from '../../src/shared/types.js';
import { startScriptedModel, type Script, type ScriptedModel } from '../../src/testing/scripted-model/index.js';
import type { StreamBatch } from '../../src/workflows/stream-events.js';

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

/** A call of the turn's second round onwards, on `model`, with the workflow's tools `[READ_FILE_TOOL]`. */
export function providerCallInput(
  model: string,
  messages: readonly ChatMessage[],
  overrides: Partial<ModelCallInput> = {},
): ModelCallInput {
  return modelCallInput(messages, {
    workflowId: `conv-${model.split(':')[0]}`,
    toolsDigest: chainDigest(EMPTY_DIGEST, [READ_FILE_TOOL]),
    model,
    ...overrides,
  });
}

/**
 * The model activity with every provider's client pointed at a scripted model, in a mock activity environment; the
 * workflow's transcript is `messages` and its tools `[READ_FILE_TOOL]`. Models are closed after each test.
 */
export function useModelActivity() {
  const started: ScriptedModel[] = [];
  afterEach(async () => {
    await Promise.all(started.splice(0).map((model) => model.close()));
  });
  return async (script: Script, messages: ChatMessage[]) => {
    const model = await startScriptedModel({ script });
    started.push(model);
    const batches: StreamBatch[] = [];
    const tools = [READ_FILE_TOOL];
    const activities = createModelActivities({
      openai: new OpenAI({ baseURL: model.baseUrl, apiKey: 'test', maxRetries: 0 }),
      anthropic: new Anthropic({ baseURL: model.anthropicBaseUrl, apiKey: 'test', maxRetries: 0 }),
      transcripts: new TranscriptCache({
        page: async (_workflowId, _runId, from, limit) => ({
          from,
          messages: messages.slice(from, from + limit),
          total: messages.length,
          tools,
          toolsDigest: chainDigest(EMPTY_DIGEST, tools),
        }),
      }),
      defaultModel: 'gpt-default',
      publish: async (_target, batch) => void batches.push(batch),
      streamIntervalMs: 0,
    });
    const environment = new MockActivityEnvironment({}, { logger: new DefaultLogger('ERROR') });
    const callModel = (value: ModelCallInput): Promise<ModelCallResult> =>
      environment.run((call: ModelCallInput) => activities.callModel(call), value);
    return { model, callModel, batches };
  };
}
