import { defineQuery, defineSignal, defineUpdate } from '@temporalio/workflow';
import type { ChatMessage, CostSpend, ModelContextPage, ThinkingSetting, TokenUsage } from '../shared/types.js';
import type {
  ApprovalDecision,
  ApprovalSettings,
  ApproveRequest,
  DenyRequest,
  PendingApproval,
} from '../shared/approval-messages.js';
import type { InputAnswer, InputRequest } from '../shared/input-messages.js';
import type { TurnBudget } from './budget.js';
import type { ConversationBudget, ConversationCost } from './cost-budget.js';
import type { InputPoll, InputPollResult } from './input-requests.js';
import type { PollEventsRequest, PollEventsResult, StreamBatch, StreamEvent } from './stream-events.js';
import type { TurnResult } from './turn-result.js';
import type { CarriedContextWindow } from './context-window.js';
import type { OutputFormat } from './structured-output.js';

export type { StopReason, TurnResult } from './turn-result.js';
export type { OutputFormat } from './structured-output.js';
export type * from '../shared/approval-messages.js';
export type * from '../shared/input-messages.js';

/**
 * The conversation workflow's messages, shared by the workflow, the client and the tests.
 */

/** A user message as a backend sends it. `id` makes delivery idempotent: a message seen before is ignored. */
export interface IncomingMessage {
  /**
   * Unique per conversation: a message whose id was seen before is ignored. At most 200 characters (UTF-16 code
   * units, as JavaScript counts them: `MAX_MESSAGE_ID_CHARS`), not blank. The TypeScript client makes one up when its
   * caller gives none.
   * @minLength 1
   * @maxLength 200
   * @pattern \S
   */
  id: string;
  /**
   * The user's text: not blank, at most `settings.maxMessageChars` characters (default 100,000).
   * @minLength 1
   * @pattern \S
   */
  content: string;
  /** This turn's answer must be JSON matching a schema (structured output); overrides the settings' `output`. */
  output?: OutputFormat;
  /**
   * `userMessage` only: drop the message (it still counts as seen) when a turn runs or a message waits, instead of
   * queueing it. A schedule with `--overlap skip` sends its messages so (docs/cli.md, "Schedules"); default false.
   */
  skipIfBusy?: boolean;
}

export interface ConversationSettings {
  /**
   * Model name, optionally prefixed by its provider: `anthropic:claude-sonnet-4-5`, `openai:gpt-5.1`,
   * `openai-responses:gpt-5.1`; a plain name goes to Chat Completions (docs/models.md). Default the worker's
   * `DURABLE_AGENT_MODEL`.
   */
  model?: string;
  /** Extended thinking for providers that have it (Anthropic); default off. */
  thinking?: ThinkingSetting;
  /** System prompt, kept as the first transcript message. */
  systemPrompt?: string;
  temperature?: number;
  /**
   * Upper bound for `max_completion_tokens` of each model call; default none (the token budget still caps it).
   * @asType integer
   * @minimum 1
   */
  maxCompletionTokens?: number;
  /**
   * Trim the model input to this many estimated tokens by dropping the oldest whole turns; default no trimming.
   * Compaction (`compaction`) summarizes them instead; docs/models.md says which to choose.
   * @asType integer
   * @minimum 1
   */
  maxInputTokens?: number;
  /**
   * Compaction (docs/models.md#compaction): when a model call's input would pass 80% of the model's window, the older
   * part of the transcript is summarized by a model call of its own, down to about 50%; a context-length refusal
   * compacts and retries once. Default true, unless `maxInputTokens` is set (trimming chosen instead); `false` turns
   * it off (a refusal then ends the turn). `"provider"`: the provider compacts the input itself instead
   * (docs/models.md#provider-native-compaction), for `openai-responses:` and `anthropic:` models only; a refusal still
   * compacts with a summary of durable-agent's own and retries once.
   */
  compaction?: boolean | 'provider';
  /**
   * The model's context window in tokens, for compaction; default the table of known models
   * (`MODEL_CONTEXT_WINDOWS`), and for a model it does not know, what the first context-length refusal shows.
   * @asType integer
   * @minimum 1
   */
  contextWindow?: number;
  /** Per-turn limits; each field defaults to the values in `DEFAULT_BUDGET`. */
  budget?: Partial<TurnBudget>;
  /** Limits of the whole conversation, across its turns and runs (docs/cost.md); default none. */
  conversationBudget?: ConversationBudget;
  /** When a limit is reached, make one final model call with tools disabled; default true. */
  finalAnswer?: boolean;
  /**
   * Attempts per model call that may fail with a model error (HTTP 408/409/429/5xx, a timeout or dropped connection,
   * an invalid answer) before the turn ends with that error; default 5, at least 1. Attempts lost to a worker that died
   * or shut down mid-call do not count: each call may lose up to 10 more (`LOST_ATTEMPTS_ALLOWED`, docs/reliability.md).
   * @asType integer
   * @minimum 1
   */
  modelAttempts?: number;
  /**
   * Attempts per tool call that may fail with a transport error (the MCP server could not be reached, or a read-only
   * or idempotent call's connection broke or timed out) before the model is told the tool is unavailable; default 3,
   * at least 1. Attempts lost to a worker that died or shut down do not count, as for `modelAttempts`.
   * @asType integer
   * @minimum 1
   */
  toolAttempts?: number;
  /**
   * Close the run after this many milliseconds without a message (it reopens on the next one); default off.
   * @asType integer
   * @minimum 0
   */
  idleTimeoutMs?: number;
  /**
   * Continue as new after this many turns in one run even if Temporal does not suggest it; default 100.
   * @asType integer
   * @minimum 1
   */
  maxTurnsPerRun?: number;
  /**
   * Longest accepted user message, in characters; default 100,000.
   * @asType integer
   * @minimum 1
   */
  maxMessageChars?: number;
  /** Stream model answers to subscribers as they are written (docs/streaming.md); default true. */
  stream?: boolean;
  /** Which tool calls wait for a person's approval, and for how long (docs/approvals.md); default: each server's own. */
  approval?: ApprovalSettings;
  /** Every turn's answer must be JSON matching a schema (structured output; docs/tools.md); default none. */
  output?: OutputFormat;
  /**
   * The customer the conversation belongs to (docs/tenants.md): its fairness key on the task queue, its
   * `DurableAgentTenant` search attribute and its spend ledger. At most 64 bytes, no whitespace. Default none.
   * @minLength 1
   * @pattern ^[^\s]+$
   */
  tenant?: string;
}

