import Anthropic from '@anthropic-ai/sdk';
import { describe, expect, it } from 'vitest';
import { scriptedCompactionSummary } from '../../src/testing/scripted-model/index.js';
import { anthropicProvider } from '../../src/worker/activities/model/providers/anthropic.js';
import { openAIResponsesProvider } from '../../src/worker/activities/model/providers/openai-responses.js';
import type { ProviderRequest } from '../../src/worker/activities/model/providers/provider.js';
import type { ChatMessage } from '../../src/shared/types.js';
import { clientFor, useScriptedModels } from './helpers.js';

/**
 * The scripted model's provider-native compaction (docs/scripted-model.md#provider-native-compaction), through the
 * real SDKs: what it accepts and refuses, and what it answers, as the Responses API and Anthropic's beta API do.
 */

const startModel = useScriptedModels();
const LONG = 'The first fact is that the sky is green. ' + 'And then some more words. '.repeat(400);

async function thrownBy(call: () => Promise<unknown>): Promise<Error & { status?: number }> {
  try {
    await call();
  } catch (error) {
    return error as Error & { status?: number };
  }
  throw new Error('expected the call to fail');
}

function request(messages: ChatMessage[], threshold?: number): ProviderRequest {
  return {
    model: 'scripted-model',
    messages,
    instruction: undefined,
    tools: [],
    toolChoice: 'auto',
    temperature: undefined,
    maxCompletionTokens: undefined,
    thinking: undefined,
    responseFormat: undefined,
    idempotencyKey: 'test',
    signal: new AbortController().signal,
    providerCompaction: threshold === undefined ? {} : { threshold },
  };
}

describe('scripted model: Responses context_management', () => {
  it('refuses an unknown context_management type and unknown fields, as the API does, taking no step', async () => {
    const model = await startModel({ script: [{ content: 'fine' }] });
    const client = clientFor(model);
    const base = { model: 'gpt-test', input: 'Hi', store: false };

    const wrongType = await thrownBy(() =>
      client.responses.create({ ...base, context_management: [{ type: 'summarize' }] }),
    );
    expect(wrongType.status).toBe(400);
    expect(wrongType.message).toContain("Invalid value: 'summarize'. Supported values are: 'compaction'.");
    const extra = await thrownBy(() =>
      client.responses.create({
        ...base,
        context_management: [{ type: 'compaction', keep: 3 } as { type: string }],
      }),
    );
    expect(extra.message).toContain("Unknown parameter: 'context_management[0].keep'.");
    const threshold = await thrownBy(() =>
      client.responses.create({ ...base, context_management: [{ type: 'compaction', compact_threshold: 0 }] }),
    );
    expect(threshold.message).toContain("Invalid 'context_management[0].compact_threshold'");
    expect(model.requests.map((entry) => entry.stepIndex)).toEqual([null, null, null]);
  });

  it('answers past the threshold with a compaction item first; the provider keeps it and sends only what follows it', async () => {
    const model = await startModel({ script: [{ content: 'compacted answer' }, { content: 'next answer' }] });
    const provider = openAIResponsesProvider(clientFor(model));
    const first: ChatMessage[] = [
      { role: 'system', content: 'Be brief.' },
      { role: 'user', content: LONG },
    ];

    const answer = await provider.call(request(first, 1_000));
    expect(answer.contextEdits).toEqual([{ type: 'compaction' }]);
    const item = answer.message.providerCompaction;
    expect(item?.type).toBe('openai_compaction');
    expect(scriptedCompactionSummary(item?.type === 'openai_compaction' ? item.encryptedContent : '')).toBe(
      '- The first fact is that the sky is green.',
    );
    // Under the threshold: no compaction.
    await provider.call(request([...first, answer.message, { role: 'user', content: 'And now?' }], 1_000));
    const input = model.requests[1]!.body.input as { type?: string; role?: string; content?: unknown }[];
    expect(input.map((entry) => entry.type ?? entry.role)).toEqual(['system', 'compaction', 'assistant', 'user']);
    expect(JSON.stringify(input)).not.toContain('And then some more words.');
    expect(model.requests.map((entry) => entry.body.context_management)).toEqual([
      [{ type: 'compaction', compact_threshold: 1_000 }],
      [{ type: 'compaction', compact_threshold: 1_000 }],
    ]);
  });
});

describe('scripted model: Anthropic context editing', () => {
  const anthropicFor = (baseURL: string) => new Anthropic({ baseURL, apiKey: 'test', maxRetries: 0 });
  const base = { model: 'claude-test', max_tokens: 100, messages: [{ role: 'user' as const, content: 'Hi' }] };

  it('refuses context_management without the beta header, unknown edits, and a compaction trigger under 50,000', async () => {
    const model = await startModel({ script: [] });
    const client = anthropicFor(model.anthropicBaseUrl);

    const plain = await thrownBy(() =>
      client.messages.create({ ...base, context_management: { edits: [] } } as Anthropic.MessageCreateParams),
    );
    expect(plain.status).toBe(400);
    expect(plain.message).toContain('context_management: Extra inputs are not permitted');
    const unknown = await thrownBy(() =>
      client.beta.messages.create({
        ...base,
        betas: ['context-management-2025-06-27'],
        context_management: { edits: [{ type: 'clear_everything' } as never] },
      }),
    );
    expect(unknown.message).toContain("Input tag 'clear_everything' found using 'type' does not match");
    const low = await thrownBy(() =>
      client.beta.messages.create({
        ...base,
        betas: ['compact-2026-01-12'],
        context_management: { edits: [{ type: 'compact_20260112', trigger: { type: 'input_tokens', value: 1_000 } }] },
      }),
    );
    expect(low.message).toContain('trigger.value: Input should be greater than or equal to 50000');
    const thinking = await thrownBy(() =>
      client.beta.messages.create({
        ...base,
        betas: ['context-management-2025-06-27'],
        context_management: { edits: [{ type: 'clear_thinking_20251015' }] },
      }),
    );
    expect(thinking.message).toContain('clear_thinking_20251015 requires thinking to be enabled');
  });

  it('clears old tool results and compacts past their triggers, and the provider reports both', async () => {
    const model = await startModel({ script: [{ content: 'edited answer' }], contextWindow: 200_000 });
    const provider = anthropicProvider(anthropicFor(model.anthropicBaseUrl));
    const big = 'result text '.repeat(6_000);
    const messages: ChatMessage[] = [{ role: 'user', content: LONG }];
    for (let call = 1; call <= 5; call++) {
      messages.push({
        role: 'assistant',
        content: null,
        toolCalls: [{ id: `toolu_${call}`, name: 'read', arguments: '{}' }],
      });
      messages.push({ role: 'tool', toolCallId: `toolu_${call}`, name: 'read', content: big, outcome: 'ok' });
    }
    messages.push({ role: 'user', content: 'Go on.' });

    // The window's 80% (62,500 tokens): clear at 39,062, compact at 62,500.
    const answer = await provider.call(request(messages, 62_500));
    const [edit] = answer.contextEdits ?? [];
    expect(edit).toMatchObject({ type: 'clear_tool_uses_20250919', clearedToolUses: 2 });
    expect(edit?.clearedInputTokens).toBeGreaterThan(30_000);
    // Cleared, the input is under the compaction trigger: no compaction.
    expect(answer.contextEdits).toHaveLength(1);
    expect(answer.message).toMatchObject({ content: 'edited answer' });
    expect(answer.message.providerCompaction).toBeUndefined();
    expect(model.requests[0]!.headers['anthropic-beta']).toBe('context-management-2025-06-27,compact-2026-01-12');
  });
});
