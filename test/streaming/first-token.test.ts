import type { TestWorkflowEnvironment } from '@temporalio/testing';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { subscribe } from '../../src/client/stream.js';
import { startTestAgent, type TestAgent } from '../../src/testing/agent.js';
import { createLocalEnvironment } from '../../src/testing/environment.js';
import type { Script } from '../../src/testing/scripted-model/index.js';
import { askUpdate, endSignal } from '../../src/workflows/definitions.js';

/** The model takes this long to its first token, as a hosted model does; then a word every 20 ms. */
const MODEL_FIRST_TOKEN_MS = 300;
const TURNS = 5;
const script: Script = (_request, { stepIndex }) =>
  stepIndex < TURNS * 2
    ? { content: 'The first token, then the rest of the answer.', delayMs: MODEL_FIRST_TOKEN_MS, chunkDelayMs: 20 }
    : undefined;

let env: TestWorkflowEnvironment;
let agent: TestAgent;

beforeAll(async () => {
  // A real dev server, not the time-skipping one: this measures latency as a deployment sees it.
  env = await createLocalEnvironment();
  agent = await startTestAgent({ env, script });
});

afterAll(async () => {
  await agent?.close();
  await env?.teardown();
});

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

describe('streaming: time to first token', () => {
  it('first token: through durable-agent against the model server directly (measured, logged)', async () => {
    const openai = new OpenAI({ baseURL: agent.model.baseUrl, apiKey: 'test', maxRetries: 0 });
    const direct: number[] = [];
    for (let index = 0; index < TURNS; index++) {
      const started = performance.now();
      const stream = await openai.chat.completions.create(
        { model: 'scripted-model', messages: [{ role: 'user', content: 'Hi' }], stream: true },
        { headers: { 'Idempotency-Key': `direct-${index}/run/turn-1/round-1` } },
      );
      for await (const chunk of stream) {
        if (chunk.choices[0]?.delta.content) break;
      }
      direct.push(performance.now() - started);
    }

    const durable: number[] = [];
    for (let index = 0; index < TURNS; index++) {
      const conversationId = `first-token-${index}`;
      const handle = await agent.startConversation(conversationId);
      const controller = new AbortController();
      const events = subscribe(env.client, conversationId, { signal: controller.signal });
      // Let the subscriber's first poll reach the workflow, as a viewer's would before the user sends.
      const firstText = (async () => {
        for await (const event of events) if (event.type === 'text_delta') return performance.now();
        return NaN;
      })();
      await new Promise((resolve) => setTimeout(resolve, 300));
      const started = performance.now();
      const asked = handle.executeUpdate(askUpdate, { args: [{ id: 'q', content: 'Hi' }] });
      durable.push((await firstText) - started);
      controller.abort();
      await asked;
      await handle.signal(endSignal);
    }

    const ratio = median(durable) / median(direct);
    console.log(
      `time to first token (median of ${TURNS}): model server directly ${median(direct).toFixed(0)} ms; ` +
        `through durable-agent ${median(durable).toFixed(0)} ms; ratio ${ratio.toFixed(2)}; ` +
        `direct ${JSON.stringify(direct.map(Math.round))}, durable-agent ${JSON.stringify(durable.map(Math.round))}`,
    );
    expect(durable.every((value) => value > 0)).toBe(true);
  });
});
