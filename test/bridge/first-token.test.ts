import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { subscribe } from '../../src/client/stream.js';
import { startTestAgent, type TestAgent } from '../../src/testing/agent.js';
import { createLocalEnvironment } from '../../src/testing/environment.js';
import { startScriptedModel, type ScriptedModel } from '../../src/testing/scripted-model/index.js';
import { askUpdate, endSignal } from '../../src/workflows/definitions.js';

/*
 * Time to first token as behaviour, not as milliseconds (those are measured by scripts/measure-first-token.mjs): the
 * first text reaches a subscriber while the model is still writing the answer. The answer streams a word every
 * 75 ms for about 3 s, far longer than one signal and one poll take even on a busy machine, so only text held back
 * until the model finished could arrive after it.
 */
const ANSWER = Array.from({ length: 40 }, (_, index) => `word${index}`).join(' ');
const MODEL_FINISHED = 'the model server finished sending the answer';
const FIRST_TEXT = 'the subscriber received the first text_delta';

let env: TestWorkflowEnvironment;
let model: ScriptedModel;
let agent: TestAgent;
/** What happened, in the order it happened. */
const happened: string[] = [];

beforeAll(async () => {
  // A real dev server, not the time-skipping one: the stream runs on real time, as in a deployment.
  env = await createLocalEnvironment();
  model = await startScriptedModel({
    script: [{ content: ANSWER, chunkDelayMs: 75 }],
    // Called once the last chunk of a streamed answer has been written.
    onRequest: () => happened.push(MODEL_FINISHED),
  });
  agent = await startTestAgent({ env, model });
});

afterAll(async () => {
  await agent?.close();
  await model?.close();
  await env?.teardown();
});

describe('streaming: time to first token', () => {
  it('first token: the first text_delta reaches a subscriber before the model has finished the answer', async () => {
    const conversationId = 'first-token';
    const handle = await agent.startConversation(conversationId);
    const controller = new AbortController();
    const firstText = (async () => {
      for await (const event of subscribe(env.client, conversationId, { signal: controller.signal })) {
        if (event.type !== 'text_delta') continue;
        happened.push(FIRST_TEXT);
        return event.text;
      }
      return undefined;
    })();
    try {
      const result = await handle.executeUpdate(askUpdate, { args: [{ id: 'q', content: 'Hi' }] });
      expect(result.answer).toBe(ANSWER);
      const text = await firstText;

      expect(happened[0]).toBe(FIRST_TEXT);
      expect(happened).toContain(MODEL_FINISHED);
      // The beginning of the answer, not all of it: streamed as it was written, not delivered with the result.
      expect(text).toBeDefined();
      expect(ANSWER.startsWith(text!)).toBe(true);
      expect(text!.length).toBeLessThan(ANSWER.length);
    } finally {
      controller.abort();
      await handle.signal(endSignal);
    }
  });
});
