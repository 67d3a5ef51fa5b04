import { expectedFailure, FailureType } from '../../../shared/errors.js';
import {
  formatBytes,
  jsonBytes,
  MAX_ACTIVITY_PAYLOAD_BYTES,
  MAX_PART_BYTES,
  truncateText,
  utf8Bytes,
} from '../../../shared/payload-limits.js';
import type { CallToolResult, ModelCallResult, ToolCall, ToolDefinition } from '../../../shared/types.js';

/**
 * The activities' side of the payload limits (src/shared/payload-limits.ts): what a model or an MCP server sends is cut
 * to fit before it becomes an activity result, with a marker the model reads and a warning in the worker's log,
 * instead of Temporal refusing the result and the call being retried.
 */

/** Where the warnings go: the activity context's logger fits. */
export interface PayloadLog {
  warn(message: string, meta?: Record<string, unknown>): void;
}

/** A tool result whose text (an MCP error's message, say) is cut like a result's: `maxChars` and the byte bound. */
export function boundToolResult(result: CallToolResult, maxChars: number): CallToolResult {
  const { text, truncated } = truncateText(result.content, maxChars);
  return truncated ? { ...result, content: text, truncated } : result;
}

/** Longest progress message kept in a tool call's heartbeat: the Web UI shows it, and nothing needs more. */
export const MAX_PROGRESS_MESSAGE_CHARS = 1_000;

/**
 * A server's progress notification as a heartbeat records it, its message cut: heartbeat details are a payload too,
 * and one too large would fail the call as `PayloadsTooLarge`, which the workflow reads as a refused result.
 */
export function boundProgress<T extends { message?: string }>(progress: T): T {
  const { message } = progress;
  if (message === undefined || message.length <= MAX_PROGRESS_MESSAGE_CHARS) return progress;
  return { ...progress, message: truncateText(message, MAX_PROGRESS_MESSAGE_CHARS).text };
}

/**
 * The turn's tool list, cut to `maxBytes` of JSON by leaving out the largest tools first: a server that sends a
 * schema of megabytes loses that tool, not the others' tools. The model is offered only what is kept (it is what the
 * workflow records), and the worker logs what was left out.
 */
export function fitToolList(
  tools: ToolDefinition[],
  log: PayloadLog,
  maxBytes: number = MAX_PART_BYTES,
): ToolDefinition[] {
  return fitToolListOnce(new Set())(tools, log, maxBytes);
}

/**
 * {@link fitToolList} for a worker: every turn lists its tools, and the same tools left out turn after turn are
 * logged once, not once per turn.
 */
export function fitToolListOnce(logged = new Set<string>()): typeof fitToolList {
  return (tools, log, maxBytes = MAX_PART_BYTES) =>
    cutToolList(tools, maxBytes, (omitted, message, meta) => {
      const key = omitted.map((tool) => tool.name).join('\n');
      if (logged.has(key)) return;
      logged.add(key);
      log.warn(message, meta);
    });
}

function cutToolList(
  tools: ToolDefinition[],
  maxBytes: number,
  report: (omitted: ToolDefinition[], message: string, meta: Record<string, unknown>) => void,
): ToolDefinition[] {
  const sizes = tools.map((tool) => jsonBytes(tool) + 1);
  let total = 1 + sizes.reduce((sum, size) => sum + size, 0);
  if (total <= maxBytes) return tools;
  const largestFirst = tools.map((_, index) => index).sort((a, b) => (sizes[b] ?? 0) - (sizes[a] ?? 0) || a - b);
  const omitted = new Set<number>();
  for (const index of largestFirst) {
    if (total <= maxBytes) break;
    omitted.add(index);
    total -= sizes[index] ?? 0;
  }
  const left = tools.filter((_, index) => omitted.has(index));
  report(
    left,
    `Left ${left.length} of ${tools.length} tools out of the turn: the tool list takes more than the ` +
      `${formatBytes(maxBytes)} a Temporal payload may carry here; the largest tools were left out first ` +
      '(logged once per worker for the same tools)',
    { omittedTools: left.map((tool) => `${tool.name} (${formatBytes(jsonBytes(tool))})`) },
  );
  return tools.filter((_, index) => !omitted.has(index));
}

/**
 * The model's answer, cut to `maxBytes` of JSON for its text and tool calls together. Tool calls are kept in the
 * model's order while they fit; one whose arguments do not fit keeps its id and name, with `{}` as arguments and
 * `oversizedArgumentsBytes` set, and the workflow answers it with an error instead of running it. The text gets what
 * is left and is cut with a marker. The worker logs what was cut.
 */
export function fitModelAnswer(
  result: ModelCallResult,
  log: PayloadLog,
  maxBytes: number = MAX_PART_BYTES,
): ModelCallResult {
  const { message } = result;
  const cuts: string[] = [];
  let used = 0;
  const toolCalls = message.toolCalls?.map((call): ToolCall => {
    const size = jsonBytes(call);
    if (used + size <= maxBytes) {
      used += size;
      return call;
    }
    const oversizedArgumentsBytes = utf8Bytes(call.arguments);
    const dropped: ToolCall = { id: call.id, name: call.name, arguments: '{}', oversizedArgumentsBytes };
    used += jsonBytes(dropped);
    cuts.push(`the arguments of tool call ${call.name} (${formatBytes(oversizedArgumentsBytes)}) were dropped`);
    return dropped;
  });
  let content = message.content;
  if (content !== null) {
    const cut = truncateText(content, Number.POSITIVE_INFINITY, Math.max(0, maxBytes - used));
    if (cut.truncated) cuts.push(`its text (${formatBytes(utf8Bytes(content))}) was cut`);
    content = cut.text;
  }
  if (cuts.length === 0) return result;
  log.warn(
    `The model's answer takes more than the ${formatBytes(maxBytes)} a Temporal payload may carry here: ` +
      `${cuts.join('; ')}`,
    { model: result.model },
  );
  return { ...result, message: { ...message, content, ...(toolCalls ? { toolCalls } : {}) } };
}

/**
 * The model call's result as it is, or a non-retryable `ModelResponseTooLarge` when it is still larger than an
 * activity result may be (the answer and tool list are cut already; only a model that sends thousands of tool calls,
 * or names of megabytes, gets here).
 */
export function checkModelResult(result: ModelCallResult): ModelCallResult {
  const bytes = jsonBytes(result);
  if (bytes <= MAX_ACTIVITY_PAYLOAD_BYTES) return result;
  const calls = result.message.toolCalls?.length ?? 0;
  throw expectedFailure({
    type: FailureType.ModelResponseTooLarge,
    nonRetryable: true,
    message:
      `The model's answer (${calls} tool call${calls === 1 ? '' : 's'}) makes a result of ${formatBytes(bytes)}, ` +
      `more than the ${formatBytes(MAX_ACTIVITY_PAYLOAD_BYTES)} an activity result may carry ` +
      '(Temporal refuses payloads over 2 MiB).',
  });
}
