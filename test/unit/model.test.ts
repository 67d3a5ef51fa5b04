import { ApplicationFailure } from '@temporalio/common';
import { MockActivityEnvironment } from '@temporalio/testing';
import { DefaultLogger } from '@temporalio/worker';
import OpenAI from 'openai';
import type { ChatCompletion } from 'openai/resources/chat/completions';
import { afterEach, describe, expect, it } from 'vitest';
import {
  createModelActivities,
  fromOpenAICompletion,
  idempotencyKey,
  toOpenAIMessage,
  toOpenAITool,
} from '../../src/worker/activities/model/call.js';
import { TranscriptCache, type TranscriptSource } from '../../src/worker/activities/model/transcript-cache.js';
import type { ToolListing } from '../../src/worker/mcp/pool.js';
import { estimateTokens } from '../../src/shared/context.js';
import { chainDigest, EMPTY_DIGEST } from '../../src/shared/digest.js';
import { FailureType } from '../../src/shared/errors.js';
import type {
  ChatMessage,
  ModelCallInput,
  ModelCallResult,
  ModelContextPage,
  ToolDefinition,
} from '../../src/shared/types.js';
import { startScriptedModel, type Script, type ScriptedModel } from '../../src/testing/scripted-model/index.js';
import { modelCallInput, READ_FILE_TOOL } from '../helpers/model-call.js';

const readFile = READ_FILE_TOOL;

describe('toOpenAIMessage', () => {
  it('model: system, user and tool messages map to the wire format; the user id and tool outcome stay behind', () => {
    expect(toOpenAIMessage({ role: 'system', content: 'Be brief.' })).toEqual({ role: 'system', content: 'Be brief.' });
    expect(toOpenAIMessage({ role: 'user', content: 'Hi', id: 'm-1' })).toEqual({ role: 'user', content: 'Hi' });
    expect(
      toOpenAIMessage({ role: 'tool', toolCallId: 'call_1', name: 'files__read_file', content: 'x', outcome: 'error' }),
    ).toEqual({ role: 'tool', tool_call_id: 'call_1', content: 'x' });
  });

  it('model: an assistant message without tool calls has no tool_calls member, even for an empty list', () => {
    expect(toOpenAIMessage({ role: 'assistant', content: 'Done.' })).toEqual({ role: 'assistant', content: 'Done.' });
    expect(toOpenAIMessage({ role: 'assistant', content: 'Done.', toolCalls: [] })).toEqual({
      role: 'assistant',
      content: 'Done.',
    });
  });

  it('model: a tool is sent as a function with its namespaced name, description and schema', () => {
    expect(toOpenAITool(readFile)).toEqual({
      type: 'function',
      function: { name: 'files__read_file', description: 'Read a file.', parameters: readFile.inputSchema },
    });
  });
});

function completion(message: Partial<ChatCompletion.Choice['message']>, finishReason = 'stop'): ChatCompletion {
  return {
    id: 'chatcmpl-1',
    object: 'chat.completion',
    created: 0,
    model: 'gpt-test-2030',
    choices: [
      {
        index: 0,
        message: { role: 'assistant', content: null, refusal: null, ...message },
        logprobs: null,
        finish_reason: finishReason as ChatCompletion.Choice['finish_reason'],
      },
    ],
    usage: { prompt_tokens: 12, completion_tokens: 5, total_tokens: 17 },
  };
}

const wireToolCalls = [
  { id: 'call_1', type: 'function' as const, function: { name: 'files__read_file', arguments: '{"path":"/a"}' } },
  { id: 'call_2', type: 'function' as const, function: { name: 'files__read_file', arguments: '{"path":"/b"}' } },
];

