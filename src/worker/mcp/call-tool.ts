import {
  SdkError,
  SdkErrorCode,
  type CallToolRequestParams,
  type CallToolResult,
  type InputRequiredResult,
} from '@modelcontextprotocol/client';
import { errorMessage } from '../../shared/errors.js';
import type { JsonObject, ToolDefinition } from '../../shared/types.js';
import { linkSignal, untilAborted } from './abort-signals.js';
import { DEFAULT_ELICITATION_TIMEOUT_MS, isToolAllowed } from './config.js';
import { authorizationFailure, usesOAuth } from './connection-failures.js';
import { type CallInFlight, type ElicitationAnswer, type ElicitationHandler, PausableDeadline } from './elicitation.js';
import {
  describeRequestFailure,
  McpProtocolError,
  McpToolNotConfiguredError,
  McpTransportError,
  rejectionText,
} from './errors.js';
import { stderrHint, type ServerConnection, type Session } from './server-connection.js';
import type { ToolTask } from '../../shared/tool-tasks.js';
import { sendTaskCall } from './tasks.js';
import { declaringTasks, speaksExtension, taskOfAnswer } from './task-extension.js';

/** A tool to call: a definition from `McpPool.listTools`, or the workflow's recorded copy of one. */
export type McpToolTarget = Pick<ToolDefinition, 'server' | 'originalName'> & Partial<ToolDefinition>;

export interface McpCallOptions {
  /** Aborting it cancels the request: the SDK sends `notifications/cancelled` and the call rejects with its reason. */
  signal?: AbortSignal;
  /** Called with each progress notification of the call. */
  onProgress?: (progress: { progress: number; total?: number; message?: string }) => void;
  /**
   * Called after the connection is ready and the tool is known, right before the request is written. After this
   * point a failure may mean the tool ran. Called again if the pool re-sends on a fresh session.
   */
  beforeSend?: () => void;
  /**
   * Timeout of this call in ms, not counting the time the person takes to answer the server's questions. Default:
   * the definition's `timeoutMs`, else the server's configured `timeoutMs`.
   */
  timeoutMs?: number;
  /**
   * Asks the person a question the server sent during the call (MCP elicitation). Without it, every question is
   * answered `cancel`. The call waits at most the server's `elicitationTimeoutMs` in all for answers.
   */
  onElicitation?: ElicitationHandler;
  /**
   * Set by a caller that answers a 2026-07-28 server's questions itself (the workflow, durably): an `input_required`
   * answer then comes back as the result instead of going to `onElicitation`, and a call sent again carries the
   * answers and the server's state. Without it, such questions go to `onElicitation` inside the call.
   */
  rounds?: McpInputRounds;
  /**
   * Call it as an MCP task (`tools/call` with `task`, ./tasks.ts): the server answers with a task, which comes back as
   * `{ task }`, and the result later. A server that answers with a plain result anyway gets that result back.
   */
  task?: true;
  /**
   * Set by a caller that awaits tasks itself (the workflow): a 2026-07-28 server is told the client has the
   * `io.modelcontextprotocol/tasks` extension (./task-extension.ts), and may answer any call with a task, which comes
   * back as `{ task }`. No effect on a 2025-11-25 session, where only `task` makes a task.
   */
  acceptTasks?: true;
}

/** The answers of an earlier round of a multi round-trip call (2026-07-28), sent with the call again. */
export interface McpInputRounds {
  /** The person's answers, by the key the server gave each question. */
  inputResponses?: Record<string, ElicitationAnswer>;
  /** The server's opaque state from its last `input_required` answer, echoed verbatim. */
  requestState?: string;
}

/**
 * One `tools/call` on `server`. See `McpPool.callTool` for what it throws. Only with `options.rounds` can the result be
 * a 2026-07-28 server's `input_required` answer.
 */
