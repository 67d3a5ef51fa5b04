import Anthropic from '@anthropic-ai/sdk';
import { describe, expect, it } from 'vitest';
import { FailureType } from '../../src/shared/errors.js';
import { CONVERSATION_LABEL, EARLIER_SUMMARY_LABEL } from '../../src/shared/compaction.js';
import { toModelFailure } from '../../src/worker/activities/model/errors.js';
import { clientFor, keyOf, useScriptedModels, withKey } from './helpers.js';

const startModel = useScriptedModels();
const LONG = 'word '.repeat(2_000);

async function thrownBy(call: () => Promise<unknown>): Promise<unknown> {
  try {
    await call();
  } catch (error) {
    return error;
  }
  throw new Error('expected the call to fail');
}

describe('scripted model: contextWindow', () => {
  it("refuses a Chat Completions request over the window with OpenAI's context_length_exceeded, taking no step", async () => {
    const model = await startModel({ script: [{ content: 'short enough' }], contextWindow: 1_000 });
    const client = clientFor(model);

    const error = await thrownBy(() =>
      client.chat.completions.create({ model: 'gpt-test', messages: [{ role: 'user', content: LONG }] }),
    );
    const failure = toModelFailure(error, model.baseUrl);
    expect(failure.type).toBe(FailureType.ModelContextLengthExceeded);
    expect(failure.nonRetryable).toBe(true);
    const requested = Math.ceil(JSON.stringify(model.requests[0]!.body).length / 4);
    expect(failure.details).toEqual([
      { status: 400, code: 'context_length_exceeded', refusal: { limit: 1_000, requested } },
    ]);
    // The refusal took no step: the next request that fits gets the first.
    const answer = await client.chat.completions.create({
      model: 'gpt-test',
      messages: [{ role: 'user', content: 'Hi' }],
    });
    expect(answer.choices[0]?.message.content).toBe('short enough');
    expect(model.requests.map((request) => [request.status, request.stepIndex])).toEqual([
      [400, null],
      [200, 0],
    ]);
  });

  it("refuses an Anthropic Messages request with Anthropic's words, which name both counts", async () => {
    const model = await startModel({ script: [], contextWindow: 1_000 });
    const client = new Anthropic({ baseURL: model.anthropicBaseUrl, apiKey: 'test', maxRetries: 0 });

    const error = await thrownBy(() =>
      client.messages.create({ model: 'claude-test', max_tokens: 100, messages: [{ role: 'user', content: LONG }] }),
    );
    const failure = toModelFailure(error, model.anthropicBaseUrl);
    expect(failure.type).toBe(FailureType.ModelContextLengthExceeded);
    expect(failure.message).toMatch(/prompt is too long: \d+ tokens > 1000 maximum/);
    expect((failure.details?.[0] as { refusal: unknown }).refusal).toMatchObject({ limit: 1_000 });
  });

  it('refuses a Responses API request with its context_length_exceeded, which names no counts', async () => {
    const model = await startModel({ script: [], contextWindow: 1_000 });
    const client = clientFor(model);

    const error = await thrownBy(() => client.responses.create({ model: 'gpt-test', input: LONG }));
    const failure = toModelFailure(error, model.baseUrl);
    expect(failure.type).toBe(FailureType.ModelContextLengthExceeded);
    expect((failure.details?.[0] as { refusal: unknown }).refusal).toEqual({});
  });
});

describe('scripted model: summaries', () => {
  const summaryText =
    `${EARLIER_SUMMARY_LABEL}\n- The user is Ada.\n\n${CONVERSATION_LABEL}\n` +
    '[user] My cat is called Tom. He is grey.\n[assistant] Noted.\n[tool files__read] contents\n[user] I live in Oslo!';

  it('answers a summary request (its key ends in /compaction-<n>) with user-lines, taking no step', async () => {
    const model = await startModel({ script: [{ content: 'the turn answer' }], summaries: 'user-lines' });
    const client = clientFor(model);
    const key = `${keyOf('conversation-a', 3, 1)}/compaction-1`;

    const summary = await client.chat.completions.create(
      {
        model: 'gpt-test',
        messages: [
          { role: 'system', content: 'Summarize.' },
          { role: 'user', content: summaryText },
        ],
      },
      withKey(key),
    );
    expect(summary.choices[0]?.message.content).toBe('- The user is Ada.\n- My cat is called Tom.\n- I live in Oslo!');
    const turn = await client.chat.completions.create(
      { model: 'gpt-test', messages: [{ role: 'user', content: 'Hi' }] },
      withKey(keyOf('conversation-a', 3, 1)),
    );
    expect(turn.choices[0]?.message.content).toBe('the turn answer');
    expect(model.requests.map((request) => [request.conversation, request.stepIndex])).toEqual([
      ['conversation-a', null],
      ['conversation-a', 0],
    ]);
  });

  it('without the option, a summary request takes the next step like any other', async () => {
    const model = await startModel({ script: [{ content: 'a scripted summary' }] });
    const answer = await clientFor(model).chat.completions.create(
      { model: 'gpt-test', messages: [{ role: 'user', content: summaryText }] },
      withKey(`${keyOf('conversation-b', 1, 2)}/compaction-1`),
    );
    expect(answer.choices[0]?.message.content).toBe('a scripted summary');
  });
});