/** `awaiting_approval` and `awaiting_input`: a turn is running and waits for a person (see `pendingApprovals`). */
export type ConversationPhase = 'idle' | 'running' | 'awaiting_approval' | 'awaiting_input' | 'ended';

/** Every phase: the values of the `DurableAgentStatus` search attribute, which the docs and `list --status` name. */
export const CONVERSATION_PHASES = [
  'idle',
  'running',
  'awaiting_approval',
  'awaiting_input',
  'ended',
] as const satisfies readonly ConversationPhase[];

/** The result of the `status` query. */
export interface ConversationStatus {
  conversationId: string;
  phase: ConversationPhase;
  /**
   * Turns started so far in the whole conversation.
   * @asType integer
   * @minimum 0
   */
  turns: number;
  /** The running turn, when `phase` is `running` or `awaiting_*`. */
  currentTurn?: {
    /**
     * @asType integer
     * @minimum 1
     */
    turn: number;
    messageId: string;
    /**
     * Model calls made so far in this turn.
     * @asType integer
     * @minimum 0
     */
    rounds: number;
    /**
     * @asType integer
     * @minimum 0
     */
    toolCalls: number;
    usage: TokenUsage;
    /** What the turn's model calls cost so far (docs/cost.md); absent until a call recorded a cost. */
    cost?: CostSpend;
    /**
     * When the turn started (workflow time).
     * @format date-time
     */
    startedAt: string;
    /** What the turn is doing now, for people (the wording may change between versions). */
    activity: string;
  };
  /**
   * Messages waiting for their turn.
   * @asType integer
   * @minimum 0
   */
  queued: number;
  /**
   * Messages in the whole conversation so far.
   * @asType integer
   * @minimum 0
   */
  transcriptLength: number;
  /**
   * Messages of earlier runs no longer carried in this run (readable in those runs' histories).
   * @asType integer
   * @minimum 0
   */
  transcriptOffset: number;
  /** What the conversation's model calls cost so far, the running turn's included (docs/cost.md). */
  cost?: CostSpend;
  /** The result of the latest finished turn. */
  lastResult?: TurnResult;
  /** Tool calls waiting for a person's decision (phase `awaiting_approval`); absent when none. */
  pendingApprovals?: PendingApproval[];
  /** Questions from MCP servers waiting for a person's answer (phase `awaiting_input`); absent when none. */
  pendingInputs?: InputRequest[];
}

