import OpenAI from 'openai';
import type { ChatCompletionMessageParam } from 'openai/resources/chat/completions';
import { toOpenAITool } from '../../src/worker/activities/model/call.js';
import { DEFAULT_TOOL_RESULT_MAX_CHARS, toolResultToText } from '../../src/worker/mcp/content.js';
import { McpPool } from '../../src/worker/mcp/pool.js';
import type { JsonObject } from '../../src/shared/types.js';
import { runMain, serveContender, WorkClock, type ContenderDriver } from '../harness.js';
import { promptOf, stepsOf, type TurnSpec } from '../workload.js';
import { parseContenderArguments } from './config.js';
import { benchMcpServer, timedPool } from './mcp.js';

/** Model calls per turn before the loop gives up, as durable-agent's default budget. */
const MAX_ROUNDS = 20;

/**
 * The loop users compare against: the openai client and the MCP pool called directly, in memory, with no durability.
 * It keeps the transcript in memory and carries it across the turns of a conversation.
 */
async function createInProcessDriver(config: {
  modelBaseUrl: string;
  mcpServerScript: string;
}): Promise<ContenderDriver> {
  const clock = new WorkClock();
  const openai = new OpenAI({ baseURL: config.modelBaseUrl, apiKey: 'bench', maxRetries: 0 });
  const pool = new McpPool([benchMcpServer(config.mcpServerScript)]);

  const runTurn = async (conversation: string, messages: ChatCompletionMessageParam[], spec: TurnSpec) => {
    const mcp = timedPool(pool, clock, () => conversation);
    const { tools } = await mcp.listTools();
    const byName = new Map(tools.map((tool) => [tool.name, tool]));
    messages.push({ role: 'user', content: promptOf(spec) });
    for (let round = 1; round <= MAX_ROUNDS; round++) {
      const completion = await clock.time(conversation, () =>
        openai.chat.completions.create(
          { model: 'scripted-model', messages, tools: tools.map(toOpenAITool), tool_choice: 'auto' },
          { headers: { 'Idempotency-Key': `${conversation}/in-process/turn-1/round-${round}` } },
        ),
      );
      const message = completion.choices[0]?.message;
      if (message === undefined) throw new Error('in-process: the model returned no choices');
      messages.push(message);
      const calls = (message.tool_calls ?? []).flatMap((call) => (call.type === 'function' ? [call] : []));
      if (calls.length === 0) return;
      for (const call of calls) {
        const tool = byName.get(call.function.name);
        if (tool === undefined) throw new Error(`in-process: unknown tool ${call.function.name}`);
        const result = await mcp.callTool(tool, JSON.parse(call.function.arguments) as JsonObject);
        messages.push({
          role: 'tool',
          tool_call_id: call.id,
          content: toolResultToText(result, DEFAULT_TOOL_RESULT_MAX_CHARS).text,
        });
      }
    }
    throw new Error(`in-process: no answer after ${MAX_ROUNDS} model calls`);
  };

  return {
    async runTurn(conversation, spec) {
      await runTurn(conversation, [], spec);
      return { workMs: clock.take(conversation) };
    },
    async runConversation(conversation, turns) {
      const messages: ChatCompletionMessageParam[] = [];
      for (const spec of turns) await runTurn(conversation, messages, spec);
      clock.take(conversation);
      return { steps: turns.reduce((total, turn) => total + stepsOf(turn.chain), 0) };
    },
    close: () => pool.close(),
  };
}

async function main(): Promise<void> {
  const parsed = parseContenderArguments(process.argv.slice(2));
  if (parsed.mode === 'replay') throw new Error('in-process: there is no history to replay');
  const { config } = parsed;
  await serveContender(() => createInProcessDriver(config));
}

runMain(main);
