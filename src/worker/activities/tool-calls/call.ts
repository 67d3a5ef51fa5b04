import { Context } from '@temporalio/activity';
import { ApplicationFailure } from '@temporalio/common';
import { FailureType, errorMessage } from '../../../shared/errors.js';
import { isInputRequiredResult, type InputRequiredResult } from '@modelcontextprotocol/client';
import type { CallToolInput, CallToolInputRequired, CallToolResult, ToolDefinition } from '../../../shared/types.js';
import type { CallToolTaskCreated, ToolTask } from '../../../shared/tool-tasks.js';
import { DEFAULT_TOOL_RESULT_MAX_CHARS, toolResultToText } from '../../mcp/content.js';
import { McpProtocolError, McpToolNotConfiguredError, McpTransportError } from '../../mcp/errors.js';
import { readInputRequired } from '../../mcp/input-required.js';
import type { McpCallOptions, McpInputRounds, McpPool, ToolListing } from '../../mcp/pool.js';
import type { Redactor } from '../../../shared/redaction.js';
import { formatBytes, MAX_PART_BYTES } from '../../../shared/payload-limits.js';
import { DEFAULT_TOOL_ATTEMPTS, errorAttemptsAllowed } from '../../../workflows/attempts.js';
import { isSafeToRepeat } from '../../../workflows/tool-calls.js';
import { failedAttempt } from '../calls/attempts.js';
import { AttemptHeartbeat } from '../calls/heartbeat.js';
import { askTheConversation, type InputPoller } from './input-requests.js';
import { boundProgress, boundToolResult } from '../calls/payload-limits.js';
import type { ToolRegistry } from '../../tools/registry.js';
import { callFunctionTool } from './function-call.js';
import { outcomeUnknown, type ToolCallHeartbeat } from './call-records.js';

export type { ToolCallHeartbeat };

/**
 * The tool side of the worker: `callTool`, the activity that runs one tool call, and `listTools`, which the model
 * activity runs for the turn's first model call (`listTools` in its input; the tools come back in `turnSetup`), so a
 * turn records its tools without an activity of its own. Each tool call is its own activity, so Temporal retries it
 * on its own and a completed call is never run again when the turn resumes.
 *
 * Every error text here comes from the pool with the servers' secrets already redacted (src/worker/mcp/redaction.ts); what the
 * activity returns or throws is redacted again with all of the worker's secrets (../calls/outbound.ts).
 */

export interface ToolActivityDependencies {
  /** The worker's MCP pool (only these two methods are used). */
  pool: Pick<McpPool, 'listTools' | 'callTool'>;
  /**
   * Cap on a tool result's text for the model. Default {@link DEFAULT_TOOL_RESULT_MAX_CHARS}; use
   * `config.toolResultMaxChars`. Whatever it is, a result is also cut to fit a Temporal payload.
   */
  maxResultChars?: number;
  /** The worker's secrets, redacted from a progress message before it is recorded in a heartbeat. Default: none. */
  secrets?: Redactor;
  /**
   * Asks the conversation a server's question (MCP elicitation) and polls for the answer; by default (the worker's)
   * the internal `requestInput` update of the call's own run. Without it, servers' questions are answered `cancel`.
   */
  askInput?: InputPoller;
  /** The worker's TypeScript tools (src/worker/tools): a call whose definition says `source: 'function'` runs one. */
  functionTools?: ToolRegistry;
}

