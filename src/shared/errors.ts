import { ApplicationFailure, type ApplicationFailureOptions } from '@temporalio/common';

/**
 * Failure types: the `type` of every ApplicationFailure durable-agent raises, in one place.
 * Workflows, activities, the client and tests match on these constants, never on strings.
 */
export const FailureType = {
  // Model activity. Retryable: rate limits, server errors, timeouts, connection errors.
  ModelRateLimited: 'ModelRateLimited',
  ModelServerError: 'ModelServerError',
  ModelTimeout: 'ModelTimeout',
  ModelConnectionError: 'ModelConnectionError',
  ModelConflict: 'ModelConflict',
  // Model activity. Non-retryable: fixing them needs a person.
  ModelQuotaExceeded: 'ModelQuotaExceeded',
  ModelBadRequest: 'ModelBadRequest',
  ModelAuthentication: 'ModelAuthentication',
  ModelPermissionDenied: 'ModelPermissionDenied',
  ModelNotFound: 'ModelNotFound',
  /** The conversation's model names a provider (`anthropic:`, `openai-responses:`) the worker has no client for. */
  ModelNotConfigured: 'ModelNotConfigured',
  ModelContextLengthExceeded: 'ModelContextLengthExceeded',
  /**
   * `settings.compaction` is `"provider"` and the model's provider has no native compaction (Chat Completions):
   * non-retryable; the message names the providers that have it (docs/models.md#provider-native-compaction).
   */
  ProviderCompactionUnsupported: 'ProviderCompactionUnsupported',
  ModelContentFiltered: 'ModelContentFiltered',
  ModelInvalidResponse: 'ModelInvalidResponse',
  /** The model's answer is too large for an activity result even after cutting its text and arguments. */
  ModelResponseTooLarge: 'ModelResponseTooLarge',
  /**
   * A cost budget limits the turn and the worker has no price for its model (non-retryable): the call was not made.
   * Fixed by giving the model a price (docs/cost.md) or by removing the budget.
   */
  ModelUnpriced: 'ModelUnpriced',
  /**
   * A tenant's call would pass its `dailyCostUsd` (non-retryable): the call was not made. Its details are a
   * `DailyCostLimitDetails`; the turn stops (`budget:dailyCost`) or waits for a person (docs/tenants.md).
   */
  DailyCostLimit: 'DailyCostLimit',
  /** The worker could not rebuild the transcript prefix the workflow named (retryable). */
  TranscriptUnavailable: 'TranscriptUnavailable',

  // Tool activity.
  /** The MCP server could not be reached or the connection dropped (retryable after reconnecting). */
  ToolTransportError: 'ToolTransportError',
  /** No configured MCP server provides this tool (non-retryable). */
  ToolNotConfigured: 'ToolNotConfigured',
  /** A TypeScript tool's `execute` threw or timed out (retried only when the tool is read-only or idempotent). */
  ToolExecutionError: 'ToolExecutionError',

  /**
   * Raised by the Temporal worker itself, not by durable-agent: it refused to send an activity's result (or heartbeat)
   * larger than the namespace's payload limit. durable-agent's own bounds keep results under that limit; this shows
   * only on a namespace whose limit is lower. Non-retryable in the workflow's retry policies: a retry would run the
   * tool again for the same result.
   */
  PayloadsTooLarge: 'PayloadsTooLarge',

  // Conversation workflow.
  ConversationEnded: 'ConversationEnded',
  ConversationRollingOver: 'ConversationRollingOver',
  InvalidMessage: 'InvalidMessage',
  /** The turn's answer did not match its output schema, after the corrections allowed (the turn's `error`). */
  OutputInvalid: 'OutputInvalid',
  /**
   * The worker could not decrypt a client's signal, update or query argument (another key id, or another key under the
   * same id): refused or dropped, never a failed workflow task. Its message names the key ids only and stays readable
   * by the client whatever its keys (src/codec/failure-converter.cjs).
   */
  UndecodablePayload: 'UndecodablePayload',

  // Approvals (docs/approvals.md): the `approve` and `deny` updates refuse these; nothing changes.
  /** No tool call with this id waits for a decision in this conversation. */
  UnknownApproval: 'UnknownApproval',
  /** The tool call was decided already (by a person, a timeout or an interrupt). */
  AlreadyDecided: 'AlreadyDecided',
  /** Edited arguments that do not match the tool's input schema. */
  InvalidArguments: 'InvalidArguments',
  // The `answerInput` update (MCP elicitation): nothing changes when it fails.
  /** No pending question has this request id (it never existed, or its tool call ended). */
  UnknownInputRequest: 'UnknownInputRequest',
  /** The question was answered already (by a person, its timeout or an interrupt). */
  AlreadyAnswered: 'AlreadyAnswered',
  /** The answer does not fit: content that does not match the requested schema, or content with decline/cancel. */
  InvalidInput: 'InvalidInput',
} as const;

export type FailureType = (typeof FailureType)[keyof typeof FailureType];

/**
 * An ApplicationFailure durable-agent raises on purpose (a refused update, a named model or tool error): an expected
 * outcome, which needs no stack trace. A stack's frames would name files of the machine that runs the worker, and this
 * failure reaches clients and stays in the workflow's history; its type and message say all there is to say.
 */
export function expectedFailure(options: ApplicationFailureOptions): ApplicationFailure {
  const failure = ApplicationFailure.create(options);
  failure.stack = '';
  return failure;
}

/** The message of anything thrown: an Error's `message` (with its direct cause's when that adds something), or the value as text. */
export function errorMessage(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  const cause = error.cause instanceof Error ? error.cause.message : undefined;
  return cause !== undefined && !error.message.includes(cause) ? `${error.message} (${cause})` : error.message;
}

/** `error` and each of its causes in turn (plain objects too: `fetch` wraps socket errors in `{ code }` causes). */
export function* causeChain(error: unknown): Generator<object> {
  const seen = new Set<unknown>();
  for (let current = error; typeof current === 'object' && current !== null && !seen.has(current);) {
    seen.add(current);
    yield current;
    current = (current as { cause?: unknown }).cause;
  }
}

/** A value as an error message quotes what was found: `nothing`, `null`, `an array`, `an object`, `number 3`. */
export function describeValue(value: unknown): string {
  if (value === undefined) return 'nothing';
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'object') return 'an object';
  return `${typeof value} ${JSON.stringify(value)}`;
}

/**
 * Base of every error durable-agent throws on purpose: `instanceof DurableAgentError` catches them all, and each
 * one's `name` is its class's name (set here from `new.target`, which a field initializer cannot read).
 */
export class DurableAgentError extends Error {
  constructor(message?: string, options?: ErrorOptions) {
    super(message, options);
    this.name = new.target.name;
  }
}

/**
 * A setting is wrong: an environment variable, a configuration file's key, a command's option. The message names the
 * setting, the value and what is expected; the CLI exits with code 2 for it.
 */
export class ConfigError extends DurableAgentError {}
