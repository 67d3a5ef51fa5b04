import { describe, expect, it } from 'vitest';
import { FailureType } from '../../src/shared/errors.js';
import type { ChatMessage, ModelCallInput } from '../../src/shared/types.js';
import { encryptedReasoning } from '../../src/testing/scripted-model/openai-responses.js';
import { providerCallInput, READ_FILE_TOOL, useModelActivity } from '../helpers/model-call.js';

const system: ChatMessage = { role: 'system', content: 'You are a file assistant.' };
const question: ChatMessage = { role: 'user', content: 'What is in /a?' };
const setUp = useModelActivity();

function input(messages: ChatMessage[], overrides: Partial<ModelCallInput> = {}): ModelCallInput {
  return providerCallInput('openai-responses:gpt-scripted', messages, overrides);
}

describe('the OpenAI Responses provider against the scripted model', () => {
  it('responses: store false with encrypted reasoning included; reasoning is carried to the next round with the call output', async () => {
    const thought = 'Read /a first.';
    const { model, callModel } = await setUp(
      [
        {
          reasoning: thought,
          toolCalls: [{ name: 'files__read_file', arguments: { path: '/a' } }],
          usage: {
            prompt_tokens: 40,
            completion_tokens: 6,
            prompt_tokens_details: { cached_tokens: 32 },
            completion_tokens_details: { reasoning_tokens: 5 },
          },
        },
        { content: '/a holds A.' },
      ],
      [system, question],
    );

    const first = await callModel(input([system, question]));
    expect(model.requests[0]?.api).toBe('responses');
    expect(model.requests[0]?.body).toMatchObject({
      model: 'gpt-scripted',
      store: false,
      include: ['reasoning.encrypted_content'],
      tool_choice: 'auto',
      tools: [{ type: 'function', name: 'files__read_file', parameters: READ_FILE_TOOL.inputSchema, strict: false }],
      input: [
        { role: 'system', content: 'You are a file assistant.' },
        { role: 'user', content: 'What is in /a?' },
      ],
    });
    expect(first.message.content).toBeNull();
    expect(first.message.reasoning).toEqual([
      {
        type: 'openai_reasoning',
        id: expect.stringMatching(/^rs_/) as string,
        encryptedContent: encryptedReasoning(thought),
        summary: [thought],
      },
    ]);
    expect(first.finishReason).toBe('tool_calls');
    const counted = { inputTokens: 40, outputTokens: 6, totalTokens: 46, cacheReadTokens: 32, reasoningTokens: 5 };
    expect(first.usage).toEqual(counted);

    const call = first.message.toolCalls![0]!;
    const newMessages: ChatMessage[] = [
      first.message,
      { role: 'tool', toolCallId: call.id, name: call.name, content: 'A', outcome: 'ok' },
    ];
    const second = await callModel(input([system, question], { round: 2, newMessages }));
    expect(second.message.content).toBe('/a holds A.');
    expect((model.requests[1]?.body.input as unknown[]).slice(2)).toEqual([
      {
        type: 'reasoning',
        id: first.message.reasoning![0]!.type === 'openai_reasoning' ? first.message.reasoning![0]!.id : '',
        encrypted_content: encryptedReasoning(thought),
        summary: [{ type: 'summary_text', text: thought }],
      },
      { type: 'function_call', call_id: call.id, name: 'files__read_file', arguments: '{"path":"/a"}' },
      { type: 'function_call_output', call_id: call.id, output: 'A' },
    ]);
  });

  it('responses: a streamed answer publishes its text and records what the same request gets unstreamed', async () => {
    const script = [{ content: 'Both files are empty.', usage: { prompt_tokens: 30, completion_tokens: 7 } }];
    const streamed = await setUp(script, [system, question]);
    const result = await streamed.callModel({ ...input([system, question]), stream: true });
    const published = streamed.batches.map((batch) => batch.text).join('');
    expect(published).not.toBe('');
    expect('Both files are empty.'.startsWith(published)).toBe(true);

    const plain = await setUp(script, [system, question]);
    expect(await plain.callModel(input([system, question]))).toEqual(result);
  });

  it('responses: a 429 is retried after its retry-after; a 400 is not', async () => {
    const { callModel } = await setUp(
      [{ error: { status: 429, headers: { 'retry-after': '2' } } }, { error: { status: 400 } }],
      [system, question],
    );
    const rateLimited = await callModel(input([system, question])).catch((error: unknown) => error);
    expect(rateLimited).toMatchObject({
      type: FailureType.ModelRateLimited,
      nonRetryable: false,
      nextRetryDelay: 2000,
    });
    const badRequest = await callModel(input([system, question])).catch((error: unknown) => error);
    expect(badRequest).toMatchObject({ type: FailureType.ModelBadRequest, nonRetryable: true });
  });
});
