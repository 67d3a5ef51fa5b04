import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import {
  ApplicationFailure,
  Client,
  isGrpcServiceError,
  WithStartWorkflowOperation,
  WorkflowExecutionAlreadyStartedError,
  WorkflowNotFoundError,
  WorkflowUpdateFailedError,
  type Connection,
  type WorkflowExecutionInfo,
  type WorkflowHandle,
  type WorkflowIdReusePolicy,
} from '@temporalio/client';
import type { Payload } from '@temporalio/common';
import { loadConfig, type TemporalConfig } from '../config.js';
import { DURABLE_AGENT_SEARCH_ATTRIBUTES as SearchAttribute } from '../shared/search-attributes.js';
import { causeChain, FailureType, errorMessage } from '../shared/errors.js';
import type { ChatMessage } from '../shared/types.js';
import type { conversationWorkflow } from '../workflows/conversation.js';
import { validateMessage } from '../workflows/conversation-state.js';
import {
  askUpdate,
  conversationWorkflowId,
  endSignal,
  interruptSignal,
  statusQuery,
  transcriptQuery,
  userMessageSignal,
  type ConversationInput,
  type ConversationOutcome,
  type ConversationPhase,
  type ConversationSettings,
  type ConversationStatus,
  type IncomingMessage,
  type TurnResult,
} from '../workflows/definitions.js';
import { connectTemporal } from './connection.js';
import {
  AskTimeoutError,
  ConversationEndedError,
  ConversationNotFoundError,
  ConversationRollingOverError,
  DurableAgentClientError,
  MessageRejectedError,
  TooManyUpdatesError,
  type EndedReason,
} from './errors.js';
import { TranscriptChain, type ConversationTranscriptPage } from './transcript.js';

/** The conversation workflow's registered name (the workflow function's name). */
export const CONVERSATION_WORKFLOW_TYPE = 'conversationWorkflow';
/** How long `ask` keeps retrying while the conversation continues as new, by default. */
export const DEFAULT_ROLLING_OVER_WAIT_MS = 5 * 60_000;
/** How often the too-many-updates fallback polls the conversation's status. */
const ANSWER_POLL_MS = 500;
/** gRPC status RESOURCE_EXHAUSTED. */
const GRPC_RESOURCE_EXHAUSTED = 8;

type ConversationHandle = WorkflowHandle<typeof conversationWorkflow>;

export interface DurableAgentClientOptions {
  /** A connected Temporal client; its namespace is the conversations' namespace. */
  client: Client;
  /** Task queue of the durable-agent workers; default `DURABLE_AGENT_TASK_QUEUE` or `durable-agent`. */
  taskQueue?: string;
}

export interface ConnectOptions {
  /** Cluster settings; default `loadConfig().temporal` (TEMPORAL_ADDRESS or localhost:7233, namespace, TLS, API key). */
  temporal?: TemporalConfig;
  /** Default `DURABLE_AGENT_TASK_QUEUE` or `durable-agent`. */
  taskQueue?: string;
}

export interface StartOptions {
  /** Settings of a new conversation (ignored when it exists and runs). Default none: the worker's defaults. */
  settings?: ConversationSettings;
  /** A first message to queue. */
  message?: string;
  /** Id of that message; default a random UUID. */
  messageId?: string;
}

export interface StartResult {
  conversationId: string;
  workflowId: string;
  runId: string;
  /** True when this call created the conversation. */
  created: boolean;
  /** True when this call reopened a conversation whose run had closed idle. */
  reopened: boolean;
  /** Id of the queued message, when one was given. */
  messageId?: string;
}

export interface SendOptions {
  /** Makes the send idempotent: the conversation answers a message id once. Default a random UUID. */
  messageId?: string;
  /**
   * Settings used when this call creates or reopens the conversation; a running conversation keeps its own. Default:
   * none for a new conversation, the previous run's settings for a reopened one.
   */
  settings?: ConversationSettings;
}

