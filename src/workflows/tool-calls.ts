import { ActivityFailure, ApplicationFailure, TimeoutFailure } from '@temporalio/common';
import type {
  CallToolInput,
  JsonObject,
  ToolAnnotations,
  ToolCall,
  ToolDefinition,
  ToolMessage,
  ToolOutcome,
} from '../shared/types.js';
import { errorMessage, FailureType } from '../shared/errors.js';
import { formatBytes, MAX_PART_BYTES, utf8Bytes } from '../shared/payload-limits.js';
import { argumentErrors } from './argument-schema.js';
import { DEFAULT_TOOL_ATTEMPTS } from './attempts.js';

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
    return invalidArguments(
      call,
      `Error: the arguments for ${call.name} are not valid JSON (${errorMessage(error)}). ` +
        'Call the tool again with a JSON object that matches its parameters schema.',
    );
  }
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) {
    return invalidArguments(
      call,
      `Error: the arguments for ${call.name} must be a JSON object, not ${parsed === null ? 'null' : Array.isArray(parsed) ? 'an array' : typeof parsed}.`,
    );
  }
  // A TypeScript tool's or a sub-agent's schema is checked here, before dispatch; an MCP server checks its own tools' arguments and its
  // error reaches the model as the result.
  const errors = tool.source !== undefined ? argumentErrors(tool.inputSchema, parsed as JsonObject) : [];
  if (errors.length > 0) {
    return invalidArguments(
      call,
      `Error: the arguments for ${call.name} do not match its parameters schema (${errors.join('; ')}), so the ` +
        'call was not run. Call the tool again with arguments that match the schema.',
    );
  }
  return { kind: 'dispatch', call, tool, arguments: parsed as JsonObject };
}

function invalidArguments(call: ToolCall, content: string): PreparedToolCall {
  return { kind: 'reject', call, message: toolMessage(call, 'invalid_arguments', content) };
}

export const SYNTHETIC_RESULTS = {
  unavailable: (call: ToolCall, reason: string) =>
    toolMessage(
      call,
      'unavailable',
      // Not "it did not run": an attempt that timed out may have reached the server. Only tools that are safe to
      // repeat, and calls whose last failure proves the request never left, get this (see `failedCallMayHaveRun`).
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
  outcomeUnknown: (call: ToolCall, reason: string) =>
    toolMessage(call, 'outcome_unknown', outcomeUnknownText(call.name, reason)),
  cancelled: (call: ToolCall) =>
    toolMessage(call, 'cancelled', 'The user interrupted the turn before this tool call finished; it was cancelled.'),
  budgetExhausted: (call: ToolCall) =>
    toolMessage(
      call,
      'budget_exhausted',
      "Not run: the turn's tool call budget is used up. Answer with the information you already have.",
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
 * rest get a budget-exhausted message instead.
 */
export function allowToolCalls(prepared: readonly PreparedToolCall[], allowed: number): PreparedToolCall[] {
  let left = allowed;
  return prepared.map((entry) => {
    if (entry.kind === 'reject') return entry;
    if (left === 0) {
      return { kind: 'reject', call: entry.call, message: SYNTHETIC_RESULTS.budgetExhausted(entry.call) };
    }
    left--;
    return entry;
  });
}

/** True when the server marks the tool read-only or idempotent, so running it twice does no harm. */
export function isSafeToRepeat(annotations: ToolAnnotations): boolean {
  return annotations.readOnlyHint === true || annotations.idempotentHint === true;
}

/**
 * What the model is told about a call that is not safe to repeat and may or may not have run; the activity gives the
 * same text when it does not repeat such a call (docs/mcp.md).
 */
export function outcomeUnknownText(toolName: string, reason: string): string {
  return (
    `The call to ${toolName} may or may not have taken effect: ${reason}. It was not retried automatically ` +
    'because running it twice could repeat its effect. Check the current state (for example with a read-only ' +
    'tool) before calling it again.'
  );
}

/**
 * Whether a tool call whose activity failed for good (not cancelled by the turn) may have run, so that the model must
 * hear "outcome unknown", not "unavailable, try again later". Read-only and idempotent tools: no, what matters is that
 * there is no result. Any other tool: yes, unless the last failure proves that its request was never sent:
 * - the activity's own failures say so: `ToolNotConfigured`, and `ToolTransportError` with `requestSent: false`;
 * - a timeout (the worker running the last attempt died or hung) only when that attempt recorded `not_sent` in its
 *   heartbeat details (docs/mcp.md), which `lastAttempt`, the retry policy's `maximumAttempts`, identifies.
 * Anything else (a worker shut down mid-call, an attempt lost after it recorded `sent` or nothing) may have run.
 */
export function failedCallMayHaveRun(error: unknown, annotations: ToolAnnotations, lastAttempt: number): boolean {
  if (isSafeToRepeat(annotations)) return false;
  const cause = error instanceof ActivityFailure ? error.cause : error;
  if (cause instanceof ApplicationFailure) {
    if (cause.type === FailureType.ToolNotConfigured) return false;
    const details = cause.details?.[0] as { requestSent?: unknown } | undefined;
    return !(cause.type === FailureType.ToolTransportError && details?.requestSent === false);
  }
  if (cause instanceof TimeoutFailure && error instanceof ActivityFailure) {
    const details = cause.lastHeartbeatDetails as { phase?: unknown; attempt?: unknown } | undefined;
    const lastAttemptFailed = error.retryState === 'MAXIMUM_ATTEMPTS_REACHED';
    return !(lastAttemptFailed && details?.phase === 'not_sent' && details.attempt === lastAttempt);
  }
  return true;
}

/** What a tool activity's input says of the tool it calls (`callTool`'s, and the MCP task activities'). */
export function calledTool(tool: ToolDefinition): Omit<CallToolInput['tool'], 'source'> {
  return {
    name: tool.name,
    server: tool.server,
    originalName: tool.originalName,
    annotations: tool.annotations,
    timeoutMs: tool.timeoutMs,
  };
}

/** The `callTool` activity's input for a call; `toolAttempts` is the conversation's (at least 1). */
export function callToolInput(
  call: ToolCall,
  tool: ToolDefinition,
  toolArguments: JsonObject,
  toolAttempts: number,
  questionsTo?: CallToolInput['questionsTo'],
): CallToolInput {
  return {
    toolCallId: call.id,
    tool: {
      ...calledTool(tool),
      // Only for a TypeScript tool, so the input of an MCP tool's call stays as it was.
      ...(tool.source !== undefined ? { source: tool.source } : {}),
    },
    arguments: toolArguments,
    // Only when not the default, so the input stays as it was: the activity counts its failed attempts.
    ...(toolAttempts !== DEFAULT_TOOL_ATTEMPTS ? { toolAttempts } : {}),
    // Only in a sub-agent's turn: its servers' questions go to the conversation that called it.
    ...(questionsTo ? { questionsTo } : {}),
  };
}