export function createToolActivities(deps: ToolActivityDependencies) {
  const maxResultChars = deps.maxResultChars ?? DEFAULT_TOOL_RESULT_MAX_CHARS;

  return {
    /**
     * The worker's TypeScript tools and the namespaced tools of every enabled MCP server that could be listed, as plain
     * JSON, and the servers that could not (left out of the turn, with the reason). Not an activity: the model
     * activity calls it. It does not fail for a server that is down: one broken server must not stop turns that the
     * others can serve.
     */
    listTools: async (): Promise<ToolListing> => {
      const listing = await deps.pool.listTools();
      return deps.functionTools ? deps.functionTools.withMcpTools(listing) : listing;
    },

    /**
     * Run one tool call the workflow has validated. See docs/mcp.md for what each failure becomes. A 2026-07-28 server
     * that needs answers first ends the activity with its questions (`input_required`): the workflow asks the person
     * and sends the call again as a new activity.
     */
    callTool: async (input: CallToolInput): Promise<CallToolResult | CallToolInputRequired | CallToolTaskCreated> => {
      const context = Context.current();
      const { tool } = input;
      if (context.info.attempt > 1 && !isSafeToRepeat(tool.annotations) && !previousAttemptNotSent(context.info)) {
        // The earlier attempt did not record that its request never left (the worker died, or it timed out): the
        // tool may have run, and running it again could do the side effect twice.
        return outcomeUnknown(
          tool.name,
          'an earlier attempt of this call was interrupted and may have sent the request (the worker stopped or the attempt timed out)',
        );
      }
      const heartbeat = AttemptHeartbeat.of(context);
      if (tool.source === 'function') {
        const attemptsAllowed = toolAttemptsAllowed(input);
        return callFunctionTool(deps.functionTools, input, { context, heartbeat, maxResultChars, attemptsAllowed });
      }
      heartbeat.set({ phase: 'connecting' } satisfies ToolCallHeartbeat);
      // The conversation's run: a server's question goes to it (./input-requests.ts), a sub-agent's to its caller's.
      const run = input.questionsTo ?? context.info.workflowExecution;
      try {
        const options: McpCallOptions & { rounds: McpInputRounds } = {
          signal: context.cancellationSignal,
          timeoutMs: tool.timeoutMs,
          // The workflow answers a 2026-07-28 server's questions, durably, with no activity open meanwhile.
          rounds: { inputResponses: input.inputResponses, requestState: input.requestState },
          // No heartbeat of its own: one server write per call is what a step's overhead is made of, and a retry's
          // safety rests on `not_sent` (below), not on this. The periodic heartbeat shows it.
          beforeSend: () => heartbeat.set({ phase: 'sent' } satisfies ToolCallHeartbeat),
          onProgress: (progress) =>
            heartbeat.beat({
              phase: 'sent',
              progress: boundProgress(deps.secrets?.value(progress) ?? progress),
            } satisfies ToolCallHeartbeat),
          onElicitation:
            deps.askInput &&
            run &&
            askTheConversation(deps.askInput, {
              target: run,
              callId: input.toolCallId,
              tool,
              attempt: context.info.attempt,
              cancelled: context.cancellationSignal,
            }),
        };
        // An MCP task: the server answers with the task, which the workflow asks about later (./task-calls.ts). A
        // 2026-07-28 server may answer any call so (its tasks extension); a 2025-11-25 one only a call with `task`.
        const calling = input.task
          ? deps.pool.callTool(input.tool, input.arguments, { ...options, acceptTasks: true, task: true })
          : deps.pool.callTool(input.tool, input.arguments, { ...options, acceptTasks: true });
        const result = await heartbeat.during(calling);
        if (isTaskCreated(result)) return { outcome: 'task', task: result.task };
        if (isInputRequiredResult(result)) return questionsOf(result, tool);
        // Cut to the setting and, whatever the setting, to what a Temporal payload may carry (src/shared/payload-limits.ts).
        const { text, truncated, limitedBy } = toolResultToText(result, maxResultChars);
        if (limitedBy === 'bytes') {
          context.log.warn(
            `The result of ${tool.name} was cut to ${formatBytes(MAX_PART_BYTES)} to fit a Temporal payload`,
          );
        }
        return { outcome: result.isError === true ? 'error' : 'ok', content: text, truncated };
      } catch (error) {
        if (context.cancellationSignal.aborted) throw context.cancellationSignal.reason ?? error;
        if (error instanceof McpTransportError && !error.requestSent) {
          // Tell the next attempt that this one's request never left, so it calls the tool again. The worker sends
          // the last heartbeat of an attempt with its failure.
          heartbeat.beat({ phase: 'not_sent', attempt: context.info.attempt } satisfies ToolCallHeartbeat);
        }
        const result = callToolFailure(error, tool);
        // A failure (not a result for the model) counts against `toolAttempts`, recorded with the heartbeat above.
        if (result instanceof Error) throw failedAttempt(context, toolAttemptsAllowed(input), result);
        return boundToolResult(result, maxResultChars);
      }
    },
  };
}