export interface SendResult {
  conversationId: string;
  workflowId: string;
  /** The run the message was delivered to. */
  runId: string;
  messageId: string;
  created: boolean;
  reopened: boolean;
}

export interface AskOptions extends SendOptions {
  /** Give up waiting after this long with an `AskTimeoutError` (the message may still be answered). Default no limit. */
  waitTimeoutMs?: number;
  /** Stop waiting when this aborts (an `AskTimeoutError` too). */
  signal?: AbortSignal;
  /**
   * What to do when Temporal refuses the ask because 10 updates are already in flight on this conversation: `wait`
   * sends the message as a signal and waits for its answer (polling the status, retrying the ask); `throw` raises
   * `TooManyUpdatesError`. Default `wait`.
   */
  onTooManyUpdates?: 'wait' | 'throw';
  /** How long to keep retrying while the conversation continues as new. Default 5 minutes. */
  rollingOverWaitMs?: number;
}

export interface ConversationStatusReport extends ConversationStatus {
  workflowId: string;
  /** The latest run. */
  runId: string;
  /** False when the latest run has closed (ended, idle timeout, or failed); a closed idle conversation reopens. */
  open: boolean;
}

export type ListStatus = ConversationPhase;

export interface ListOptions {
  /** Only conversations in this state (the `DurableAgentStatus` search attribute). Default all. */
  status?: ListStatus;
  /** More visibility-query conditions, ANDed with ours, e.g. `DurableAgentTurns > 3`. */
  query?: string;
  /** At most this many conversations, newest first. Default 100. */
  limit?: number;
}

export interface ConversationSummary {
  conversationId: string;
  workflowId: string;
  runId: string;
  status: ConversationPhase;
  turns: number;
  /** False when the latest run has closed. */
  open: boolean;
  /** Temporal's status of the latest run, e.g. `RUNNING`, `COMPLETED`, `TERMINATED`. */
  executionStatus: string;
  startTime: Date;
  closeTime?: Date;
}

type Target =
  | { kind: 'new'; input: ConversationInput }
  | { kind: 'running'; runId: string; input: ConversationInput }
  | { kind: 'reopen'; runId: string; input: ConversationInput };

const ENDED_STATUSES: Partial<Record<string, EndedReason>> = {
  FAILED: 'failed',
  TERMINATED: 'terminated',
  TIMED_OUT: 'timed out',
  CANCELLED: 'cancelled',
};

/**
 * The typed API of durable-agent conversations for backend services: create-or-append in one call, wait for answers,
 * interrupt, end, read the whole transcript across runs, list by state.
 *
 * Sending to a conversation whose run closed idle reopens it (a new run starting from the previous run's state, in the
 * same with-start call); sending to one that ended raises `ConversationEndedError`.
 */
export class DurableAgentClient {
  readonly client: Client;
  readonly taskQueue: string;
  private readonly ownedConnection: Connection | undefined;

  constructor(options: DurableAgentClientOptions, ownedConnection?: Connection) {
    this.client = options.client;
    this.taskQueue = options.taskQueue ?? loadConfig().taskQueue;
    this.ownedConnection = ownedConnection;
  }

  /** Connect to the configured cluster (environment variables by default). Call `close()` when done. */
  static async connect(options: ConnectOptions = {}): Promise<DurableAgentClient> {
    const config = options.temporal === undefined || options.taskQueue === undefined ? loadConfig() : undefined;
    const temporal = options.temporal ?? (config as NonNullable<typeof config>).temporal;
    const connection = await connectTemporal(temporal);
    const client = new Client({ connection, namespace: temporal.namespace });
    return new DurableAgentClient({ client, taskQueue: options.taskQueue ?? config?.taskQueue }, connection);
  }

  /** Close the connection if `connect()` opened it. */
  async close(): Promise<void> {
    await this.ownedConnection?.close();
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.close();
  }