/** The argument of the `transcript` query (optional). */
export interface TranscriptRequest {
  /**
   * Index (in the whole conversation) of the first message wanted; default and lowest: the first this run holds.
   * @asType integer
   * @minimum 0
   */
  from?: number;
  /**
   * Messages wanted; default 200, at most 1,000 are returned.
   * @asType integer
   * @minimum 0
   */
  limit?: number;
}

/** The result of the `transcript` query. */
export interface TranscriptPage {
  /**
   * Index (in the whole conversation) of the first message in `messages`.
   * @asType integer
   * @minimum 0
   */
  from: number;
  messages: ChatMessage[];
  /**
   * Messages in the whole conversation so far.
   * @asType integer
   * @minimum 0
   */
  total: number;
  /**
   * The first index this run still holds; earlier messages are in earlier runs.
   * @asType integer
   * @minimum 0
   */
  offset: number;
  /** The run this one continued from, where the earlier messages are. */
  previousRunId?: string;
}

/** The argument of the `interrupt` signal (optional). */
export interface InterruptRequest {
  /** Why: kept in the note the transcript gets in place of the interrupted turn's answer. */
  reason?: string;
}

/** The argument of the `end` signal (optional). */
export interface EndRequest {
  /** Why: recorded in the signal's history event; the workflow does not use it. */
  reason?: string;
}

/** What a run hands to the next (continue-as-new) or returns when it closes, so the conversation can go on. */
export interface ConversationState {
  /**
   * The format of this state (see carried-state.ts): absent is format 1, what release 0.1.0 wrote. A run reads every
   * older format; runs write the newest.
   * @asType integer
   * @minimum 1
   */
  formatVersion?: number;
  transcript: ChatMessage[];
  /**
   * Index of `transcript[0]` in the whole conversation.
   * @asType integer
   * @minimum 0
   */
  transcriptOffset: number;
  /**
   * Turns started so far in the whole conversation.
   * @asType integer
   * @minimum 0
   */
  turns: number;
  queue: IncomingMessage[];
  seenMessageIds: string[];
  lastResult?: TurnResult;
  /** Results of the latest turns (as many as fit 64 KiB), for asks retried with the same id after the rollover. */
  recentResults?: TurnResult[];
  /**
   * Offset of the next stream event, so offsets keep growing across runs; default 0.
   * @asType integer
   * @minimum 0
   */
  streamOffset?: number;
  /** The latest turn's stream events, for subscribers that were between two polls; left out once ended. */
  streamEvents?: StreamEvent[];
  /** The conversation has ended: a run started from this state takes no messages and closes at once. */
  ended?: boolean;
  /** Tools a person allowed for the rest of the conversation (`approve` with `always`); absent when none. */
  allowedTools?: string[];
  /** What the conversation's model calls cost so far (docs/cost.md); absent before the first priced call. */
  cost?: ConversationCost;
  /** What the conversation knows of its model's window, for compaction (docs/models.md#compaction); absent: nothing. */
  contextWindow?: CarriedContextWindow;
}

/** The start argument of `conversationWorkflow`. */
export interface ConversationInput {
  /** The conversation's id; its workflow id is `conversation-<conversationId>` (see `conversationWorkflowId`). */
  conversationId: string;
  settings?: ConversationSettings;
  /** Messages to queue at start (a one-shot question is a conversation with one message). */
  messages?: IncomingMessage[];
  /** State carried from the previous run (continue-as-new, or reopening a closed conversation); new ones have none. */
  state?: ConversationState;
  /** Complete the run as soon as no message is queued (a one-shot question); default false. */
  closeWhenIdle?: boolean;
  /** The run `state` comes from. */
  previousRunId?: string;
}

/**
 * The result of a conversation run that closed (a run that continues as new has none): why, and everything a run that
 * reopens the conversation needs.
 */
export interface ConversationOutcome {
  conversationId: string;
  /** `ended` by the `end` signal, `idle` after `idleTimeoutMs` without a message, `completed` with `closeWhenIdle`. */
  closedBecause: 'ended' | 'idle' | 'completed';
  /** What a new run over this one starts from to reopen the conversation. */
  state: ConversationState;
  /** The run's settings, for the run that reopens the conversation (docs/protocol.md, "Reopening"). */
  settings?: ConversationSettings;
  /** The run was a one-shot (`closeWhenIdle`); a run that reopens it closes when idle too. */
  closeWhenIdle?: boolean;
}

/** The workflow id of a conversation: readable in the Web UI and derived, so clients never need a lookup. */
export function conversationWorkflowId(conversationId: string): string {
  return `conversation-${conversationId}`;
}