describe('fromOpenAICompletion', () => {
  it('model: tool calls round trip: completion -> transcript -> the same assistant message on the wire', () => {
    const result = fromOpenAICompletion(completion({ tool_calls: wireToolCalls }, 'tool_calls'), false);

    expect(result).toEqual({
      message: {
        role: 'assistant',
        content: null,
        toolCalls: [
          { id: 'call_1', name: 'files__read_file', arguments: '{"path":"/a"}' },
          { id: 'call_2', name: 'files__read_file', arguments: '{"path":"/b"}' },
        ],
      },
      usage: { inputTokens: 12, outputTokens: 5, totalTokens: 17 },
      finishReason: 'tool_calls',
      model: 'gpt-test-2030',
    });
    expect(toOpenAIMessage(result.message)).toEqual({ role: 'assistant', content: null, tool_calls: wireToolCalls });
  });

  it('model: a text answer becomes an assistant message with that content and no toolCalls', () => {
    expect(fromOpenAICompletion(completion({ content: 'Hello.' }), false).message).toEqual({
      role: 'assistant',
      content: 'Hello.',
    });
  });

  it('model: the final call drops tool calls the model still made and keeps an empty string, never null', () => {
    const result = fromOpenAICompletion(completion({ tool_calls: wireToolCalls }, 'tool_calls'), true);
    expect(result.message).toEqual({ role: 'assistant', content: '' });

    const withText = fromOpenAICompletion(completion({ content: 'Summary.', tool_calls: wireToolCalls }), true);
    expect(withText.message).toEqual({ role: 'assistant', content: 'Summary.' });
  });

  it('model: custom (non-function) tool calls are left out', () => {
    const custom = { id: 'call_9', type: 'custom' as const, custom: { name: 'grammar', input: 'x' } };
    const result = fromOpenAICompletion(completion({ tool_calls: [custom, wireToolCalls[0]!] }, 'tool_calls'), false);
    expect(result.message.toolCalls?.map((call) => call.id)).toEqual(['call_1']);
  });

  it('model: a content_filter finish is a non-retryable ModelContentFiltered', () => {
    let failure: unknown;
    try {
      fromOpenAICompletion(completion({ content: '' }, 'content_filter'), false);
    } catch (error) {
      failure = error;
    }
    expect(failure).toBeInstanceOf(ApplicationFailure);
    expect(failure).toMatchObject({ type: FailureType.ModelContentFiltered, nonRetryable: true });
  });

  it('model: a completion without choices is a ModelInvalidResponse naming the completion', () => {
    let failure: unknown;
    try {
      fromOpenAICompletion({ ...completion({ content: 'x' }), choices: [] }, false);
    } catch (error) {
      failure = error;
    }
    expect(failure).toBeInstanceOf(ApplicationFailure);
    expect(failure).toMatchObject({
      type: FailureType.ModelInvalidResponse,
      message: 'The model returned no choices (completion chatcmpl-1).',
    });
  });

  it('model: missing usage counts as zero tokens', () => {
    const { usage: _ignored, ...withoutUsage } = completion({ content: 'x' });
    expect(fromOpenAICompletion(withoutUsage, false).usage).toEqual({
      inputTokens: 0,
      outputTokens: 0,
      totalTokens: 0,
    });
  });
});

/** The workflow side of the transcript query: one run's messages and tools, counting the pages asked for. */
class StubSource implements TranscriptSource {
  pages = 0;
  constructor(
    readonly messages: ChatMessage[],
    readonly tools: ToolDefinition[] | undefined = undefined,
  ) {}

  async page(_workflowId: string, _runId: string, from: number, limit: number): Promise<ModelContextPage> {
    this.pages++;
    return {
      from,
      messages: this.messages.slice(from, from + limit),
      total: this.messages.length,
      tools: this.tools,
      toolsDigest: this.tools && chainDigest(EMPTY_DIGEST, this.tools),
    };
  }
}

const system: ChatMessage = { role: 'system', content: 'You are a file assistant.' };
const question: ChatMessage = { role: 'user', content: 'What is in /a?' };

function modelInput(prefix: ChatMessage[], newMessages: ChatMessage[], overrides: Partial<ModelCallInput> = {}) {
  return modelCallInput(prefix, { turn: 3, round: 2, newMessages, ...overrides });
}

