import type { RecordedRequest, ScriptFunction, ScriptStep } from '../src/testing/scripted-model/index.js';

/**
 * The benchmark's workload: a turn is a chain of `chain` tool calls, one per model call, then an answer
 * (`chain + 1` model calls and `chain` tool calls). Everything a turn needs is in its user message, so the script is
 * a pure function of the request: it works the same for every contender, whatever idempotency key (or none) their
 * model client sends, and however many conversations share the scripted model at once.
 */

/** Tool calls per turn in the main workload (eleven model calls, ten tool calls). */
export const CHAIN_LENGTH = 10;

/** Steps (model calls plus tool calls) of a turn with `chain` tool calls. */
export function stepsOf(chain: number): number {
  return 2 * chain + 1;
}

export interface TurnSpec {
  /** Tool calls in the turn. */
  chain: number;
  /** How long the scripted model waits before each answer, in ms. */
  modelDelayMs: number;
  /**
   * With this, each answer waits a delay drawn uniformly from `modelDelayMs`–`modelDelayMaxMs` instead (a hosted
   * model's 1–4 s, `--stack production`): the same distribution for every contender, not the same sequence.
   */
  modelDelayMaxMs?: number;
  /** Milliseconds between two streamed chunks of an answer, as a model writes word by word. Default 0: all at once. */
  chunkDelayMs?: number;
}

const PROMPT_PATTERN = /^bench chain=(\d+) delay=(\d+)(?:-(\d+))?(?: chunk=(\d+))?/;

/** The user message that asks for a turn, e.g. `bench chain=10 delay=200 #3` or `bench chain=0 delay=300 chunk=20`. */
export function promptOf(spec: TurnSpec, label = ''): string {
  const chunk = spec.chunkDelayMs ? ` chunk=${spec.chunkDelayMs}` : '';
  const upTo = spec.modelDelayMaxMs === undefined ? '' : `-${spec.modelDelayMaxMs}`;
  return `bench chain=${spec.chain} delay=${spec.modelDelayMs}${upTo}${chunk}${label ? ` #${label}` : ''}`;
}

export function parsePrompt(text: string): TurnSpec | undefined {
  const match = PROMPT_PATTERN.exec(text);
  if (!match) return undefined;
  const upTo = match[3] === undefined ? {} : { modelDelayMaxMs: Number(match[3]) };
  const chunk = match[4] === undefined ? {} : { chunkDelayMs: Number(match[4]) };
  return { chain: Number(match[1]), modelDelayMs: Number(match[2]), ...upTo, ...chunk };
}

/** The message shapes the script reads: chat completions messages as any client sends them. */
interface WireMessage {
  role: string;
  content?: unknown;
}

function textOf(content: unknown): string {
  if (typeof content === 'string') return content;
  if (Array.isArray(content)) {
    return content.map((part: { text?: unknown }) => (typeof part.text === 'string' ? part.text : '')).join('');
  }
  return '';
}

/**
 * The next step of a turn: read the turn's spec from the last user message, count the tool results since, and ask
 * for one more echo call or answer. The echo tool is found by name in the request's tools, since each contender
 * names it its own way (`bench__echo` through the MCP pool, `echo` through the Agents SDK).
 */
export function nextStep(messages: readonly WireMessage[], toolNames: readonly string[]): ScriptStep {
  let lastUser = -1;
  messages.forEach((message, index) => {
    if (message.role === 'user') lastUser = index;
  });
  const spec = lastUser === -1 ? undefined : parsePrompt(textOf(messages[lastUser]?.content));
  if (spec === undefined) {
    return {
      error: { status: 400, body: 'benchmark: the last user message is not a `bench chain=N delay=MS` prompt' },
    };
  }
  const done = messages.slice(lastUser + 1).filter((message) => message.role === 'tool').length;
  const delayMs = drawModelDelay(spec);
  const delay = {
    ...(delayMs > 0 ? { delayMs } : {}),
    ...(spec.chunkDelayMs ? { chunkDelayMs: spec.chunkDelayMs } : {}),
  };
  if (done >= spec.chain) return { content: `done after ${done} tool calls`, ...delay };
  const echo = toolNames.find((name) => name === 'echo' || name.endsWith('__echo'));
  if (echo === undefined) {
    return { error: { status: 400, body: `benchmark: no echo tool among [${toolNames.join(', ')}]` } };
  }
  return { toolCalls: [{ name: echo, arguments: { text: `step ${done + 1}` } }], ...delay };
}

/** The model's wait for one answer: `modelDelayMs`, or drawn uniformly up to `modelDelayMaxMs` when that is set. */
export function drawModelDelay(spec: Pick<TurnSpec, 'modelDelayMs' | 'modelDelayMaxMs'>): number {
  const { modelDelayMs: least, modelDelayMaxMs: most } = spec;
  if (most === undefined || most <= least) return least;
  return Math.round(least + Math.random() * (most - least));
}

type Block = { type?: string; role?: string; text?: unknown; content?: unknown; name?: unknown };

/**
 * The request's messages as the script reads them, whichever API it came to: Anthropic's `tool_result` blocks and the
 * Responses API's `function_call_output` items become `tool` messages.
 */
export function wireMessagesOf(request: RecordedRequest): WireMessage[] {
  if (request.api === 'messages') {
    const turns = (request.body.messages ?? []) as Block[];
    return turns.flatMap((turn): WireMessage[] => {
      if (!Array.isArray(turn.content)) return [{ role: turn.role ?? '', content: turn.content }];
      const blocks = turn.content as Block[];
      const text = blocks.filter((block) => block.type === 'text');
      const results = blocks.filter((block) => block.type === 'tool_result').map(() => ({ role: 'tool' }));
      return [...(text.length > 0 ? [{ role: turn.role ?? '', content: text }] : []), ...results];
    });
  }
  if (request.api === 'responses') {
    const items = (request.body.input ?? []) as Block[];
    return items.flatMap((item): WireMessage[] => {
      if (item.type === 'function_call_output') return [{ role: 'tool' }];
      return item.role === undefined ? [] : [{ role: item.role, content: item.content }];
    });
  }
  return request.messages;
}

/** The names of the tools the request offers, whichever API it came to. */
export function toolNamesOf(request: RecordedRequest): string[] {
  if (request.api === 'chat-completions') {
    return (request.tools ?? []).flatMap((tool) => (tool.type === 'function' ? [tool.function.name] : []));
  }
  return ((request.body.tools ?? []) as Block[]).flatMap((tool) => (typeof tool.name === 'string' ? [tool.name] : []));
}

/** The scripted model's script for every contender, on every API. */
export const benchScript: ScriptFunction = (request) => nextStep(wireMessagesOf(request), toolNamesOf(request));