/** The conversation id in a conversation's workflow id; a workflow id of another shape is its own id. */
export function conversationIdOf(workflowId: string): string {
  return workflowId.replace(/^conversation-/, '');
}

/** Queue a user message (idempotent by message id). For backends that do not wait for the answer. */
export const userMessageSignal = defineSignal<[IncomingMessage]>('userMessage');
/** Queue a user message and wait for its turn's result. Refused after the end and while handing over to the next run. */
export const askUpdate = defineUpdate<TurnResult, [IncomingMessage]>('ask');
/** Stop the running turn; the conversation stays usable. */
export const interruptSignal = defineSignal<[InterruptRequest?]>('interrupt');
/** Close the conversation after the current turn. */
export const endSignal = defineSignal<[EndRequest?]>('end');

/** Approve a pending tool call; refused (nothing changes) for an unknown or decided call id or invalid arguments. */
export const approveUpdate = defineUpdate<ApprovalDecision, [ApproveRequest]>('approve');
/** Deny a pending tool call with a reason the model gets; refused like `approve`. */
export const denyUpdate = defineUpdate<ApprovalDecision, [DenyRequest]>('deny');
/** Answer an MCP server's question (elicitation); refused for an unknown or answered request or invalid content. */
export const answerInputUpdate = defineUpdate<InputAnswer, [InputAnswer]>('answerInput');

export const statusQuery = defineQuery<ConversationStatus>('status');
export const transcriptQuery = defineQuery<TranscriptPage, [TranscriptRequest?]>('transcript');
/** For workers: a page of this run's transcript (run-relative indexes) and the current turn's tools. */
export const modelContextQuery = defineQuery<ModelContextPage, [{ from: number; limit: number }]>('modelContext');

/**
 * What each handler does, as the Web UI and `temporal workflow metadata` show it (the `description` given to
 * `setHandler`). The public ones are the protocol of docs/protocol.md; the internal ones serve durable-agent's own
 * worker and client and may change in any release.
 */
export const handlerDescriptions = {
  userMessage:
    'Public. Queue a user message { id, content } without waiting. Idempotent by id: a message id seen before is ' +
    'ignored; an invalid message, or one after the end, is ignored (and logged). See docs/protocol.md.',
  ask:
    'Public. Queue a user message { id, content } and wait for its TurnResult; use the message id as the update id. ' +
    'Fails with type InvalidMessage, ConversationEnded, or ConversationRollingOver (ask again with the same id).',
  interrupt: 'Public. Stop the running turn ({ reason? }); the conversation stays open and answers the next message.',
  end: 'Public. End the conversation after the current turn ({ reason? }); it takes no more messages.',
  status: 'Public. The ConversationStatus: phase, turns, queue, the running turn and the last TurnResult.',
  transcript:
    'Public. A page of the transcript ({ from?, limit? }) with whole-conversation indexes; earlier turns are in the ' +
    'run named by previousRunId.',
  approve:
    'Public. Approve a pending tool call { callId, arguments?, always?, by? }; returns the ApprovalDecision. Fails with ' +
    'type UnknownApproval, AlreadyDecided or InvalidArguments (nothing changes).',
  deny: 'Public. Deny a pending tool call { callId, reason, by? }; the model gets the reason. Fails like approve.',
  answerInput:
    "Public. Answer an MCP server's question { requestId, action: accept|decline|cancel, content?, by? }. Fails with " +
    'type UnknownInputRequest, AlreadyAnswered or InvalidInput (nothing changes).',
  modelContext: "Internal: the worker's model activity reads the transcript with it. Do not use.",
  stream: "Internal: the worker's model activity sends streamed text with it. Do not send.",
  requestInput:
    "Internal: the worker's tool activity asks an MCP server's question with it and long-polls for the answer. Do " +
    'not use; answer with answerInput.',
  pollEvents:
    "Internal: durable-agent's own event stream subscription (docs/streaming.md); its shape may change. Do not use.",
} as const;

/** For the model activity: a batch of the text it is streaming (see stream-events.ts). */
export const streamSignal = defineSignal<[StreamBatch]>('stream');
/** Long-poll for stream events at or after `from`: answers as soon as there are any, or after `waitMs` with none. */
export const pollEventsUpdate = defineUpdate<PollEventsResult, [PollEventsRequest]>('pollEvents');
/** For the tool activity: ask an MCP server's question (the first poll of a request id) and wait for its answer. */
export const requestInputUpdate = defineUpdate<InputPollResult, [InputPoll]>('requestInput');
