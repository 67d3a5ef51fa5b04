import type { JsonObject, ToolCall, ToolDefinition, ToolMessage, ToolOutcome } from '../shared/types.js';
import { errorMessage } from '../shared/errors.js';
import { formatBytes, MAX_PART_BYTES, utf8Bytes } from '../shared/payload-limits.js';

/**
 * The boundary between tool failures the model should see and failures the infrastructure retries: everything here
 * becomes a tool message for the model. Pure functions, so unit tests cover them without Temporal.
 */

export type PreparedToolCall =
  | { kind: 'dispatch'; call: ToolCall; tool: ToolDefinition; arguments: JsonObject }
  | { kind: 'reject'; call: ToolCall; message: ToolMessage };

export function toolMessage(call: ToolCall, outcome: ToolOutcome, content: string): ToolMessage {
  return { role: 'tool', toolCallId: call.id, name: call.name, outcome, content };
}

/** Check one tool call against the turn's recorded tools before anything is sent to a server. */
export function prepareToolCall(call: ToolCall, tools: ReadonlyMap<string, ToolDefinition>): PreparedToolCall {
  const tool = tools.get(call.name);
  if (tool === undefined) {
    const available = [...tools.keys()];
    const list = available.length > 0 ? `Available tools: ${available.join(', ')}.` : 'No tools are available.';
    return {
      kind: 'reject',
      call,
      message: toolMessage(call, 'unknown_tool', `Error: there is no tool named "${call.name}". ${list}`),
    };
  }
  // The worker drops arguments that do not fit in its result (oversizedArgumentsBytes); any larger than it keeps are
  // refused too.
  const argumentsBytes = call.oversizedArgumentsBytes ?? utf8Bytes(call.arguments);
  if (call.oversizedArgumentsBytes !== undefined || argumentsBytes > MAX_PART_BYTES) {
    return { kind: 'reject', call, message: SYNTHETIC_RESULTS.argumentsTooLarge(call, argumentsBytes) };
  }
  const text = call.arguments.trim() === '' ? '{}' : call.arguments;
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (error) {
    const reason = errorMessage(error);
    return {
      kind: 'reject',
      call,
      message: toolMessage(
        call,
        'invalid_arguments',
        `Error: the arguments for ${call.name} are not valid JSON (${reason}). ` +
          'Call the tool again with a JSON object that matches its parameters schema.',
      ),
    };
  }
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) {
    return {
      kind: 'reject',
      call,
      message: toolMessage(
        call,
        'invalid_arguments',
        `Error: the arguments for ${call.name} must be a JSON object, not ${parsed === null ? 'null' : Array.isArray(parsed) ? 'an array' : typeof parsed}.`,
      ),
    };
  }
  return { kind: 'dispatch', call, tool, arguments: parsed as JsonObject };
}

export const SYNTHETIC_RESULTS = {
  unavailable: (call: ToolCall, reason: string) =>
    toolMessage(
      call,
      'unavailable',
      // Not "it did not run": an attempt that timed out may have reached the server. Only tools that are safe to
      // repeat get this far (others get "outcome unknown"), so what matters is that there is no result.
      `Error: the tool ${call.name} is unavailable right now (${reason}) and gave no result. ` +
        'Continue without it or try again later.',
    ),
  argumentsTooLarge: (call: ToolCall, bytes: number) =>
    toolMessage(
      call,
      'invalid_arguments',
      `Error: the arguments for ${call.name} (${formatBytes(bytes)}) did not fit in the ${formatBytes(MAX_PART_BYTES)} ` +
        "that one answer's tool calls can carry together, so the call was not run. Do the work in smaller calls " +
        '(for example, write a large text in several parts).',
    ),
  resultTooLarge: (call: ToolCall, reason: string) =>
    toolMessage(
      call,
      'result_too_large',
      `Error: the call to ${call.name} ran, but its result was too large to be recorded in the workflow history ` +
        `(Temporal refused it: ${reason}), so there is no result. It was not run again: any effect it has took place ` +
        'once. If you need its output, ask for less of it (a smaller range, page or filter).',
    ),
  cancelled: (call: ToolCall) =>
    toolMessage(call, 'cancelled', 'The user interrupted the turn before this tool call finished; it was cancelled.'),
  budgetExhausted: (call: ToolCall, limit: string) =>
    toolMessage(
      call,
      'budget_exhausted',
      `Not run: the turn's ${limit} budget is used up. Answer with the information you already have.`,
    ),
  timeBudgetCancelled: (call: ToolCall) =>
    toolMessage(
      call,
      'budget_exhausted',
      "The turn's time budget ran out while this tool was running; it was cancelled and may or may not have taken effect.",
    ),
} as const;

/**
 * Decide up front which prepared calls run: the first `allowed` that may be dispatched, in the model's order; the
 * rest get a budget-exhausted message instead (`limitName` says which budget, e.g. "tool call").
 */
export function allowToolCalls(
  prepared: readonly PreparedToolCall[],
  allowed: number,
  limitName: string,
): PreparedToolCall[] {
  let left = allowed;
  return prepared.map((entry) => {
    if (entry.kind === 'reject') return entry;
    if (left === 0) {
      return { kind: 'reject', call: entry.call, message: SYNTHETIC_RESULTS.budgetExhausted(entry.call, limitName) };
    }
    left--;
    return entry;
  });
}
