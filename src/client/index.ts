/**
 * durable-agent's client: the typed API backend services use to drive conversations (create-or-append, ask and wait,
 * interrupt, end, transcripts across runs, lists by state), follow them as they happen (`subscribe`), and the
 * settings, results and messages they speak in.
 */
export { DurableAgentClient } from './durable-agent-client.js';
export type {
  DurableAgentClientOptions,
  ConnectOptions,
  StartOptions,
  StartResult,
  SendOptions,
  SendResult,
  AskOptions,
  ConversationStatusReport,
  ListOptions,
  ListStatus,
  ConversationSummary,
  ApproveOptions,
  DenyOptions,
  ConversationPendingApproval,
  ListPendingApprovalsOptions,
} from './types.js';
export {
  DurableAgentClientError,
  ConversationNotFoundError,
  ConversationEndedError,
  MessageRejectedError,
  TooManyUpdatesError,
  ConversationRollingOverError,
  AskTimeoutError,
  UnknownApprovalError,
  ApprovalAlreadyDecidedError,
  InvalidApprovalArgumentsError,
  InvalidSettingsError,
  InvalidTenantError,
  TenantMismatchError,
  type EndedReason,
} from './errors.js';
export type { ConversationTranscriptPage } from './transcript.js';
export { AgentSchedules, type AgentScheduleSummary, type ScheduleCreateOptions } from './schedules.js';
export { ScheduleError, InvalidScheduleError, ScheduleNotFoundError, ScheduleExistsError } from './schedule-errors.js';
export type { ScheduledFiring, ScheduleOverlap } from '../workflows/schedule-types.js';
export type { SpendOptions } from './spend.js';
export type { SpendTotals } from '../shared/spend.js';
export {
  InputRequestNotFoundError,
  InputAlreadyAnsweredError,
  InvalidInputError,
  type InputAnswerOptions,
} from './input-answers.js';
export { connectionOptions, DEFAULT_TEMPORAL_ADDRESS } from './connection.js';

// Settings, results and messages.
export type {
  ConversationSettings,
  ConversationStatus,
  ConversationPhase,
  StopReason,
  TurnResult,
  PendingApproval,
  ApprovalDecision,
  ApprovalPolicy,
  ApprovalSettings,
  InputRequest,
  InputAnswer,
  OutputFormat,
} from '../workflows/definitions.js';
export type { OutputRequest } from './output-format.js';
export { DEFAULT_BUDGET, type TurnBudget, type BudgetLimit } from '../workflows/budget.js';
export type { ConversationBudget } from '../workflows/cost-budget.js';
export type {
  ChatMessage,
  SystemMessage,
  CompactionRecord,
  UserMessage,
  AssistantMessage,
  ToolMessage,
  ToolCall,
  ToolOutcome,
  TokenUsage,
  CostSpend,
} from '../shared/types.js';

// The event stream (docs/streaming.md).
export { subscribe, AnswerText, type SubscribeOptions } from './stream.js';
export {
  StreamFailureType,
  type StreamEvent,
  type StreamEventType,
  type TurnStartedEvent,
  type ModelAttemptStartedEvent,
  type TextDeltaEvent,
  type ToolCallStartedEvent,
  type ToolCallFinishedEvent,
  type TurnFinishedEvent,
  type ApprovalRequestedEvent,
  type ApprovalDecidedEvent,
  type InputRequestedEvent,
  type InputAnsweredEvent,
} from '../workflows/stream-events.js';
