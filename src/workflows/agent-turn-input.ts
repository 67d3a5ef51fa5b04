import type { ChatMessage } from '../shared/types.js';
import type { ConversationSettings } from './definitions.js';
import type { OutputFormat } from './structured-output.js';

/** The input of `agentTurnWorkflow`: one agent turn, run as a workflow of its own (docs/embedding.md). */
export interface AgentTurnInput {
  /** The messages so far; the last is usually the user's. A `system` message first, or `settings.systemPrompt`. */
  messages: ChatMessage[];
  /** Model, system prompt, budget, approvals… as a conversation's; `stream` is always off here. Default the worker's. */
  settings?: ConversationSettings;
  /**
   * The tools the turn may call, by name or pattern (`files__*`); a sub-agent only when named (`agent__…`).
   * Default every tool but the sub-agents.
   */
  tools?: string[];
  /** The answer must be JSON matching this (structured output); default a text answer. */
  output?: OutputFormat;
  /** The id the result's `messageId` and `conversationId` carry; default this workflow's id. */
  messageId?: string;
  /**
   * Set by a conversation that runs this turn for its sub-agent: the turn's approvals are answered there, not here.
   * @internal
   */
  parent?: { workflowId: string; callId: string; agent: string };
}
