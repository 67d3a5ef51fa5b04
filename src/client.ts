/**
 * durable-agent's client: the typed API backend services use to drive conversations (create-or-append, ask and wait,
 * interrupt, end, transcripts across runs, lists by state).
 */
export {
  DurableAgentClient,
  CONVERSATION_WORKFLOW_TYPE,
  DEFAULT_ROLLING_OVER_WAIT_MS,
  type DurableAgentClientOptions,
  type ConnectOptions,
  type StartOptions,
  type StartResult,
  type SendOptions,
  type SendResult,
  type AskOptions,
  type ConversationStatusReport,
  type ListOptions,
  type ListStatus,
  type ConversationSummary,
} from './client/durable-agent-client.js';
export {
  DurableAgentClientError,
  ConversationNotFoundError,
  ConversationEndedError,
  MessageRejectedError,
  TooManyUpdatesError,
  ConversationRollingOverError,
  AskTimeoutError,
  type EndedReason,
} from './client/errors.js';
export { TranscriptChain, MAX_TRANSCRIPT_PAGE, type ConversationTranscriptPage } from './client/transcript.js';
export { connectTemporal, connectionOptions, DEFAULT_TEMPORAL_ADDRESS } from './client/connection.js';
export {
  conversationWorkflowId,
  type ConversationSettings,
  type ConversationStatus,
  type ConversationPhase,
  type ConversationOutcome,
  type ConversationState,
  type ConversationInput,
  type IncomingMessage,
  type StopReason,
  type TurnResult,
  type TranscriptPage,
} from './workflows/definitions.js';
export {
  PollingProgressSource,
  DEFAULT_PROGRESS_POLL_MS,
  type TurnProgressSource,
  type TurnEvent,
  type FollowOptions,
  type ConversationReader,
} from './client/progress.js';
export {
  subscribe,
  AnswerText,
  StreamingProgressSource,
  type SubscribeOptions,
  type TurnTextEvent,
  type StreamingTurnEvent,
} from './client/stream.js';
export {
  StreamFailureType,
  type StreamEvent,
  type StreamEventBody,
  type StreamEventType,
  type PollEventsRequest,
  type PollEventsResult,
  type TurnStartedEvent,
  type ModelAttemptStartedEvent,
  type TextDeltaEvent,
  type ToolCallStartedEvent,
  type ToolCallFinishedEvent,
  type TurnFinishedEvent,
} from './workflows/stream-events.js';
