import type { Context } from '@temporalio/activity';
import { ApplicationFailure } from '@temporalio/common';
import { errorMessage, FailureType } from '../../../shared/errors.js';
import { truncateText } from '../../../shared/payload-limits.js';
import type { CallToolInput, CallToolResult, ToolDefinition } from '../../../shared/types.js';
import { ToolError, type ToolCallContext, type ToolOutput } from '../../tools/define-tool.js';
import type { ToolRegistry } from '../../tools/registry.js';
import { isSafeToRepeat } from '../../../workflows/tool-calls.js';
import { failedAttempt } from '../calls/attempts.js';
import type { AttemptHeartbeat } from '../calls/heartbeat.js';
import { boundProgress } from '../calls/payload-limits.js';
import { outcomeUnknown, type ToolCallHeartbeat } from './call-records.js';

/**
 * One call of a TypeScript tool (src/worker/tools), inside the `callTool` activity, which has already refused to repeat a
 * call that may have run. Its failures follow the MCP tools' rules (docs/tools.md): a {@link ToolError} is a result
 * the model reads; anything else thrown, and a call past its `timeoutMs`, is retried when the tool is read-only or
 * idempotent and otherwise answered "outcome unknown", since the tool may have done its work before it failed.
 */

export interface FunctionCallSetting {
  context: Context;
  heartbeat: AttemptHeartbeat;
  maxResultChars: number;
  /** The attempts that may fail before the failure is final (`toolAttempts`). */
  attemptsAllowed: number;
}

export async function callFunctionTool(
  registry: ToolRegistry | undefined,
  input: CallToolInput,
  { context, heartbeat, maxResultChars, attemptsAllowed }: FunctionCallSetting,
): Promise<CallToolResult> {
  const { tool } = input;
  const functionTool = registry?.get(tool.originalName);
  if (functionTool === undefined) {
    throw ApplicationFailure.create({
      type: FailureType.ToolNotConfigured,
      nonRetryable: true,
      message:
        `This worker has no TypeScript tool named "${tool.originalName}" (it has: ${registry?.names.join(', ') || 'none'}); ` +
        "run every worker of the task queue with the same tools in createAgentWorker's `tools`.",
      details: [{ server: tool.server, tool: tool.originalName }],
    });
  }
  const parsed = functionTool.parse(input.arguments);
  if (!parsed.ok) {
    return {
      outcome: 'error',
      content: `Error: invalid arguments for ${tool.name}: ${parsed.error}`,
      truncated: false,
    };
  }
  // The call has started: from here on it may have taken effect (`sent`), whatever happens to this attempt.
  heartbeat.set({ phase: 'sent' } satisfies ToolCallHeartbeat);
  const abort = new AbortController();
  const cancelled = () => abort.abort(context.cancellationSignal.reason);
  context.cancellationSignal.addEventListener('abort', cancelled, { once: true });
  const timer = setTimeout(
    () => abort.abort(new Error(`the call did not finish within its timeout of ${tool.timeoutMs} ms`)),
    tool.timeoutMs,
  );
  const toolContext: ToolCallContext = {
    conversationId: conversationIdOf(context.info.workflowExecution?.workflowId ?? ''),
    workflowId: context.info.workflowExecution?.workflowId ?? '',
    callId: input.toolCallId,
    attempt: context.info.attempt,
    signal: abort.signal,
    heartbeat: (progress) =>
      heartbeat.beat(
        progress === undefined
          ? undefined
          : ({ phase: 'sent', progress: boundProgress(progress) } satisfies ToolCallHeartbeat),
      ),
  };
  try {
    // A tool that ignores its signal still lets the activity end when it is cancelled or times out.
    const output = await heartbeat.during(
      Promise.race([
        Promise.resolve().then(() => functionTool.execute(parsed.value, toolContext)),
        aborted(abort.signal),
      ]),
    );
    const { text, truncated } = truncateText(outputText(output), maxResultChars);
    return { outcome: 'ok', content: text, truncated };
  } catch (error) {
    if (context.cancellationSignal.aborted) throw context.cancellationSignal.reason ?? error;
    const result = functionToolFailure(error, tool);
    if (result instanceof Error) throw failedAttempt(context, attemptsAllowed, result);
    const { text, truncated } = truncateText(result.content, maxResultChars);
    return { ...result, content: text, truncated };
  } finally {
    clearTimeout(timer);
    context.cancellationSignal.removeEventListener('abort', cancelled);
  }
}

/**
 * What a failed call of a TypeScript tool becomes: a {@link ToolError} → an `error` result the model reads; anything
 * else → a retryable `ToolExecutionError` when the tool is safe to repeat, else `outcome_unknown`.
 */
export function functionToolFailure(
  error: unknown,
  tool: Pick<ToolDefinition, 'name' | 'annotations'>,
): CallToolResult | ApplicationFailure {
  if (error instanceof ToolError) return { outcome: 'error', content: `Error: ${error.message}`, truncated: false };
  if (!isSafeToRepeat(tool.annotations)) return outcomeUnknown(tool.name, errorMessage(error));
  return ApplicationFailure.create({
    type: FailureType.ToolExecutionError,
    message: `${tool.name} failed: ${errorMessage(error)}`,
    cause: error instanceof Error ? error : undefined,
  });
}

function outputText(output: ToolOutput): string {
  if (typeof output === 'string') return output;
  if (output === undefined) return 'Done (the tool returned no result).';
  return JSON.stringify(output);
}

function aborted(signal: AbortSignal): Promise<never> {
  return new Promise((_resolve, reject) =>
    signal.addEventListener(
      'abort',
      () => reject(signal.reason instanceof Error ? signal.reason : new Error(String(signal.reason))),
      { once: true },
    ),
  );
}

function conversationIdOf(workflowId: string): string {
  return workflowId.startsWith('conversation-') ? workflowId.slice('conversation-'.length) : workflowId;
}
