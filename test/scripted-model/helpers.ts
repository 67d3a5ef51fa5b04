import OpenAI from 'openai';
import { afterEach } from 'vitest';
import {
  startScriptedModel,
  type ScriptedModel,
  type ScriptedModelOptions,
} from '../../src/testing/scripted-model/index.js';

/**
 * Start a scripted model that is closed after the test, whatever its outcome.
 * Call at the top level of a test file's `describe` or module so that the hook is registered.
 */
export function useScriptedModels(): (options: ScriptedModelOptions) => Promise<ScriptedModel> {
  const started: ScriptedModel[] = [];
  afterEach(async () => {
    await Promise.all(started.splice(0).map((model) => model.close()));
  });
  return async (options) => {
    const model = await startScriptedModel(options);
    started.push(model);
    return model;
  };
}

/** The real client, as the model activity creates it; retries off so that each test decides what is sent. */
export function clientFor(model: ScriptedModel): OpenAI {
  return new OpenAI({ baseURL: model.baseUrl, apiKey: 'test', maxRetries: 0 });
}

/** The model activity's idempotency key. */
export function keyOf(workflowId: string, turn: number, round: number, runId = 'run-1'): string {
  return `${workflowId}/${runId}/turn-${turn}/round-${round}`;
}

/**
 * Request options that send an idempotency key. The `openai` client (v6) does not send its `idempotencyKey`
 * option for OpenAI, so the header is set directly, as the model activity does.
 */
export function withKey(key: string): OpenAI.RequestOptions {
  return { headers: { 'Idempotency-Key': key } };
}

export const MODEL = 'gpt-test';

export function userMessage(content: string): OpenAI.Chat.ChatCompletionMessageParam[] {
  return [{ role: 'user', content }];
}
