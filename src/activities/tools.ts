import { Context } from '@temporalio/activity';
import { ApplicationFailure } from '@temporalio/common';
import { FailureType } from '../shared/errors.js';
import type { CallToolInput, CallToolResult, ToolAnnotations, ToolDefinition } from '../shared/types.js';
import { DEFAULT_TOOL_RESULT_MAX_CHARS, toolResultToText } from '../mcp/content.js';
import { McpProtocolError, McpToolNotConfiguredError, McpTransportError, errorMessage } from '../mcp/errors.js';
import type { McpPool } from '../mcp/pool.js';

/**
 * The tool activities: list the tools of all MCP servers, and run one tool call. Each tool call is its own
 * activity, so Temporal retries it on its own and a completed call is never run again when the turn resumes.
 */

/** How often a running tool call heartbeats; well inside the ~10 s heartbeat timeout the workflow sets. */
export const TOOL_HEARTBEAT_INTERVAL_MS = 2_000;

/**
 * Heartbeat details of a tool call. `sent` is recorded right before the request goes to the server, so a later
 * attempt (after a worker crash or a timeout) knows the tool may have run.
 */
export interface ToolCallHeartbeat {
  phase: 'connecting' | 'sent' | 'not_sent';
  /** The last progress notification of the call, if the server sends any. */
  progress?: { progress: number; total?: number; message?: string };
}

export interface ToolActivityDependencies {
  /** The worker's MCP pool (only these two methods are used). */
  pool: Pick<McpPool, 'listTools' | 'callTool'>;
  /** Cap on a tool result's text for the model. Default {@link DEFAULT_TOOL_RESULT_MAX_CHARS}; use `config.toolResultMaxChars`. */
  maxResultChars?: number;
  /** Heartbeat interval while a call runs. Default {@link TOOL_HEARTBEAT_INTERVAL_MS}. */
  heartbeatIntervalMs?: number;
}

export function createToolActivities(deps: ToolActivityDependencies) {
  const maxResultChars = deps.maxResultChars ?? DEFAULT_TOOL_RESULT_MAX_CHARS;
  const heartbeatIntervalMs = deps.heartbeatIntervalMs ?? TOOL_HEARTBEAT_INTERVAL_MS;

  return {
    /** The namespaced tools of every enabled MCP server, as plain JSON. Fails (retryable) naming any server that is down. */
    listTools: async (): Promise<ToolDefinition[]> => {
      try {
        return await deps.pool.listTools();
      } catch (error) {
        throw listToolsFailure(error);
      }
    },

    /** Run one tool call the workflow has validated. See docs/mcp.md for what each failure becomes. */
    callTool: async (input: CallToolInput): Promise<CallToolResult> => {
      const context = Context.current();
      const { tool } = input;
      if (context.info.attempt > 1 && !isSafeToRepeat(tool.annotations) && previousAttemptSent(context.info)) {
        // The earlier attempt sent the request and then the worker died or the attempt timed out: the tool may
        // have run, and running it again could do the side effect twice.
        return outcomeUnknown(tool.name, 'an earlier attempt of this call was interrupted after the request was sent');
      }
      let heartbeat: ToolCallHeartbeat = { phase: 'connecting' };
      const timer = setInterval(() => context.heartbeat(heartbeat), heartbeatIntervalMs);
      try {
        const result = await deps.pool.callTool(input.tool, input.arguments, {
          signal: context.cancellationSignal,
          timeoutMs: tool.timeoutMs,
          beforeSend: () => {
            heartbeat = { phase: 'sent' };
            // Immediately, not at the next tick: this is what a retry after a crash reads.
            context.heartbeat(heartbeat);
          },
          onProgress: (progress) => {
            heartbeat = { phase: 'sent', progress };
            context.heartbeat(heartbeat);
          },
        });
        const { text, truncated } = toolResultToText(result, maxResultChars);
        return { outcome: result.isError === true ? 'error' : 'ok', content: text, truncated };
      } catch (error) {
        if (context.cancellationSignal.aborted) throw context.cancellationSignal.reason ?? error;
        if (error instanceof McpTransportError && !error.requestSent) {
          // Tell the next attempt that this one's request never left, so it does not answer "outcome unknown".
          context.heartbeat({ phase: 'not_sent' } satisfies ToolCallHeartbeat);
        }
        const result = callToolFailure(error, tool);
        if (result instanceof Error) throw result;
        return result;
      } finally {
        clearInterval(timer);
      }
    },
  };
}

export type ToolActivities = ReturnType<typeof createToolActivities>;

/** True when the server marks the tool read-only or idempotent, so running it twice does no harm. */
export function isSafeToRepeat(annotations: ToolAnnotations): boolean {
  return annotations.readOnlyHint === true || annotations.idempotentHint === true;
}

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

/** `listTools` runs nothing, so every failure is a (normally retryable) `ToolTransportError` naming the server. */
export function listToolsFailure(error: unknown): ApplicationFailure {
  return transportFailure(error, error instanceof McpTransportError ? error.server : undefined, false);
}

function transportFailure(error: unknown, server: string | undefined, requestSent: boolean): ApplicationFailure {
  return ApplicationFailure.create({
    type: FailureType.ToolTransportError,
    message: errorMessage(error),
    nonRetryable: error instanceof McpTransportError && !error.retryable,
    details: [{ server: error instanceof McpTransportError ? error.server : server, requestSent }],
    cause: error instanceof Error ? error : undefined,
  });
}

/** The result the model gets when a call that is not safe to repeat may or may not have run. */
export function outcomeUnknown(toolName: string, reason: string): CallToolResult {
  return {
    outcome: 'outcome_unknown',
    content:
      `The call to ${toolName} may or may not have taken effect: ${reason}. It was not retried automatically ` +
      'because running it twice could repeat its effect. Check the current state (for example with a read-only ' +
      'tool) before calling it again.',
    truncated: false,
  };
}

function previousAttemptSent(info: { heartbeatDetails?: unknown }): boolean {
  const details = info.heartbeatDetails as Partial<ToolCallHeartbeat> | undefined;
  return details?.phase === 'sent';
}
