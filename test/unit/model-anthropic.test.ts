import { ApplicationFailure } from '@temporalio/common';
import { describe, expect, it } from 'vitest';
import { toAnthropicMessages } from '../../src/worker/activities/model/providers/anthropic.js';
import { FailureType } from '../../src/shared/errors.js';
import type { ChatMessage, ModelCallInput } from '../../src/shared/types.js';
import { thinkingSignature } from '../../src/testing/scripted-model/anthropic-messages.js';
import type { Script } from '../../src/testing/scripted-model/index.js';
import { providerCallInput, READ_FILE_TOOL, useModelActivity } from '../helpers/model-call.js';

const system: ChatMessage = { role: 'system', content: 'You are a file assistant.' };
const question: ChatMessage = { role: 'user', content: 'What is in /a and /b?' };

function input(messages: ChatMessage[], overrides: Partial<ModelCallInput> = {}): ModelCallInput {
  return providerCallInput('anthropic:claude-scripted', messages, overrides);
}

describe('the Anthropic provider against the scripted model', () => {
  const setUp = useModelActivity();

  it('anthropic: system, tools and the transcript go with cache breakpoints; parallel tool_use comes back as tool calls', async () => {
    const { model, callModel } = await setUp(
      [
        {
          content: 'Reading both.',
          toolCalls: [
            { name: 'files__read_file', arguments: { path: '/a' } },
            { name: 'files__read_file', arguments: { path: '/b' } },
          ],
          usage: {
            prompt_tokens: 12,
            completion_tokens: 9,
            cache_creation_input_tokens: 100,
            cache_read_input_tokens: 400,
            completion_tokens_details: { reasoning_tokens: 4 },
          },
        },
      ],
      [system, question],
    );

    const result = await callModel(input([system, question]));

    const [request] = model.requests;
    expect(request?.api).toBe('messages');
    expect(request?.idempotencyKey).toBe('conv-anthropic/run-1/turn-1/round-1');
    expect(request?.body).toEqual({
      model: 'claude-scripted',
      max_tokens: 8192,
      system: [{ type: 'text', text: 'You are a file assistant.', cache_control: { type: 'ephemeral' } }],
      messages: [
        {
          role: 'user',
          content: [{ type: 'text', text: 'What is in /a and /b?', cache_control: { type: 'ephemeral' } }],
        },
      ],
      tools: [
        {
          name: 'files__read_file',
          description: 'Read a file.',
          input_schema: READ_FILE_TOOL.inputSchema,
          cache_control: { type: 'ephemeral' },
        },
      ],
      tool_choice: { type: 'auto' },
    });
    expect(result.message.content).toBe('Reading both.');
    expect(result.message.toolCalls?.map((call) => [call.name, JSON.parse(call.arguments) as unknown])).toEqual([
      ['files__read_file', { path: '/a' }],
      ['files__read_file', { path: '/b' }],
    ]);
    expect(result.finishReason).toBe('tool_calls');
    // Cache writes and reads are input the model read: counted in inputTokens (and the budget), and priced apart.
    expect(result.usage).toEqual({
      inputTokens: 512,
      outputTokens: 9,
      totalTokens: 521,
      cacheWriteTokens: 100,
      cacheReadTokens: 400,
      reasoningTokens: 4,
    });
  });

  it('anthropic: tool results go back as one user turn of tool_result blocks, is_error for every outcome but ok', () => {
    const calls = [
      { id: 'toolu_1', name: 'files__read_file', arguments: '{"path":"/a"}' },
      { id: 'toolu_2', name: 'files__read_file', arguments: 'not json' },
    ];
    expect(
      toAnthropicMessages([
        system,
        question,
        { role: 'assistant', content: null, toolCalls: calls },
        { role: 'tool', toolCallId: 'toolu_1', name: 'files__read_file', content: 'A', outcome: 'ok' },
        { role: 'tool', toolCallId: 'toolu_2', name: 'files__read_file', content: 'bad', outcome: 'invalid_arguments' },
        { role: 'user', content: 'And then?' },
      ]),
    ).toEqual([
      { role: 'user', content: [{ type: 'text', text: 'What is in /a and /b?' }] },
      {
        role: 'assistant',
        content: [
          { type: 'tool_use', id: 'toolu_1', name: 'files__read_file', input: { path: '/a' } },
          { type: 'tool_use', id: 'toolu_2', name: 'files__read_file', input: {} },
        ],
      },
      {
        role: 'user',
        content: [
          { type: 'tool_result', tool_use_id: 'toolu_1', content: 'A' },
          { type: 'tool_result', tool_use_id: 'toolu_2', content: 'bad', is_error: true },
          { type: 'text', text: 'And then?' },
        ],
      },
    ]);
  });

  it('anthropic: with thinking on, the thinking block is kept as reasoning (not text) and sent back with its signature', async () => {
    const thought = 'Two files: read both.';
    const { model, callModel } = await setUp(
      [
        { reasoning: thought, toolCalls: [{ name: 'files__read_file', arguments: { path: '/a' } }] },
        { content: 'Done.' },
      ],
      [system, question],
    );
    const thinking = { budgetTokens: 2048 };

    const first = await callModel(input([system, question], { thinking, temperature: 0.3 }));
    expect(first.message.content).toBeNull();
    expect(first.message.reasoning).toEqual([
      { type: 'anthropic_thinking', thinking: thought, signature: thinkingSignature(thought) },
    ]);
    expect(model.requests[0]?.body).toMatchObject({ thinking: { type: 'enabled', budget_tokens: 2048 } });
    expect(model.requests[0]?.body).not.toHaveProperty('temperature');

    const call = first.message.toolCalls![0]!;
    const transcript: ChatMessage[] = [
      system,
      question,
      first.message,
      { role: 'tool', toolCallId: call.id, name: call.name, content: 'A', outcome: 'ok' },
    ];
    await callModel(input([system, question], { thinking, round: 2, newMessages: transcript.slice(2) }));
    const sentBack = (model.requests[1]?.body.messages as { role: string; content: unknown[] }[])[1];
    expect(sentBack?.role).toBe('assistant');
    expect(sentBack?.content[0]).toEqual({
      type: 'thinking',
      thinking: thought,
      signature: thinkingSignature(thought),
    });
  });

  it('anthropic: a streamed answer publishes its text as it comes and records what the same request gets unstreamed', async () => {
    const script: Script = [
      { reasoning: 'Easy.', content: 'Both files are empty.', usage: { prompt_tokens: 30, completion_tokens: 7 } },
    ];
    const streamed = await setUp(script, [system, question]);
    const result = await streamed.callModel({ ...input([system, question]), stream: true });
    // The text after the last batch comes with the result; the first batch goes at once.
    const published = streamed.batches.map((batch) => batch.text).join('');
    expect(published).not.toBe('');
    expect('Both files are empty.'.startsWith(published)).toBe(true);
    expect(result.message.content).toBe('Both files are empty.');

    const plain = await setUp(script, [system, question]);
    expect(await plain.callModel(input([system, question]))).toEqual(result);
  });

  it('anthropic: 529 overloaded is retried after its retry-after; 400 and 401 are not, and 401 names ANTHROPIC_API_KEY', async () => {
    const { callModel } = await setUp(
      [
        { error: { status: 529, headers: { 'retry-after': '3' } } },
        { error: { status: 400 } },
        { error: { status: 401 } },
      ],
      [system, question],
    );
    const failures: unknown[] = [];
    for (let attempt = 0; attempt < 3; attempt++) {
      failures.push(await callModel(input([system, question])).catch((error: unknown) => error));
    }
    expect(failures[0]).toBeInstanceOf(ApplicationFailure);
    expect(failures[0]).toMatchObject({
      type: FailureType.ModelServerError,
      nonRetryable: false,
      nextRetryDelay: 3000,
    });
    expect(failures[1]).toMatchObject({ type: FailureType.ModelBadRequest, nonRetryable: true });
    expect(failures[2]).toMatchObject({ type: FailureType.ModelAuthentication, nonRetryable: true });
    expect((failures[2] as Error).message).toContain('ANTHROPIC_API_KEY');
  });
});