  /** Create a conversation (or reopen one that closed idle); optionally queue a first message. Idempotent. */
  async start(conversationId: string, options: StartOptions = {}): Promise<StartResult> {
    if (options.message !== undefined) {
      const sent = await this.send(conversationId, options.message, options);
      return { ...sent };
    }
    const workflowId = conversationWorkflowId(conversationId);
    for (let attempt = 1; ; attempt++) {
      const target = await this.resolve(conversationId, options.settings);
      if (target.kind === 'running') {
        return { conversationId, workflowId, runId: target.runId, created: false, reopened: false };
      }
      try {
        const handle = await this.client.workflow.start<typeof conversationWorkflow>(CONVERSATION_WORKFLOW_TYPE, {
          ...this.startOptions(target),
          workflowIdConflictPolicy: 'USE_EXISTING',
        });
        return {
          conversationId,
          workflowId,
          runId: handle.firstExecutionRunId,
          created: target.kind === 'new',
          reopened: target.kind === 'reopen',
        };
      } catch (error) {
        if (!(error instanceof WorkflowExecutionAlreadyStartedError) || attempt >= 3) throw error;
      }
    }
  }

  /**
   * Queue a message without waiting for the answer (signal-with-start): creates the conversation when missing, reopens
   * it when its run closed idle. The message is validated here against `settings` (or the defaults), because the
   * conversation ignores an invalid signal silently.
   */
  async send(conversationId: string, content: string, options: SendOptions = {}): Promise<SendResult> {
    const message: IncomingMessage = { id: options.messageId ?? randomUUID(), content };
    const workflowId = conversationWorkflowId(conversationId);
    for (let attempt = 1; ; attempt++) {
      const target = await this.resolve(conversationId, options.settings);
      this.validate(conversationId, message, target.input.settings ?? options.settings);
      try {
        const handle = await this.client.workflow.signalWithStart<typeof conversationWorkflow, [IncomingMessage]>(
          CONVERSATION_WORKFLOW_TYPE,
          {
            ...this.startOptions(target),
            workflowIdConflictPolicy: 'USE_EXISTING',
            signal: userMessageSignal,
            signalArgs: [message],
          },
        );
        return {
          conversationId,
          workflowId,
          runId: handle.signaledRunId,
          messageId: message.id,
          created: target.kind === 'new',
          reopened: target.kind === 'reopen',
        };
      } catch (error) {
        // A run closed between our look and the call: look again (bounded).
        if (!(error instanceof WorkflowExecutionAlreadyStartedError) || attempt >= 3) throw error;
      }
    }
  }