export async function callServerTool(
  server: ServerConnection,
  target: McpToolTarget,
  args: JsonObject,
  options: McpCallOptions,
): Promise<CallToolResult | InputRequiredResult | { task: ToolTask }> {
  const { config } = server;
  const tool = target.originalName;
  if (!isToolAllowed(config, tool)) {
    throw new McpToolNotConfiguredError(
      `Tool "${tool}" of MCP server "${config.name}" is excluded by its allowTools/denyTools configuration.`,
      config.name,
      tool,
    );
  }
  const timeoutMs = options.timeoutMs ?? target.timeoutMs ?? config.timeoutMs;
  for (let attempt = 1; ; attempt += 1) {
    options.signal?.throwIfAborted();
    const reused = server.connected;
    // Starting a server can take seconds; a cancelled call should not wait for it (the start goes on for others).
    const session = await untilAborted(server.open(), options.signal);
    const tools = await untilAborted(server.sessionTools(session), options.signal);
    if (!tools.some((candidate) => candidate.name === tool)) {
      throw new McpToolNotConfiguredError(
        `MCP server "${config.name}" does not offer a tool "${tool}" any more; it offers: ` +
          `${tools.map((candidate) => candidate.name).join(', ') || 'no tools'}.`,
        config.name,
        tool,
      );
    }
    options.beforeSend?.();
    const link = linkSignal(options.signal);
    // The call's own timeout, paused while the person is asked (the SDK's would run on): it aborts the request with
    // the SDK's timeout error, which the failure handling below knows.
    const deadline = new PausableDeadline(
      timeoutMs,
      () => new SdkError(SdkErrorCode.RequestTimeout, 'Request timed out', { timeout: timeoutMs }),
    );
    const call = callInFlight(deadline, options.onElicitation, config.elicitationTimeoutMs);
    session.calls.add(call);
    // Progress comes through the session's own routes, not the SDK's handler, which can lose the last notifications.
    const progress = options.onProgress && session.progress.open(options.onProgress);
    // 2026-07-28: the server decides which calls become tasks, for a caller that declares it can take one.
    const extension = speaksExtension(session);
    const declared = extension && (options.task === true || options.acceptTasks === true);
    let answer: CallToolResult | InputRequiredResult;
    try {
      const params = callParams(tool, args, options.rounds, progress?.token);
      if (declared) params._meta = declaringTasks(params._meta);
      const signal = link.signal === undefined ? deadline.signal : AbortSignal.any([link.signal, deadline.signal]);
      if (options.task && !extension)
        return await sendTaskCall(session, params, { signal, timeout: NO_SDK_TIMEOUT_MS });
      answer = await session.client.callTool(params, {
        signal,
        // Never by the SDK: the deadline above is the call's timeout.
        timeout: NO_SDK_TIMEOUT_MS,
        // The activity's start-to-close timeout is derived from `timeoutMs`: a call kept alive by progress
        // notifications past it would be cut by Temporal anyway, so progress does not extend the timeout.
        resetTimeoutOnProgress: false,
        // Has no effect on a 2025-11-25 session, whose questions come as requests during the call.
        ...(options.rounds !== undefined ? { allowInputRequired: true } : {}),
      });
    } catch (error) {
      if (options.signal?.aborted) throw options.signal.reason ?? error;
      const failure = callFailure(error, { server, session, tool, timeoutMs });
      // One transparent re-send: when a reused session turns out to be gone before the request reached the server
      // (stdio process exited, HTTP session forgotten), nothing ran, so a fresh session can safely try again.
      if (failure.resendable && reused && attempt === 1) continue;
      throw failure.error;
    } finally {
      deadline.clear();
      session.calls.delete(call);
      progress?.close();
      link.release();
    }
    const task = extension ? taskOfAnswer(answer, { server: config.name, tool, declared }) : undefined;
    return task === undefined ? answer : { task };
  }
}

