import { randomUUID } from 'node:crypto';
import { Client, type Connection } from '@temporalio/client';
import { encryptionDataConverter } from '../codec/data-converter.js';
import { keyRefusalInterceptor } from './key-refusals.js';
import { loadConfig, readEncryptionKeys } from '../config/index.js';
import { readTenants } from '../config/tenants.js';
import { clientTelemetryInterceptors } from './telemetry/client-telemetry.js';
import { startTelemetry } from './telemetry/telemetry.js';
import type { Tracing } from './telemetry/tracing.js';
import type { ChatMessage } from '../shared/types.js';
import type { conversationWorkflow } from '../workflows/conversation.js';
import {
  conversationWorkflowId,
  endSignal,
  interruptSignal,
  transcriptQuery,
  userMessageSignal,
  type IncomingMessage,
  type InputAnswer,
  type InputRequest,
  type TurnResult,
} from '../workflows/definitions.js';
import type { ApprovalDecision } from '../shared/approval-messages.js';
import { approveCall, denyCall, listPendingApprovals } from './approvals.js';
import { askAndWait } from './ask.js';
import { toOutputFormat } from './output-format.js';
import { answerInput, type InputAnswerOptions } from './input-answers.js';
import { connectTemporal } from './connection.js';
import {
  CONVERSATION_WORKFLOW_TYPE,
  ConversationRuns,
  isValidMessage,
  type ConversationHandle,
  rejectInvalidMessage,
} from './conversation-runs.js';
import { AgentSchedules } from './schedules.js';
import { reportsStarted, signalWithStartReportingStart } from './signal-with-start.js';
import { ConversationEndedError } from './errors.js';
import { listConversations } from './list.js';
import { tenantSpend, type SpendOptions } from './spend.js';
import type { SpendTotals } from '../shared/spend.js';
import { queryRun } from './run-queries.js';
import { conversationStatus } from './status.js';
import { TranscriptChain, type ConversationTranscriptPage } from './transcript.js';
import type {
  ApproveOptions,
  AskOptions,
  ConnectOptions,
  ConversationPendingApproval,
  ConversationStatusReport,
  ConversationSummary,
  DenyOptions,
  DurableAgentClientOptions,
  ListOptions,
  ListPendingApprovalsOptions,
  SendOptions,
  SendResult,
  StartOptions,
  StartResult,
} from './types.js';

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
  private readonly runs: ConversationRuns;
  private readonly ownedConnection: Connection | undefined;
  /** Spans of a client that `connect()` made are flushed by `close()`, so a command that ends loses none. */
  private tracing: Tracing | undefined;
  /** Whether the server says if a signal-with-start started a run: `send` needs that to go in one call. */
  private startedReported: Promise<boolean> | undefined;
  /** Schedules that send messages into conversations on Temporal Schedules (docs/cli.md, "Schedules"). */
  readonly schedules: AgentSchedules;

  constructor(options: DurableAgentClientOptions, ownedConnection?: Connection) {
    this.client = options.client;
    this.taskQueue = options.taskQueue ?? loadConfig().taskQueue;
    this.runs = new ConversationRuns(this.client, this.taskQueue, options.tenants ?? readTenants());
    this.schedules = new AgentSchedules(this.client, this.taskQueue, this.runs);
    this.ownedConnection = ownedConnection;
  }

  /** Connect to the configured cluster (environment variables by default). Call `close()` when done. */
  static async connect(options: ConnectOptions = {}): Promise<DurableAgentClient> {
    const config = options.temporal === undefined || options.taskQueue === undefined ? loadConfig() : undefined;
    const temporal = options.temporal ?? (config as NonNullable<typeof config>).temporal;
    const keys = options.encryptionKeys ?? config?.encryptionKeys ?? readEncryptionKeys();
    // Before connecting: a bad tenants file is the configuration's error, whatever the cluster's state.
    const tenants = options.tenants ?? readTenants();
    const telemetry = startTelemetry();
    const connection = await connectTemporal(temporal);
    const client = new Client({
      connection,
      namespace: temporal.namespace,
      dataConverter: encryptionDataConverter(keys),
      interceptors: { workflow: [keyRefusalInterceptor(), ...clientTelemetryInterceptors(telemetry)] },
    });
    const agentClient = new DurableAgentClient(
      { client, taskQueue: options.taskQueue ?? config?.taskQueue, tenants },
      connection,
    );
    agentClient.tracing = telemetry?.tracing;
    return agentClient;
  }

  /** Close the connection if `connect()` opened it, after exporting its spans. */
  async close(): Promise<void> {
    await this.tracing?.flush();
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
    return await this.runs.withTarget(conversationId, options.settings, async (target, start) => {
      if (target.kind === 'running') {
        return { conversationId, workflowId, runId: target.runId, created: false, reopened: false };
      }
      const handle = await this.client.workflow.start<typeof conversationWorkflow>(CONVERSATION_WORKFLOW_TYPE, start);
      return {
        conversationId,
        workflowId,
        runId: handle.firstExecutionRunId,
        created: target.kind === 'new',
        reopened: target.kind === 'reopen',
      };
    });
  }

  /**
   * Queue a message without waiting for the answer (signal-with-start): creates the conversation when missing, reopens
   * it when its run closed idle. The message is validated here against `settings` (or the defaults), because the
   * conversation ignores an invalid signal silently.
   */
  async send(conversationId: string, content: string, options: SendOptions = {}): Promise<SendResult> {
    const message: IncomingMessage = {
      id: options.messageId ?? randomUUID(),
      content,
      ...(options.output ? { output: await toOutputFormat(options.output) } : {}),
      ...(options.skipIfBusy === true ? { skipIfBusy: true } : {}),
    };
    const workflowId = conversationWorkflowId(conversationId);
    return await this.runs.withTarget(
      conversationId,
      options.settings,
      async (target, start) => {
        rejectInvalidMessage(conversationId, message, target.input.settings ?? options.settings);
        const { runId, started } = await signalWithStartReportingStart(this.client, CONVERSATION_WORKFLOW_TYPE, {
          ...start,
          signal: userMessageSignal,
          signalArgs: [message],
        });
        return {
          conversationId,
          workflowId,
          runId,
          messageId: message.id,
          created: target.kind === 'new' || (target.kind === 'open-or-new' && started),
          reopened: target.kind === 'reopen',
        };
      },
      // A message these settings refuse may still suit a closed conversation's own: the look decides first. So it does
      // on a server that does not say whether the call started a run (`created` would be unknown).
      { tryFirst: isValidMessage(message, options.settings) && (await this.serverReportsStarted()) },
    );
  }
  private serverReportsStarted(): Promise<boolean> {
    this.startedReported ??= reportsStarted(this.client);
    return this.startedReported;
  }

  /**
   * Queue a message and wait for its turn's result (update-with-start): creates or reopens the conversation like
   * `send`. Rejections while the conversation continues as new are retried against the new run.
   */
  async ask(conversationId: string, content: string, options: AskOptions = {}): Promise<TurnResult> {
    const send = (id: string, text: string, sendOptions: SendOptions) => this.send(id, text, sendOptions);
    return await askAndWait(this.runs, send, conversationId, content, options);
  }

  /** Stop the running turn (its tool calls are cancelled); the conversation stays usable. No-op when it is closed. */
  async interrupt(conversationId: string, options: { reason?: string } = {}): Promise<void> {
    const description = await this.runs.describe(conversationId);
    if (description.status !== 'RUNNING') return;
    await this.runs.handle(conversationId, description.runId).signal(interruptSignal, options);
  }

  /**
   * End the conversation after its current turn; later messages fail with `ConversationEndedError`. A conversation
   * whose run closed idle is reopened just to record the end, so it cannot be reopened by a later message.
   */
  async end(conversationId: string, options: { reason?: string } = {}): Promise<void> {
    try {
      await this.runs.withTarget(
        conversationId,
        undefined,
        async (target, start) => {
          if (target.kind === 'running') {
            await this.runs.handle(conversationId, target.runId).signal(endSignal, options);
            return;
          }
          await this.client.workflow.signalWithStart<typeof conversationWorkflow, [{ reason?: string }?]>(
            CONVERSATION_WORKFLOW_TYPE,
            { ...start, signal: endSignal, signalArgs: [options] },
          );
        },
        { mustExist: true },
      );
    } catch (error) {
      // Already ended: nothing to do.
      if (error instanceof ConversationEndedError) return;
      throw error;
    }
  }

  /** The conversation's state: phase, turns, queue, the running turn's progress, the last result. */
  async status(conversationId: string): Promise<ConversationStatusReport> {
    return await conversationStatus(this.runs, conversationId);
  }

  /** The questions MCP servers wait for a person to answer in this conversation (elicitation; docs/mcp.md). */
  async pendingInputs(conversationId: string): Promise<InputRequest[]> {
    return (await this.status(conversationId)).pendingInputs ?? [];
  }

  /**
   * Answer an MCP server's question: `accept` (with the requested `content`), `decline` or `cancel`. Fails with
   * `InputRequestNotFoundError`, `InputAlreadyAnsweredError` or `InvalidInputError`, and then nothing changed.
   */
  async answerInput(conversationId: string, requestId: string, options: InputAnswerOptions): Promise<InputAnswer> {
    return await answerInput(this.runs, conversationId, requestId, options);
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
  /**
   * The conversation's tenant (its `DurableAgentTenant` search attribute, docs/tenants.md); undefined for one without.
   * Raises `ConversationNotFoundError` when it does not exist.
   */
  async tenantOf(conversationId: string): Promise<string | undefined> {
    return await this.runs.tenantOf(conversationId);
  }

  /**
   * What each tenant spent each UTC day: dollars, unpriced calls, tokens, turns and conversations, counted once per
   * model call (docs/tenants.md). Sorted by day, then tenant.
   */
  async spend(options: SpendOptions = {}): Promise<SpendTotals[]> {
    return await tenantSpend(this.client, options);
  }

  async list(options: ListOptions = {}): Promise<ConversationSummary[]> {
    return await listConversations(this.client, options);
  }

  /** The tool calls of the conversation that wait for a person's decision (docs/approvals.md); none when it is closed. */
  async pendingApprovals(conversationId: string): Promise<ConversationPendingApproval[]> {
    const status = await this.status(conversationId);
    if (!status.open) return [];
    return (status.pendingApprovals ?? []).map((pending) => ({ conversationId, ...pending }));
  }

  /**
   * The tool calls waiting for a person in every conversation, found through the `DurableAgentStatus` search attribute
   * (`awaiting_approval`). Visibility is eventually consistent: a call asked for a moment ago may be missing yet.
   */
  async listPendingApprovals(options: ListPendingApprovalsOptions = {}): Promise<ConversationPendingApproval[]> {
    return await listPendingApprovals(this.client, (id) => this.pendingApprovals(id), options);
  }

  /**
   * Approve a pending tool call: it runs (with `arguments` instead of the model's, when given). Refused, with nothing
   * changed: an unknown call id (`UnknownApprovalError`), a call decided already (`ApprovalAlreadyDecidedError`),
   * arguments that do not match the tool's schema (`InvalidApprovalArgumentsError`).
   */
  async approve(conversationId: string, callId: string, options: ApproveOptions = {}): Promise<ApprovalDecision> {
    return await approveCall(this.runs, conversationId, callId, options);
  }

  /** Deny a pending tool call with a reason the model gets (not blank). Refused like `approve`. */
  async deny(conversationId: string, callId: string, options: DenyOptions): Promise<ApprovalDecision> {
    return await denyCall(this.runs, conversationId, callId, options);
  }

  private async chain(conversationId: string): Promise<TranscriptChain> {
    const { runId, status } = await this.runs.describe(conversationId);
    return new TranscriptChain(runId, (run, request) => {
      const query = (handle: ConversationHandle) => handle.query(transcriptQuery, request);
      const ask = () => query(this.runs.handle(conversationId, run));
      // Earlier runs are closed; the latest may close while it is asked, and then answers from its history.
      return run === runId && status === 'RUNNING' ? queryRun(this.runs, conversationId, run, query, ask) : ask();
    });
  }
}
