import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { ApplicationFailure, WithStartWorkflowOperation, WorkflowUpdateFailedError } from '@temporalio/client';
import { FailureType } from '../shared/errors.js';
import type { conversationWorkflow } from '../workflows/conversation.js';
import { askUpdate, type IncomingMessage, type TurnResult } from '../workflows/definitions.js';
import {
  CONVERSATION_WORKFLOW_TYPE,
  isValidMessage,
  rejectInvalidMessage,
  type ConversationRuns,
} from './conversation-runs.js';
import {
  AskTimeoutError,
  ConversationEndedError,
  ConversationRollingOverError,
  DurableAgentClientError,
  MessageRejectedError,
  TooManyUpdatesError,
} from './errors.js';
import { isResourceExhausted, isUnavailable } from './grpc-retry.js';
import { conversationStatus } from './status.js';
import type { AskOptions, SendOptions } from './types.js';
import { toOutputFormat } from './output-format.js';

/** How long `ask` keeps retrying while the conversation continues as new, by default. */
const DEFAULT_ROLLING_OVER_WAIT_MS = 5 * 60_000;
/** How often the too-many-updates fallback polls the conversation's status. */
const ANSWER_POLL_MS = 500;

/** What asking needs besides the runs: sending by signal, for the too-many-updates fallback. */
export type SendMessage = (conversationId: string, content: string, options: SendOptions) => Promise<unknown>;

/**
 * Queue a message and wait for its turn's result, within the caller's `waitTimeoutMs` and `signal` (after which: an
 * `AskTimeoutError`, though the message may still be answered). `DurableAgentClient.ask` is the public way in.
 * @internal
 */
export async function askAndWait(
  runs: ConversationRuns,
  send: SendMessage,
  conversationId: string,
  content: string,
  options: AskOptions,
): Promise<TurnResult> {
  const message: IncomingMessage = {
    id: options.messageId ?? randomUUID(),
    content,
    ...(options.output ? { output: await toOutputFormat(options.output) } : {}),
  };
  const startedAt = Date.now();
  const controller = new AbortController();
  const timer =
    options.waitTimeoutMs === undefined ? undefined : setTimeout(() => controller.abort(), options.waitTimeoutMs);
  const onAbort = () => controller.abort();
  options.signal?.addEventListener('abort', onAbort);
  if (options.signal?.aborted) controller.abort();
  try {
    return await runs.client.withAbortSignal(controller.signal, () =>
      askUntilAnswered(runs, send, conversationId, message, options, controller.signal),
    );
  } catch (error) {
    if (controller.signal.aborted && !(error instanceof DurableAgentClientError)) {
      throw new AskTimeoutError(conversationId, message.id, Date.now() - startedAt, { cause: error });
    }
    throw error;
  } finally {
    clearTimeout(timer);
    options.signal?.removeEventListener('abort', onAbort);
  }
}

/**
 * Ask with update-with-start until the conversation answers: retried against the next run while it continues as new;
 * when Temporal refuses the update (10 in flight), sent by signal and waited for instead (unless told to throw).
 */
async function askUntilAnswered(
  runs: ConversationRuns,
  send: SendMessage,
  conversationId: string,
  message: IncomingMessage,
  options: AskOptions,
  signal: AbortSignal,
): Promise<TurnResult> {
  const rollingOverUntil = Date.now() + (options.rollingOverWaitMs ?? DEFAULT_ROLLING_OVER_WAIT_MS);
  for (let attempt = 1; ; attempt++) {
    try {
      return await runs.withTarget(
        conversationId,
        options.settings,
        async (target, start) => {
          if (target.kind !== 'running') rejectInvalidMessage(conversationId, message, target.input.settings);
          return await runs.client.workflow.executeUpdateWithStart(askUpdate, {
            args: [message],
            // The same message asked again reaches the same update (on the same run) instead of a second one.
            updateId: message.id,
            startWorkflowOperation: new WithStartWorkflowOperation<typeof conversationWorkflow>(
              CONVERSATION_WORKFLOW_TYPE,
              start,
            ),
          });
        },
        // A running conversation judges a message by its own settings (the update's validator): a message these
        // settings refuse is sent only once a look shows where it goes.
        { tryFirst: isValidMessage(message, options.settings) },
      );
    } catch (error) {
      // An update Temporal admitted and then dropped (UNAVAILABLE) is asked again: the same id reaches the same update.
      const rollingOver = updateFailure(error)?.type === FailureType.ConversationRollingOver;
      if (rollingOver || isUnavailable(error)) {
        if (Date.now() >= rollingOverUntil) {
          if (!rollingOver) throw error;
          throw new ConversationRollingOverError(conversationId, attempt, { cause: error });
        }
        await sleep(Math.min(100 * 1.5 ** (attempt - 1), 1_000), undefined, { signal });
        continue;
      }
      throwIfRefused(conversationId, error);
      if (!isResourceExhausted(error)) throw (await endedError(runs, conversationId, error)) ?? error;
      if (options.onTooManyUpdates === 'throw') throw new TooManyUpdatesError(conversationId, { cause: error });
      await send(conversationId, message.content, {
        messageId: message.id,
        settings: options.settings,
        ...(message.output ? { output: message.output } : {}),
      });
      return await waitForAnswer(runs, conversationId, message, signal);
    }
  }
}

