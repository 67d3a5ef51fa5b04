import { ApplicationFailure } from '@temporalio/common';
import { MockActivityEnvironment } from '@temporalio/testing';
import { DefaultLogger, type LogEntry } from '@temporalio/worker';
import OpenAI from 'openai';
import { afterEach, describe, expect, it } from 'vitest';
import { createModelActivities } from '../../src/worker/activities/model/call.js';
import { DESCRIPTION_TRUNCATION_MARKER } from '../../src/worker/activities/model/tool-limits.js';
import { TranscriptCache } from '../../src/worker/activities/model/transcript-cache.js';
import { EMPTY_DIGEST, chainDigest, prefixDigests, toolsDigest } from '../../src/shared/digest.js';
import { FailureType } from '../../src/shared/errors.js';
import type { ChatMessage, ModelCallInput, ModelCallResult, ToolDefinition } from '../../src/shared/types.js';
import { startScriptedModel, type Script, type ScriptedModel } from '../../src/testing/scripted-model/index.js';
import { modelCallInput, READ_FILE_TOOL } from '../helpers/model-call.js';

const thinking: ToolDefinition = {
  name: 'thinking__sequentialthinking',
  description: 'Think step by step, revising earlier thoughts as understanding deepens. '.repeat(40),
  inputSchema: {
    type: 'object',
    properties: { thought: { type: 'string' }, branches: { type: 'array' } },
    required: ['thought'],
  },
  annotations: { readOnlyHint: true },
  server: 'thinking',
  originalName: 'sequentialthinking',
  timeoutMs: 30_000,
};
const readFile = READ_FILE_TOOL;
const question: ChatMessage = { role: 'user', content: 'Think about /a.' };

function input(overrides: Partial<ModelCallInput>): ModelCallInput {
  return modelCallInput([question], overrides);
}

describe('callModel offers tools fitted to the API limits', () => {
  const started: ScriptedModel[] = [];
  afterEach(async () => {
    await Promise.all(started.splice(0).map((model) => model.close()));
  });

  async function setUp(script: Script) {
    const model = await startScriptedModel({ script });
    started.push(model);
    const transcripts = new TranscriptCache({
      page: async (_workflowId, _runId, from, limit) => ({
        from,
        messages: [question].slice(from, from + limit),
        total: 1,
        tools: undefined,
        toolsDigest: undefined,
      }),
    });
    const activities = createModelActivities({
      openai: new OpenAI({ baseURL: model.baseUrl, apiKey: 'test', maxRetries: 0 }),
      transcripts,
      defaultModel: 'gpt-default',
      listTools: async () => ({ tools: [thinking, readFile], unavailable: [] }),
    });
    const warnings: LogEntry[] = [];
    const logger = new DefaultLogger('WARN', (entry) => {
      if (entry.level === 'WARN' && entry.message.startsWith('Fitted the tool list')) warnings.push(entry);
    });
    const environment = new MockActivityEnvironment(undefined, { logger });
    const callModel = (value: ModelCallInput): Promise<ModelCallResult> =>
      environment.run((call: ModelCallInput) => activities.callModel(call), value);
    return { model, callModel, warnings };
  }

  it('model: the model sees fitted copies, the turn records the originals, and the change is logged once', async () => {
    const { model, callModel, warnings } = await setUp([
      { toolCalls: [{ name: 'thinking__sequentialthinking', arguments: { thought: 'a' } }] },
      { content: 'Done.' },
      { content: 'Again.' },
    ]);

    const first = await callModel(input({ listTools: true }));
    // The workflow records the servers' own definitions, and their digest names the list in later calls.
    expect(first.turnSetup?.tools).toEqual([thinking, readFile]);
    const [offeredThinking, offeredReadFile] = model.requests[0]!.tools!;
    expect(thinking.description.length).toBeGreaterThan(1_024);
    expect(offeredThinking).toMatchObject({ type: 'function' });
    const fitted = offeredThinking?.type === 'function' ? offeredThinking.function : undefined;
    expect(fitted?.description?.length).toBeLessThanOrEqual(1_024);
    expect(fitted?.description?.endsWith(DESCRIPTION_TRUNCATION_MARKER)).toBe(true);
    expect(fitted?.parameters).toEqual({
      type: 'object',
      properties: { thought: { type: 'string' }, branches: { type: 'array', items: {} } },
      required: ['thought'],
    });
    expect(offeredReadFile).toEqual({
      type: 'function',
      function: { name: readFile.name, description: readFile.description, parameters: readFile.inputSchema },
    });

    // The next round finds the list by its digest (of the originals) and offers the same fitted copies.
    const toolResult: ChatMessage = {
      role: 'tool',
      toolCallId: first.message.toolCalls![0]!.id,
      name: thinking.name,
      outcome: 'ok',
      content: 'noted',
    };
    await callModel(
      input({
        round: 2,
        prefix: { count: 2, digest: prefixDigests([question, first.message])[2]! },
        newMessages: [toolResult],
        toolsDigest: chainDigest(EMPTY_DIGEST, [thinking, readFile]),
      }),
    );
    expect(model.requests[1]!.tools).toEqual(model.requests[0]!.tools);
    // The next turn lists an equal list again: offered the same way, not logged again.
    await callModel(
      input({ turn: 2, round: 1, listTools: true, prefix: { count: 1, digest: prefixDigests([question])[1]! } }),
    );
    expect(model.requests[2]!.tools).toEqual(model.requests[0]!.tools);

    expect(warnings).toHaveLength(1);
    expect(warnings[0]!.message).toContain('1 of 2 tools changed, 0 left out');
    expect(warnings[0]!.message).toContain(
      'thinking__sequentialthinking (tool "sequentialthinking" of MCP server "thinking"): description cut from',
    );
    expect(warnings[0]!.meta).toMatchObject({ toolsDigest: toolsDigest([thinking, readFile]) });
  });

  it('model: a 400 that names tools[N] fails the call naming that server__tool and its server', async () => {
    const { callModel } = await setUp([
      {
        error: {
          status: 400,
          body: {
            error: {
              message: "Invalid 'tools[1].function.parameters': something the limits do not know about.",
              type: 'invalid_request_error',
              param: 'tools[1].function.parameters',
              code: 'invalid_function_parameters',
            },
          },
        },
      },
    ]);
    const failure = await callModel(input({ listTools: true })).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(ApplicationFailure);
    expect(failure).toMatchObject({ type: FailureType.ModelBadRequest, nonRetryable: true });
    expect((failure as ApplicationFailure).message).toContain(
      'tools[1] is files__read_file, the tool "read_file" of the MCP server "files"',
    );
  });
});