export type ToolActivities = ReturnType<typeof createToolActivities>;

/** A server's `input_required` answer: its questions for the workflow, or a refusal the model reads. */
function questionsOf(
  result: InputRequiredResult,
  tool: Pick<ToolDefinition, 'name' | 'server'>,
): CallToolResult | CallToolInputRequired {
  const reading = readInputRequired(result);
  if (reading.kind === 'refused') {
    return {
      outcome: 'error',
      content: `MCP server "${tool.server}", tool ${tool.name}: ${reading.reason}.`,
      truncated: false,
    };
  }
  return {
    outcome: 'input_required',
    questions: reading.questions,
    ...(result.requestState !== undefined ? { requestState: result.requestState } : {}),
  };
}

function isTaskCreated(result: object): result is { task: ToolTask } {
  return 'task' in result && !('content' in result);
}

/** The rule lives with the workflow's, which must agree with it (src/workflows/tool-calls.ts). */
export { isSafeToRepeat };

/**
 * The one place that decides what a failed tool call becomes (see docs/mcp.md). Returns a result for the model, or
 * the failure to throw:
 * - the server answered with a JSON-RPC error → an `error` result the model sees (it can fix its arguments);
 * - no enabled server offers the tool → non-retryable `ToolNotConfigured`;
 * - the request never reached the server → retryable `ToolTransportError` (the pool has dropped the connection);
 * - the request was sent and then the connection failed or the call timed out → retryable `ToolTransportError` for
 *   read-only or idempotent tools, otherwise an `outcome_unknown` result, since the tool may have run;
 * - anything else (a bug) → retryable `ToolTransportError` if safe to repeat, else `outcome_unknown`.
 */
export function callToolFailure(
  error: unknown,
  tool: Pick<ToolDefinition, 'name' | 'server' | 'annotations'>,
): CallToolResult | ApplicationFailure {
  const message = errorMessage(error);
  if (error instanceof McpProtocolError) {
    return { outcome: 'error', content: message, truncated: false };
  }
  if (error instanceof McpToolNotConfiguredError) {
    return ApplicationFailure.create({
      type: FailureType.ToolNotConfigured,
      message,
      nonRetryable: true,
      details: [{ server: error.server, tool: error.tool }],
    });
  }
  // Anything that is not a transport error is a bug somewhere; assume the worst (the request went out).
  const requestSent = error instanceof McpTransportError ? error.requestSent : true;
  if (requestSent && !isSafeToRepeat(tool.annotations)) return outcomeUnknown(tool.name, message);
  return transportFailure(error, tool.server, requestSent);
}

/** A `ToolTransportError`; `server` names the server when the error itself does not (it is no `McpTransportError`). */
function transportFailure(error: unknown, server: string, requestSent: boolean): ApplicationFailure {
  return ApplicationFailure.create({
    type: FailureType.ToolTransportError,
    message: errorMessage(error),
    nonRetryable: error instanceof McpTransportError && !error.retryable,
    details: [{ server: error instanceof McpTransportError ? error.server : server, requestSent }],
    cause: error instanceof Error ? error : undefined,
  });
}

/** The transport failures this call may have before its failure is final (`toolAttempts`, see ../calls/attempts.ts). */
function toolAttemptsAllowed(input: CallToolInput): number {
  return errorAttemptsAllowed(input.toolAttempts, DEFAULT_TOOL_ATTEMPTS);
}

/** True only when the attempt just before this one recorded, as it failed, that its request never left. */
function previousAttemptNotSent(info: { attempt: number; heartbeatDetails?: unknown }): boolean {
  const details = info.heartbeatDetails as Partial<ToolCallHeartbeat> | undefined;
  return details?.phase === 'not_sent' && details.attempt === info.attempt - 1;
}
