/** The options and results of `DurableAgentClient`'s methods. */
import type { Client } from '@temporalio/client';
import type { EncryptionKey } from '../codec/keys.js';
import type { TemporalConfig } from '../config/index.js';
import type { TenantsConfig } from '../config/tenants.js';
import type { CostSpend, JsonObject } from '../shared/types.js';
import type {
  ConversationPhase,
  ConversationSettings,
  ConversationStatus,
  PendingApproval,
} from '../workflows/definitions.js';
import type { OutputRequest } from './output-format.js';

export interface DurableAgentClientOptions {
  /** A connected Temporal client; its namespace is the conversations' namespace. */
  client: Client;
  /** Task queue of the durable-agent workers; default `DURABLE_AGENT_TASK_QUEUE` or `durable-agent`. */
  taskQueue?: string;
  /**
   * The tenants' fairness weights, given to the conversations this client starts (docs/tenants.md); default the file
   * of `DURABLE_AGENT_TENANTS`, or none (every tenant weighs 1).
   */
  tenants?: TenantsConfig;
}

export interface ConnectOptions {
  /** Cluster settings; default `loadConfig().temporal` (TEMPORAL_ADDRESS or localhost:7233, namespace, TLS, API key). */
  temporal?: TemporalConfig;
  /** Default `DURABLE_AGENT_TASK_QUEUE` or `durable-agent`. */
  taskQueue?: string;
  /** The tenants' fairness weights (docs/tenants.md); default the file of `DURABLE_AGENT_TENANTS`, or none. */
  tenants?: TenantsConfig;
  /**
   * Keys that encrypt what this client sends and decrypt what it reads (docs/security.md); the first encrypts.
   * Default `DURABLE_AGENT_ENCRYPTION_KEYS` (none when unset: plain JSON); `[]` turns encryption off.
   */
  encryptionKeys?: readonly EncryptionKey[];
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
  /**
   * This message's answer must be JSON matching a schema (JSON Schema or zod); the `TurnResult` carries it parsed as
   * `output`. Overrides the settings' `output`. Default: the settings'.
   */
  output?: OutputRequest;
  /**
   * Drop the message when the conversation is busy (a turn runs or a message waits) instead of queueing it; the
   * conversation decides, so a turn that starts meanwhile drops it too. `send` only. Default false.
   */
  skipIfBusy?: boolean;
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
  /** Only this tenant's conversations (the `DurableAgentTenant` search attribute, docs/tenants.md). Default all. */
  tenant?: string;
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
  /** What the conversation's model calls cost so far (docs/cost.md), as of its latest turn; absent before any. */
  cost?: CostSpend;
  /** The conversation's tenant (docs/tenants.md); absent for one without. */
  tenant?: string;
}

export interface ApproveOptions {
  /** Run the call with these arguments instead of the model's (checked against the tool's input schema). Default: the model's. */
  arguments?: JsonObject;
  /** Allow this tool for the rest of the conversation: its later calls do not wait. Default false. */
  always?: boolean;
  /**
   * For a model call a cost budget holds (`kind: 'budget'`): raise the limit to this many US dollars, above the one
   * that held it (docs/cost.md). Default: the call goes on once and the limit stays.
   */
  maxCostUsd?: number;
  /** Who decides (free-form: a user id, an e-mail, a service name), kept in history. Default none. */
  by?: string;
}

export interface DenyOptions {
  /** Why, for the model: it gets it in the tool message and can adapt. Required, not blank. */
  reason: string;
  /** Who decides, kept in history. Default none. */
  by?: string;
}

/** A tool call that waits for a person's decision, with the conversation it waits in. */
export interface ConversationPendingApproval extends PendingApproval {
  conversationId: string;
}

export interface ListPendingApprovalsOptions {
  /** More visibility-query conditions, ANDed with ours, e.g. `DurableAgentTurns > 3`. */
  query?: string;
  /** Look at most this many waiting conversations, newest first. Default 100. */
  limit?: number;
}