function callParams(
  tool: string,
  args: JsonObject,
  rounds: McpInputRounds | undefined,
  progressToken: string | undefined,
): CallToolRequestParams {
  const { inputResponses, requestState } = rounds ?? {};
  return {
    name: tool,
    arguments: args,
    ...(progressToken !== undefined && { _meta: { progressToken } }),
    ...(inputResponses !== undefined && Object.keys(inputResponses).length > 0 ? { inputResponses } : {}),
    ...(requestState !== undefined ? { requestState } : {}),
  };
}

/** The largest timer Node keeps (about 24 days); a larger one would fire at once. */
const NO_SDK_TIMEOUT_MS = 2_147_483_647;

/**
 * How the call answers its server's questions: through `onElicitation`, with the call's timeout paused meanwhile,
 * waiting at most `elicitationTimeoutMs` in all; once that is used up, or without a handler, the answer is `cancel`.
 */
function callInFlight(
  deadline: PausableDeadline,
  onElicitation: ElicitationHandler | undefined,
  elicitationTimeoutMs = DEFAULT_ELICITATION_TIMEOUT_MS,
): CallInFlight {
  let waitLeft = elicitationTimeoutMs;
  return {
    async ask(request, signal): Promise<ElicitationAnswer> {
      if (onElicitation === undefined || waitLeft <= 0) return { action: 'cancel' };
      const startedAt = Date.now();
      deadline.pause();
      try {
        return await onElicitation(request, { waitMs: waitLeft, signal });
      } finally {
        waitLeft -= Date.now() - startedAt;
        deadline.resume();
      }
    },
  };
}

/**
 * What a failed `tools/call` becomes: the error to throw, and whether re-sending it is safe (only when the request
 * never reached the server). Drops the session when the failure shows it is broken.
 */
function callFailure(
  error: unknown,
  call: { server: ServerConnection; session: Session; tool: string; timeoutMs: number },
): { error: Error; resendable: boolean } {
  const { server, session } = call;
  const name = server.config.name;
  const where = `MCP server "${name}", tool "${call.tool}"`;
  const refused = authorizationFailure(server.config, error);
  if (refused !== undefined) {
    server.discard(session, 'its authorization failed');
    return { error: refused, resendable: false };
  }
  const failure = describeRequestFailure(error);
  switch (failure.kind) {
    case 'protocol':
      return {
        error: new McpProtocolError(
          `${where} answered with error ${failure.code}: ${protocolErrorText(error)}`,
          name,
          failure.code,
        ),
        resendable: false,
      };
    case 'rejected':
      server.discard(session, `the server refused a request (HTTP ${failure.status})`);
      return {
        error: new McpTransportError(
          `${where}: the server ${rejectionText(failure.status, usesOAuth(server.config))} (${errorMessage(error)})`,
          {
            server: name,
            requestSent: false,
            retryable: false,
            cause: error,
          },
        ),
        resendable: false,
      };
    case 'session_lost':
    case 'not_sent': {
      server.discard(session, `request failed before reaching the server: ${errorMessage(error)}`);
      const retryable = failure.kind === 'session_lost' || failure.retryable;
      return {
        error: new McpTransportError(`${where}: the request did not reach the server: ${errorMessage(error)}`, {
          server: name,
          requestSent: false,
          retryable,
          cause: error,
        }),
        resendable: retryable,
      };
    }
    case 'sent':
      if (failure.connectionBroken) server.discard(session, `connection broke: ${errorMessage(error)}`);
      return {
        error: new McpTransportError(
          failure.timedOut
            ? `${where}: no answer within ${call.timeoutMs} ms`
            : `${where}: the connection failed during the call: ${errorMessage(error)}${stderrHint(session)}`,
          { server: name, requestSent: true, timedOut: failure.timedOut, cause: error },
        ),
        resendable: false,
      };
  }
}

/** The server's own words: the SDK prefixes `MCP error <code>: `, once per hop (so twice when a server re-throws). */
function protocolErrorText(error: unknown): string {
  return errorMessage(error).replace(/^(MCP error -?\d+: )+/, '');
}
