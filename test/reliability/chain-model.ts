import type OpenAI from 'openai';
import type {
  RecordedRequest,
  ScriptFunction,
  ScriptStep,
  ScriptToolCall,
} from '../../src/testing/scripted-model/index.js';

/**
 * The model of the fault runs: a six-step tool chain decided from what the request contains, not from the script
 * position, so that one script serves every fault run and the answer lists the tool results the model was given. A
 * model call retried after a crash (same idempotency key) gets the step its first attempt got, answered or not.
 */

type WireMessage = OpenAI.Chat.ChatCompletionMessageParam;

/** Token counts of every answer: fixed, so that a turn's usage shows exactly how many model calls it counted. */
export const STEP_USAGE = { prompt_tokens: 100, completion_tokens: 10 };

const call = (name: string, args: Record<string, string | number> = {}): ScriptToolCall => ({ name, arguments: args });

/** Milliseconds the `slow` step of the chain takes. */
export const SLOW_MS = 2_000;

/** Six rounds of tool calls (eight calls), then the answer. Tool names are `<server>__<tool>`. */
export const CHAIN: readonly ScriptToolCall[][] = [
  [call('test__increment', { key: 'orders' })], // not idempotent
  [call('test__set_value', { key: 'status', value: 'paid' })], // idempotent
  [call('test__echo', { text: 'receipt' }), call('test__slow', { delayMs: SLOW_MS })], // read-only, in parallel
  [call('test__increment', { key: 'shipments' })],
  [call('effects__hang')], // not idempotent; its server's 6 s timeout ends it with "outcome unknown"
  [call('test__echo', { text: 'done' })],
];

/** Calls per tool (name on the server) of one uninterrupted chain. */
export const CHAIN_CALLS: Record<string, number> = { increment: 2, set_value: 1, echo: 2, slow: 1, hang: 1 };
/** Model calls of one chain: six rounds that ask for tools, and the answer. */
export const CHAIN_ROUNDS = CHAIN.length + 1;
export const CHAIN_TOOL_CALLS = CHAIN.flat().length;

/** The answer to an uninterrupted chain (any run whose tool results are the same gets the same answer). */
export const CHAIN_ANSWER =
  'Chain complete. test__increment: orders = 1; test__set_value: status = paid; test__echo: receipt; ' +
  `test__slow: slept ${SLOW_MS} ms; test__increment: shipments = 1; effects__hang: outcome unknown; ` +
  'test__echo: done.';

/** The user message that starts a chain; any other message is answered at once. */
export const CHAIN_REQUEST = 'Run the order chain.';

/** `<workflowId>/<runId>/turn-<n>/round-<r>` → r. */
export function roundOf(request: Pick<RecordedRequest, 'idempotencyKey'>): number | undefined {
  const match = /\/turn-\d+\/round-(\d+)/.exec(request.idempotencyKey ?? '');
  return match ? Number(match[1]) : undefined;
}

/** The messages of the current turn: everything after the last user message. */
function currentTurn(messages: readonly WireMessage[]): { user: string; rest: WireMessage[] } {
  const index = messages.map((message) => message.role).lastIndexOf('user');
  const user = messages[index];
  return { user: typeof user?.content === 'string' ? user.content : '', rest: messages.slice(index + 1) };
}

/** The tool results of the turn as `name: result`, an "outcome unknown" result shortened to those words. */
export function toolSummaries(messages: readonly WireMessage[]): string[] {
  const names = new Map<string, string>();
  const summaries: string[] = [];
  for (const message of currentTurn(messages).rest) {
    if (message.role === 'assistant') {
      for (const toolCall of message.tool_calls ?? []) {
        if (toolCall.type === 'function') names.set(toolCall.id, toolCall.function.name);
      }
    } else if (message.role === 'tool') {
      const content = typeof message.content === 'string' ? message.content : JSON.stringify(message.content);
      const summary = /may or may not have taken effect/.test(content) ? 'outcome unknown' : content;
      summaries.push(`${names.get(message.tool_call_id) ?? '?'}: ${summary}`);
    }
  }
  return summaries;
}

/** The step for a request: the next round of the chain, or the answer that lists every tool result. */
export function chainStep(request: Pick<RecordedRequest, 'messages'>): ScriptStep {
  const { user, rest } = currentTurn(request.messages);
  if (user !== CHAIN_REQUEST) return { content: `Noted: ${user}`, usage: STEP_USAGE };
  const round = rest.filter((message) => message.role === 'assistant').length;
  const toolCalls = CHAIN[round];
  if (toolCalls) return { toolCalls, usage: STEP_USAGE };
  return { content: `Chain complete. ${toolSummaries(request.messages).join('; ')}.`, usage: STEP_USAGE };
}

/**
 * The script for the scripted model: every conversation runs the chain; `delays` holds per conversation (workflow id)
 * and round how long the *first* attempt of that round's model call waits before answering, to keep a model call in
 * flight while the worker is killed. The retry (same key, so the same step) answers at once.
 */
export function chainScript(delays: Map<string, Map<number, number>>): ScriptFunction {
  return (request) => {
    const step = chainStep(request);
    const round = roundOf(request);
    const delayMs = round === undefined ? undefined : delays.get(request.conversation)?.get(round);
    return delayMs === undefined ? step : { ...step, delayMs, delayAttempts: 1 };
  };
}