/**
 * The too-many-updates fallback: the message is queued by signal; its answer is the status's `lastResult` once its
 * turn finishes, or what a later ask with the same id returns (the conversation keeps recent results). A run that
 * closes under the wait gives the answer it recorded, or `ConversationEndedError` with the reason it closed.
 */
async function waitForAnswer(
  runs: ConversationRuns,
  conversationId: string,
  message: IncomingMessage,
  signal: AbortSignal,
): Promise<TurnResult> {
  const done = new AbortController();
  const stop = () => done.abort();
  signal.addEventListener('abort', stop);
  const handle = runs.handle(conversationId);
  const polled = (async () => {
    for (;;) {
      const status = await conversationStatus(runs, conversationId);
      if (status.lastResult?.messageId === message.id) return status.lastResult;
      await sleep(ANSWER_POLL_MS, undefined, { signal: done.signal });
    }
  })();
  const asked = (async () => {
    for (;;) {
      try {
        return await handle.executeUpdate(askUpdate, { args: [message], updateId: message.id });
      } catch (error) {
        const retry =
          isResourceExhausted(error) ||
          isUnavailable(error) ||
          updateFailure(error)?.type === FailureType.ConversationRollingOver;
        if (!retry) throw error;
        await sleep(1_000, undefined, { signal: done.signal });
      }
    }
  })();
  try {
    return await Promise.race([polled, asked]);
  } catch (error) {
    throwIfRefused(conversationId, error);
    // A run that closed under the waiting message (`workflow execution already completed`).
    return await closedRunAnswer(runs, message, conversationId, error);
  } finally {
    done.abort();
    signal.removeEventListener('abort', stop);
    // The loser ends with an abort: nobody waits for it.
    polled.catch(() => undefined);
    asked.catch(() => undefined);
  }
}

/** The conversation's own refusals of a message, as the client's errors. */
function throwIfRefused(conversationId: string, error: unknown): void {
  const failure = updateFailure(error);
  if (failure?.type === FailureType.InvalidMessage) {
    throw new MessageRejectedError(conversationId, failure.message, { cause: error });
  }
  if (failure?.type === FailureType.ConversationEnded) {
    throw new ConversationEndedError(conversationId, 'ended', undefined, { cause: error });
  }
}

/**
 * `ConversationEndedError` when the conversation has ended (or its run failed or was terminated), to throw instead of
 * the Temporal error `cause` that a call to its closed run raised; `undefined` when it has not ended.
 */
async function endedError(
  runs: ConversationRuns,
  conversationId: string,
  cause: unknown,
): Promise<ConversationEndedError | undefined> {
  try {
    await runs.resolve(conversationId, undefined, { mustExist: true });
    return undefined;
  } catch (error) {
    if (!(error instanceof ConversationEndedError)) return undefined;
    return new ConversationEndedError(conversationId, error.reason, undefined, { cause });
  }
}

/**
 * What a waiting message gets when its run closed under the wait: the answer the run recorded before it closed (among
 * the last results it handed on), else `ConversationEndedError` with the reason it closed, else `cause` itself.
 */
async function closedRunAnswer(
  runs: ConversationRuns,
  message: IncomingMessage,
  conversationId: string,
  cause: unknown,
): Promise<TurnResult> {
  const latest = await runs.describe(conversationId).catch(() => undefined);
  if (latest?.status === 'COMPLETED') {
    const outcome = await runs.outcome(conversationId, latest.runId).catch(() => undefined);
    const results = [outcome?.state.lastResult, ...(outcome?.state.recentResults ?? [])];
    const recorded = results.find((result) => result?.messageId === message.id);
    if (recorded !== undefined) return recorded;
  }
  throw (await endedError(runs, conversationId, cause)) ?? cause;
}

/** The workflow's own failure behind a failed or rejected update, if that is what `error` is. */
function updateFailure(error: unknown): ApplicationFailure | undefined {
  if (!(error instanceof WorkflowUpdateFailedError)) return undefined;
  return error.cause instanceof ApplicationFailure ? error.cause : undefined;
}
