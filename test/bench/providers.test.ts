import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chooseContenders, readOptions } from '../../bench/options.js';
import { benchScript, promptOf } from '../../bench/workload.js';
import { startScriptedModel, type ScriptedModel } from '../../src/testing/scripted-model/index.js';

const contenderNames = async (args: string[]) =>
  (await chooseContenders(readOptions(args))).map((definition) => definition.name);

let model: ScriptedModel;
beforeAll(async () => {
  model = await startScriptedModel({ script: benchScript, name: 'the benchmark script' });
});
afterAll(() => model.close());

const prompt = promptOf({ chain: 2, modelDelayMs: 0 });
const echo = { type: 'object' as const, properties: { text: { type: 'string' } } };

describe('the benchmark on each provider', () => {
  it('--providers adds durable-agent on each provider but Chat Completions (durable-agent itself), --only or not', async () => {
    const args = ['--quick', '--only', 'durable-agent', '--providers', 'chat-completions,anthropic,openai-responses'];
    expect(await contenderNames(args)).toEqual([
      'temporal-floor',
      'durable-agent',
      'durable-agent-anthropic',
      'durable-agent-openai-responses',
    ]);
    expect(readOptions(args).outDir).toMatch(
      /bench\/dist\/runs\/quick_only-durable-agent_providers-chat-completions-anthropic-openai-responses$/,
    );
    await expect(contenderNames(['--providers', 'anthropic,gemini'])).rejects.toThrow(
      '--providers: unknown provider "gemini"; expected a comma-separated list of chat-completions, anthropic, openai-responses',
    );
  });

  it("the workload's script reads the turn from an Anthropic Messages request: one more echo, then the answer", async () => {
    const anthropic = new Anthropic({ baseURL: model.anthropicBaseUrl, apiKey: 'bench', maxRetries: 0 });
    const tools = [{ name: 'bench__echo', input_schema: echo }];
    const first: Anthropic.MessageParam[] = [
      { role: 'user', content: [{ type: 'text', text: prompt }] },
      {
        role: 'assistant',
        content: [{ type: 'tool_use', id: 'toolu_1', name: 'bench__echo', input: { text: 'step 1' } }],
      },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_1', content: 'step 1' }] },
    ];
    const next = await anthropic.messages.create({ model: 'scripted-model', max_tokens: 100, tools, messages: first });
    expect(next.content).toEqual([expect.objectContaining({ type: 'tool_use', input: { text: 'step 2' } })]);

    const second: Anthropic.MessageParam[] = [
      ...first,
      {
        role: 'assistant',
        content: [{ type: 'tool_use', id: 'toolu_2', name: 'bench__echo', input: { text: 'step 2' } }],
      },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_2', content: 'step 2' }] },
    ];
    const last = await anthropic.messages.create({ model: 'scripted-model', max_tokens: 100, tools, messages: second });
    expect(last.content).toEqual([expect.objectContaining({ type: 'text', text: 'done after 2 tool calls' })]);
  });

  it("the workload's script reads the turn from an OpenAI Responses request", async () => {
    const openai = new OpenAI({ baseURL: model.baseUrl, apiKey: 'bench', maxRetries: 0 });
    const tools: OpenAI.Responses.Tool[] = [{ type: 'function', name: 'bench__echo', parameters: echo, strict: false }];
    const input: OpenAI.Responses.ResponseInputItem[] = [
      { role: 'user', content: [{ type: 'input_text', text: prompt }] },
      { type: 'function_call', call_id: 'call_1', name: 'bench__echo', arguments: '{"text":"step 1"}' },
      { type: 'function_call_output', call_id: 'call_1', output: 'step 1' },
    ];
    const next = await openai.responses.create({ model: 'scripted-model', store: false, tools, input });
    expect(next.output).toEqual([
      expect.objectContaining({ type: 'function_call', name: 'bench__echo', arguments: '{"text":"step 2"}' }),
    ]);
  });
});