  /**
   * Queue a message and wait for its turn's result (update-with-start): creates or reopens the conversation like
   * `send`. Rejections while the conversation continues as new are retried against the new run.
   */
  async ask(conversationId: string, content: string, options: AskOptions = {}): Promise<TurnResult> {
    const message: IncomingMessage = { id: options.messageId ?? randomUUID(), content };
    const startedAt = Date.now();
    const controller = new AbortController();
    const timer =
      options.waitTimeoutMs === undefined ? undefined : setTimeout(() => controller.abort(), options.waitTimeoutMs);
    const onAbort = () => controller.abort();
    options.signal?.addEventListener('abort', onAbort);
    if (options.signal?.aborted) controller.abort();
    try {
      return await this.client.withAbortSignal(controller.signal, () =>
        this.askUntilAnswered(conversationId, message, options, controller.signal),
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

  /** Stop the running turn (its tool calls are cancelled); the conversation stays usable. No-op when it is closed. */
  async interrupt(conversationId: string, options: { reason?: string } = {}): Promise<void> {
    const description = await this.describe(conversationId);
    if (description.status !== 'RUNNING') return;
    await this.handle(conversationId, description.runId).signal(interruptSignal, options);
  }

  /**
   * End the conversation after its current turn; later messages fail with `ConversationEndedError`. A conversation
   * whose run closed idle is reopened just to record the end, so it cannot be reopened by a later message.
   */
  async end(conversationId: string, options: { reason?: string } = {}): Promise<void> {
    for (let attempt = 1; ; attempt++) {
      let target: Target;
      try {
        target = await this.resolve(conversationId, undefined, { mustExist: true });
      } catch (error) {
        if (error instanceof ConversationEndedError) return;
        throw error;
      }
      try {
        if (target.kind === 'running') {
          await this.handle(conversationId, target.runId).signal(endSignal, options);
        } else {
          await this.client.workflow.signalWithStart<typeof conversationWorkflow, [{ reason?: string }?]>(
            CONVERSATION_WORKFLOW_TYPE,
            {
              ...this.startOptions(target),
              workflowIdConflictPolicy: 'USE_EXISTING',
              signal: endSignal,
              signalArgs: [options],
            },
          );
        }
        return;
      } catch (error) {
        const retry = error instanceof WorkflowExecutionAlreadyStartedError || error instanceof WorkflowNotFoundError;
        if (!retry || attempt >= 3) throw error;
      }
    }
  }

  /** The conversation's state: phase, turns, queue, the running turn's progress, the last result. */
  async status(conversationId: string): Promise<ConversationStatusReport> {
    const description = await this.describe(conversationId);
    const base = { workflowId: conversationWorkflowId(conversationId), runId: description.runId };
    if (description.status === 'COMPLETED') {
      const outcome = await this.outcome(conversationId, description.runId);
      const { state } = outcome;
      return {
        ...base,
        open: false,
        conversationId,
        phase: outcome.closedBecause === 'ended' ? 'ended' : 'idle',
        turns: state.turns,
        queued: state.queue.length,
        transcriptLength: state.transcriptOffset + state.transcript.length,
        transcriptOffset: state.transcriptOffset,
        ...(state.lastResult ? { lastResult: state.lastResult } : {}),
      };
    }
    const status = await this.handle(conversationId, description.runId).query(statusQuery);
    if (description.status === 'RUNNING') return { ...base, open: true, ...status };
    return { ...base, ...status, open: false, phase: 'ended', currentTurn: undefined };
  }

  /** A page of the whole conversation's transcript (across continued and reopened runs), from index `from`. */
  async transcript(
    conversationId: string,
    options: { from?: number; limit?: number } = {},
  ): Promise<ConversationTranscriptPage> {
    return await (await this.chain(conversationId)).page(options.from ?? 0, options.limit ?? 200);
  }

  /** Every message of the conversation from `from` on, across all of its runs, read page by page. */
  async *messages(
    conversationId: string,
    options: { from?: number; pageSize?: number } = {},
  ): AsyncGenerator<ChatMessage> {
    yield* (await this.chain(conversationId)).messages(options.from ?? 0, options.pageSize ?? 200);
  }

  /** The whole conversation's transcript in one array (see `messages()` to stream a long one). */
  async fullTranscript(conversationId: string): Promise<ChatMessage[]> {
    const messages: ChatMessage[] = [];
    for await (const message of this.messages(conversationId, { pageSize: 1000 })) messages.push(message);
    return messages;
  }

  /**
   * Conversations, newest first, one entry each (its latest run), filtered by state through the search attributes.
   * Visibility is eventually consistent: a conversation changed a moment ago may show its previous state.
   */
  async list(options: ListOptions = {}): Promise<ConversationSummary[]> {
    const limit = options.limit ?? 100;
    const conditions = [`WorkflowType = '${CONVERSATION_WORKFLOW_TYPE}'`, `ExecutionStatus != 'ContinuedAsNew'`];
    const status = SearchAttribute.status.name;
    if (options.status === 'running') conditions.push(`${status} = 'running'`, `ExecutionStatus = 'Running'`);
    if (options.status === 'idle') {
      conditions.push(`${status} = 'idle'`, `ExecutionStatus IN ('Running', 'Completed')`);
    }
    if (options.status === 'ended') {
      conditions.push(`(${status} = 'ended' OR ExecutionStatus IN ('Failed', 'Terminated', 'TimedOut', 'Canceled'))`);
    }
    if (options.query?.trim()) conditions.push(`(${options.query})`);
    const query = conditions.join(' AND ');

    const seen = new Set<string>();
    const summaries: ConversationSummary[] = [];
    for await (const execution of this.client.workflow.list({ query, pageSize: Math.min(1000, limit * 2) })) {
      if (seen.has(execution.workflowId)) continue;
      seen.add(execution.workflowId);
      // A reopened conversation keeps its earlier closed runs: only the latest run speaks for it.
      if (execution.status.name !== 'RUNNING' && !(await this.isLatestRun(execution))) continue;
      summaries.push(toSummary(execution));
      if (summaries.length >= limit) break;
    }
    return summaries;
  }

  private async askUntilAnswered(
    conversationId: string,
    message: IncomingMessage,
    options: AskOptions,
    signal: AbortSignal,
  ): Promise<TurnResult> {
    const rollingOverUntil = Date.now() + (options.rollingOverWaitMs ?? DEFAULT_ROLLING_OVER_WAIT_MS);
    for (let attempt = 1; ; attempt++) {
      const target = await this.resolve(conversationId, options.settings);
      // A conversation this call creates would start even when the update is rejected: validate before creating.
      if (target.kind !== 'running') this.validate(conversationId, message, target.input.settings);
      try {
        return await this.client.workflow.executeUpdateWithStart(askUpdate, {
          args: [message],
          // The same message asked again reaches the same update (on the same run) instead of a second one.
          updateId: message.id,
          startWorkflowOperation: new WithStartWorkflowOperation<typeof conversationWorkflow>(
            CONVERSATION_WORKFLOW_TYPE,
            { ...this.startOptions(target), workflowIdConflictPolicy: 'USE_EXISTING' },
          ),
        });
      } catch (error) {
        const failure = updateFailure(error);
        if (failure?.type === FailureType.ConversationRollingOver) {
          if (Date.now() >= rollingOverUntil) {
            throw new ConversationRollingOverError(conversationId, attempt, { cause: error });
          }
          await sleep(Math.min(100 * 1.5 ** (attempt - 1), 1_000), undefined, { signal });
          continue;
        }
        if (failure?.type === FailureType.InvalidMessage) {
          throw new MessageRejectedError(conversationId, failure.message, { cause: error });
        }
        if (failure?.type === FailureType.ConversationEnded) {
          throw new ConversationEndedError(conversationId, 'ended', undefined, { cause: error });
        }
        // A run closed between our look and the call: look again (bounded).
        const raced = error instanceof WorkflowExecutionAlreadyStartedError || error instanceof WorkflowNotFoundError;
        if (raced && attempt < 3) continue;
        if (isResourceExhausted(error)) {
          if (options.onTooManyUpdates === 'throw') throw new TooManyUpdatesError(conversationId, { cause: error });
          await this.send(conversationId, message.content, { messageId: message.id, settings: options.settings });
          return await this.waitForAnswer(conversationId, message, signal);
        }
        throw error;
      }
    }
  }

  /**
   * The too-many-updates fallback: the message is queued by signal; its answer is the status's `lastResult` once its
   * turn finishes, or what a later ask with the same id returns (the conversation keeps recent results).
   */
  private async waitForAnswer(
    conversationId: string,
    message: IncomingMessage,
    signal: AbortSignal,
  ): Promise<TurnResult> {
    const done = new AbortController();
    const stop = () => done.abort();
    signal.addEventListener('abort', stop);
    const handle = this.handle(conversationId);
    const polled = (async () => {
      for (;;) {
        const status = await handle.query(statusQuery);
        if (status.lastResult?.messageId === message.id) return status.lastResult;
        await sleep(ANSWER_POLL_MS, undefined, { signal: done.signal });
      }
    })();
    const asked = (async () => {
      for (;;) {
        try {
          return await handle.executeUpdate(askUpdate, { args: [message], updateId: message.id });
        } catch (error) {
          const failure = updateFailure(error);
          const retry = isResourceExhausted(error) || failure?.type === FailureType.ConversationRollingOver;
          if (!retry) throw error;
          await sleep(1_000, undefined, { signal: done.signal });
        }
      }
    })();
    try {
      return await Promise.race([polled, asked]);
    } catch (error) {
      const failure = updateFailure(error);
      if (failure?.type === FailureType.ConversationEnded) {
        throw new ConversationEndedError(conversationId, 'ended', undefined, { cause: error });
      }
      if (failure?.type === FailureType.InvalidMessage) {
        throw new MessageRejectedError(conversationId, failure.message, { cause: error });
      }
      throw error;
    } finally {
      done.abort();
      signal.removeEventListener('abort', stop);
      // The loser ends with an abort: nobody waits for it.
      polled.catch(() => undefined);
      asked.catch(() => undefined);
    }
  }

  private validate(conversationId: string, message: IncomingMessage, settings: ConversationSettings | undefined): void {
    try {
      validateMessage(message, settings ?? {});
    } catch (error) {
      const reason = errorMessage(error);
      throw new MessageRejectedError(conversationId, reason, { cause: error });
    }
  }

  private startOptions(target: Target) {
    return {
      workflowId: conversationWorkflowId(target.input.conversationId),
      taskQueue: this.taskQueue,
      args: [target.input] as [ConversationInput],
      // Never start an empty conversation over closed runs: a closed one is reopened with its state (or is ended).
      workflowIdReusePolicy: (target.kind === 'reopen'
        ? 'ALLOW_DUPLICATE'
        : 'REJECT_DUPLICATE') as WorkflowIdReusePolicy,
    };
  }

  /** Where a message to this conversation goes: a new conversation, the running run, or a reopened one. */
  private async resolve(
    conversationId: string,
    settings: ConversationSettings | undefined,
    options: { mustExist?: boolean } = {},
  ): Promise<Target> {
    const fresh: ConversationInput = { conversationId, ...(settings ? { settings } : {}) };
    for (let attempt = 1; ; attempt++) {
      let description: Awaited<ReturnType<DurableAgentClient['describe']>>;
      try {
        description = await this.describe(conversationId);
      } catch (error) {
        if (error instanceof ConversationNotFoundError && !options.mustExist) return { kind: 'new', input: fresh };
        throw error;
      }
      const { runId, status } = description;
      if (status === 'RUNNING') return { kind: 'running', runId, input: fresh };
      if (status === 'COMPLETED') {
        const outcome = await this.outcome(conversationId, runId);
        if (outcome.closedBecause === 'ended') throw new ConversationEndedError(conversationId, 'ended');
        const previous = await this.startInput(conversationId, runId);
        const reopenSettings = settings ?? previous?.settings;
        return {
          kind: 'reopen',
          runId,
          input: {
            conversationId,
            ...(reopenSettings ? { settings: reopenSettings } : {}),
            ...(previous?.closeWhenIdle ? { closeWhenIdle: true } : {}),
            state: outcome.state,
            previousRunId: runId,
          },
        };
      }
      const ended = ENDED_STATUSES[status];
      if (ended) throw new ConversationEndedError(conversationId, ended);
      // CONTINUED_AS_NEW as the latest run is a moment in between: the next run is about to exist.
      if (attempt >= 10) throw new Error(`Conversation ${conversationId}: its latest run is ${status}.`);
      await sleep(100 * attempt);
    }
  }

  private async describe(conversationId: string): Promise<{ runId: string; status: string }> {
    try {
      const description = await this.handle(conversationId).describe();
      return { runId: description.runId, status: description.status.name };
    } catch (error) {
      if (error instanceof WorkflowNotFoundError) throw new ConversationNotFoundError(conversationId, { cause: error });
      throw error;
    }
  }

  private async outcome(conversationId: string, runId: string): Promise<ConversationOutcome> {
    const handle = this.client.workflow.getHandle<typeof conversationWorkflow>(
      conversationWorkflowId(conversationId),
      runId,
      { followRuns: false },
    );
    return await handle.result();
  }

  /** The input a run was started with (its settings), from the first event of its history. */
  private async startInput(conversationId: string, runId: string): Promise<ConversationInput | undefined> {
    const response = await this.client.workflowService.getWorkflowExecutionHistory({
      namespace: this.client.options.namespace,
      execution: { workflowId: conversationWorkflowId(conversationId), runId },
      maximumPageSize: 1,
    });
    const payloads = response.history?.events?.[0]?.workflowExecutionStartedEventAttributes?.input?.payloads;
    if (!payloads?.length) return undefined;
    const { payloadConverter, payloadCodecs } = this.client.options.loadedDataConverter;
    let decoded = payloads as Payload[];
    for (const codec of [...payloadCodecs].reverse()) decoded = await codec.decode(decoded);
    const first = decoded[0];
    return first === undefined ? undefined : payloadConverter.fromPayload<ConversationInput>(first);
  }

  private async chain(conversationId: string): Promise<TranscriptChain> {
    const { runId } = await this.describe(conversationId);
    return new TranscriptChain(runId, (run, request) =>
      this.handle(conversationId, run).query(transcriptQuery, request),
    );
  }

  private async isLatestRun(execution: WorkflowExecutionInfo): Promise<boolean> {
    try {
      const latest = await this.client.workflow.getHandle(execution.workflowId).describe();
      return latest.runId === execution.runId;
    } catch (error) {
      if (error instanceof WorkflowNotFoundError) return false;
      throw error;
    }
  }

  private handle(conversationId: string, runId?: string): ConversationHandle {
    return this.client.workflow.getHandle<typeof conversationWorkflow>(conversationWorkflowId(conversationId), runId);
  }
}

function toSummary(execution: WorkflowExecutionInfo): ConversationSummary {
  const attributes = execution.typedSearchAttributes;
  const recorded = attributes.get(SearchAttribute.status) as ConversationPhase | undefined;
  const executionStatus = execution.status.name;
  return {
    conversationId:
      attributes.get(SearchAttribute.conversationId) ?? execution.workflowId.replace(/^conversation-/, ''),
    workflowId: execution.workflowId,
    runId: execution.runId,
    status: ENDED_STATUSES[executionStatus] ? 'ended' : (recorded ?? 'idle'),
    turns: attributes.get(SearchAttribute.turns) ?? 0,
    open: executionStatus === 'RUNNING',
    executionStatus,
    startTime: execution.startTime,
    ...(execution.closeTime ? { closeTime: execution.closeTime } : {}),
  };
}

/** The workflow's own failure behind a failed or rejected update, if that is what `error` is. */
function updateFailure(error: unknown): ApplicationFailure | undefined {
  if (!(error instanceof WorkflowUpdateFailedError)) return undefined;
  return error.cause instanceof ApplicationFailure ? error.cause : undefined;
}

/** Temporal's RESOURCE_EXHAUSTED (gRPC 8): here, the limit of updates in flight on one workflow. */
function isResourceExhausted(error: unknown): boolean {
  return [...causeChain(error)].some(
    (cause) =>
      (isGrpcServiceError(cause) && Number(cause.code) === GRPC_RESOURCE_EXHAUSTED) ||
      (cause instanceof Error && /RESOURCE_EXHAUSTED|in-flight updates|concurrent in-flight/i.test(cause.message)),
  );
}