describe('callModel against the scripted model', () => {
  const started: ScriptedModel[] = [];
  afterEach(async () => {
    await Promise.all(started.splice(0).map((model) => model.close()));
  });

  async function setUp(
    script: Script,
    source: StubSource,
    heartbeatTimeoutMs?: number,
    listTools?: () => Promise<ToolListing>,
  ) {
    const model = await startScriptedModel({ script });
    started.push(model);
    const transcripts = new TranscriptCache(source);
    const activities = createModelActivities({
      openai: new OpenAI({ baseURL: model.baseUrl, apiKey: 'test', maxRetries: 0 }),
      transcripts,
      defaultModel: 'gpt-default',
      listTools,
    });
    // The failures these tests provoke are expected: keep the worker's "Activity failed" warnings out of the output.
    const environment = new MockActivityEnvironment({ heartbeatTimeoutMs }, { logger: new DefaultLogger('ERROR') });
    let heartbeats = 0;
    environment.on('heartbeat', () => heartbeats++);
    const callModel = (input: ModelCallInput): Promise<ModelCallResult> =>
      environment.run((value: ModelCallInput) => activities.callModel(value), input);
    return { model, transcripts, callModel, heartbeats: () => heartbeats };
  }

  it('model: sends the idempotency key, the cached prefix plus new messages, tools, tool_choice and limits', async () => {
    const source = new StubSource([system, question], [readFile]);
    const { model, callModel, heartbeats } = await setUp(
      [
        {
          toolCalls: [{ name: 'files__read_file', arguments: { path: '/a' } }],
          usage: { prompt_tokens: 40, completion_tokens: 9 },
        },
      ],
      source,
    );
    const reminder: ChatMessage = { role: 'user', content: 'Please hurry.' };

    const result = await callModel(
      modelInput([system, question], [reminder], {
        toolsDigest: chainDigest(EMPTY_DIGEST, [readFile]),
        temperature: 0.2,
        maxCompletionTokens: 300,
      }),
    );

    const [request] = model.requests;
    expect(model.requests).toHaveLength(1);
    expect(request?.idempotencyKey).toBe('conv-1/run-1/turn-3/round-2');
    expect(request?.conversation).toBe('conv-1');
    expect(request?.messages).toEqual([
      { role: 'system', content: 'You are a file assistant.' },
      { role: 'user', content: 'What is in /a?' },
      { role: 'user', content: 'Please hurry.' },
    ]);
    expect(request?.tools).toEqual([toOpenAITool(readFile)]);
    expect(request?.toolChoice).toBe('auto');
    expect(request?.options).toMatchObject({ model: 'gpt-default', temperature: 0.2, max_completion_tokens: 300 });
    expect(result).toEqual({
      message: {
        role: 'assistant',
        content: null,
        toolCalls: [{ id: expect.stringMatching(/^call_/), name: 'files__read_file', arguments: '{"path":"/a"}' }],
      },
      usage: { inputTokens: 40, outputTokens: 9, totalTokens: 49 },
      finishReason: 'tool_calls',
      model: 'gpt-default',
    });
    // A call shorter than the heartbeat interval sends none: each would be a write on the Temporal server.
    expect(heartbeats()).toBe(0);
  });

  it('model: the first call of a turn lists the tools, offers them and returns them; later calls find them cached', async () => {
    // The source knows no tools: a later call that asked the workflow for them would get none and fail.
    const source = new StubSource([system, question]);
    let listed = 0;
    const { model, callModel } = await setUp(
      [{ toolCalls: [{ name: 'files__read_file', arguments: { path: '/a' } }] }, { content: 'It says hello.' }],
      source,
      undefined,
      async () => {
        listed++;
        return { tools: [readFile], unavailable: [] };
      },
    );
    const first = await callModel(modelInput([system, question], [], { round: 1, listTools: true }));
    expect(first.turnSetup).toEqual({ tools: [readFile], model: 'gpt-default' });
    expect(model.requests[0]?.tools).toEqual([toOpenAITool(readFile)]);
    const pagesAfterFirst = source.pages; // the cold cache read the transcript once

    const toolResult: ChatMessage = {
      role: 'tool',
      toolCallId: first.message.toolCalls![0]!.id,
      name: 'files__read_file',
      outcome: 'ok',
      content: 'hello',
    };
    const second = await callModel(
      modelInput([system, question, first.message], [toolResult], {
        round: 2,
        toolsDigest: chainDigest(EMPTY_DIGEST, [readFile]),
      }),
    );
    expect(second.turnSetup).toBeUndefined();
    expect(model.requests[1]?.tools).toEqual([toOpenAITool(readFile)]);
    expect(listed).toBe(1);
    expect(source.pages).toBe(pagesAfterFirst);
  });

  it('model: heartbeats every third of its heartbeat timeout while it waits for a slow model', async () => {
    const source = new StubSource([system, question], []);
    const { callModel, heartbeats } = await setUp([{ content: 'Slowly.', delayMs: 800 }], source, 300);
    const result = await callModel(modelInput([system, question], []));
    expect(result.message.content).toBe('Slowly.');
    expect(heartbeats()).toBeGreaterThanOrEqual(4);
  });

  it('model: the idempotency key is <workflowId>/<runId>/turn-<n>/round-<r>', () => {
    expect(idempotencyKey({ workflowId: 'team/alice', runId: 'r-9', turn: 1, round: 4 })).toBe(
      'team/alice/r-9/turn-1/round-4',
    );
  });

  it('model: without tools the request has neither tools nor tool_choice, and no max_completion_tokens unless given', async () => {
    const source = new StubSource([]);
    const { model, callModel } = await setUp([{ content: 'Hello.' }], source);

    const result = await callModel(modelInput([], [system, question], { model: 'gpt-chosen' }));

    const [request] = model.requests;
    expect(request?.tools).toBeNull();
    expect(request?.toolChoice).toBeNull();
    expect(request?.options).not.toHaveProperty('max_completion_tokens');
    expect(request?.options).not.toHaveProperty('temperature');
    expect(request?.options.model).toBe('gpt-chosen');
    expect(result.message).toEqual({ role: 'assistant', content: 'Hello.' });
    expect(source.pages).toBe(0);
  });

  it('model: the final call sends tool_choice none and the instruction as a trailing system message', async () => {
    const source = new StubSource([system, question], [readFile]);
    const { model, callModel } = await setUp(
      [{ content: 'From what I found: nothing.', toolCalls: [{ name: 'files__read_file' }] }],
      source,
    );
    const instruction = 'The tool budget is used up: answer now with what you have.';

    const result = await callModel(
      modelInput([system, question], [], {
        toolsDigest: chainDigest(EMPTY_DIGEST, [readFile]),
        toolChoice: 'none',
        instruction,
      }),
    );

    const [request] = model.requests;
    expect(request?.toolChoice).toBe('none');
    expect(request?.tools).toEqual([toOpenAITool(readFile)]);
    expect(request?.messages).toEqual([
      { role: 'system', content: 'You are a file assistant.' },
      { role: 'user', content: 'What is in /a?' },
      { role: 'system', content: instruction },
    ]);
    expect(result.message).toEqual({ role: 'assistant', content: 'From what I found: nothing.' });
  });

  it('model: the instruction is not remembered: the next round sends the transcript without it', async () => {
    const source = new StubSource([]);
    const { model, callModel } = await setUp([{ content: 'First.' }, { content: 'Second.' }], source);
    const first = modelInput([], [system, question], { round: 1, instruction: 'Be quick.' });
    const answer = (await callModel(first)).message;

    const followUp: ChatMessage = { role: 'user', content: 'And /b?' };
    await callModel(modelInput([system, question, answer], [followUp], { round: 2 }));

    expect(model.requests[1]?.messages).toEqual([
      { role: 'system', content: 'You are a file assistant.' },
      { role: 'user', content: 'What is in /a?' },
      { role: 'assistant', content: 'First.' },
      { role: 'user', content: 'And /b?' },
    ]);
    // The second round's prefix included the answer the first call remembered: no query to the workflow.
    expect(source.pages).toBe(0);
  });

  it('model: trims the input to maxInputTokens by dropping the oldest whole turns', async () => {
    const old: ChatMessage[] = [
      { role: 'user', content: 'Old question '.repeat(50) },
      { role: 'assistant', content: 'Old answer '.repeat(50) },
    ];
    const current: ChatMessage[] = [{ role: 'user', content: 'New question' }];
    const source = new StubSource([system, ...old]);
    const { model, callModel } = await setUp([{ content: 'Sure.' }], source);
    const limit = [system, ...current].reduce((sum, message) => sum + estimateTokens(message), 0);

    await callModel(modelInput([system, ...old], current, { maxInputTokens: limit }));

    expect(model.requests[0]?.messages).toEqual([
      { role: 'system', content: 'You are a file assistant.' },
      { role: 'user', content: 'New question' },
    ]);
  });

  it('model: a 500 from the model is a retryable ModelServerError naming the endpoint', async () => {
    const source = new StubSource([]);
    const { model, callModel } = await setUp([{ error: { status: 500 } }], source);

    let failure: unknown;
    try {
      await callModel(modelInput([], [question]));
    } catch (error) {
      failure = error;
    }

    expect(failure).toBeInstanceOf(ApplicationFailure);
    expect(failure).toMatchObject({ type: FailureType.ModelServerError, nonRetryable: false });
    expect((failure as ApplicationFailure).message).toContain(`HTTP 500 from ${model.baseUrl}`);
    expect(model.requests.map((request) => request.idempotencyKey)).toEqual(['conv-1/run-1/turn-3/round-2']);
  });

  it('model: the attempt with the last of modelAttempts model errors fails for good; attempts before it were counted', async () => {
    // Attempt 9 of Temporal's: the attempts before it lost to dead workers recorded nothing, the errors their count.
    const model = await startScriptedModel({ script: [{ error: { status: 500, times: 3 } }] });
    started.push(model);
    const activities = createModelActivities({
      openai: new OpenAI({ baseURL: model.baseUrl, apiKey: 'test', maxRetries: 0 }),
      transcripts: new TranscriptCache(new StubSource([])),
      defaultModel: 'gpt-default',
    });
    const attempt = async (heartbeatDetails: unknown, input: ModelCallInput) => {
      const environment = new MockActivityEnvironment(
        { attempt: 9, heartbeatDetails },
        { logger: new DefaultLogger('ERROR') },
      );
      let recorded: unknown;
      environment.on('heartbeat', (details: unknown) => (recorded = details));
      const failure = await environment
        .run((value: ModelCallInput) => activities.callModel(value), input)
        .catch((error: unknown) => error);
      return { failure, recorded };
    };

    const retried = await attempt({ failedAttempts: 3 }, modelInput([], [question]));
    expect(retried.failure).toMatchObject({ type: FailureType.ModelServerError, nonRetryable: false });
    expect(retried.recorded).toEqual({ failedAttempts: 4 });

    const last = await attempt({ failedAttempts: 4 }, modelInput([], [question]));
    expect(last.failure).toMatchObject({ type: FailureType.ModelServerError, nonRetryable: true });
    expect((last.failure as Error).message).toContain(`HTTP 500 from ${model.baseUrl}`);
    expect(last.recorded).toEqual({ failedAttempts: 5 });

    // A conversation's own modelAttempts comes with the input.
    const own = await attempt({ failedAttempts: 1 }, modelInput([], [question], { modelAttempts: 2 }));
    expect(own.failure).toMatchObject({ type: FailureType.ModelServerError, nonRetryable: true });
  });

  it('model: a 401 is a non-retryable ModelAuthentication that mentions OPENAI_API_KEY', async () => {
    const { callModel } = await setUp([{ error: { status: 401 } }], new StubSource([]));

    await expect(callModel(modelInput([], [question]))).rejects.toMatchObject({
      type: FailureType.ModelAuthentication,
      nonRetryable: true,
      message: expect.stringContaining('OPENAI_API_KEY'),
    });
  });
});
