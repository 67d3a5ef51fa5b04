/**
 * The plain JSON shapes that cross the workflow/activity boundary and live in the transcript.
 * SDK objects (OpenAI, MCP) are converted to these at the edge, next to the SDK call.
 */

export type JsonValue = string | number | boolean | null | JsonValue[] | { [key: string]: JsonValue };
export type JsonObject = { [key: string]: JsonValue };

/** One tool call as the model asked for it. `arguments` is the raw JSON text the model produced. */
export interface ToolCall {
  id: string;
  name: string;
  arguments: string;
  /**
   * Set when the model's arguments were too large to record (see src/shared/payload-limits.ts): their size in bytes.
   * `arguments` is then `{}`, and the call is answered with an error instead of being run.
   */
  oversizedArgumentsBytes?: number;
}

/**
 * How a tool message came to be: `ok` and `error` are real results from the tool (`error` is MCP `isError: true`);
 * the others are synthetic results that durable-agent wrote so that every tool call gets exactly one tool message.
 * `result_too_large`: the tool ran, but Temporal refused its result as too large for a payload. `denied`: a person (or
 * the approval timeout) refused the call; it did not run, and the content carries the reason (docs/approvals.md).
 */
export type ToolOutcome =
  | 'ok'
  | 'error'
  | 'invalid_arguments'
  | 'unknown_tool'
  | 'unavailable'
  | 'outcome_unknown'
  | 'result_too_large'
  | 'cancelled'
  | 'budget_exhausted'
  | 'denied';

export type ChatMessage =
  | SystemMessage
  | { role: 'user'; content: string; id?: string }
  | {
      role: 'assistant';
      content: string | null;
      toolCalls?: ToolCall[];
      reasoning?: ReasoningItem[];
      /** With `settings.compaction: "provider"`: the provider compacted the input before this answer (see the type). */
      providerCompaction?: ProviderCompaction;
    }
  | { role: 'tool'; toolCallId: string; name: string; content: string; outcome: ToolOutcome };

/**
 * A system message: the system prompt, or (with `compaction`) the summary that stands in for the conversation's older
 * messages once its transcript outgrew the model's window (docs/models.md#compaction). A summary is appended where it
 * was made, like any message, so positions and digests stay true; the model sees it after the system prompt, in place
 * of the messages it summarizes (`modelView`, src/shared/compaction.ts).
 */
export interface SystemMessage {
  role: 'system';
  content: string;
  /** Present on a summary: what it summarizes and why it was made. */
  compaction?: CompactionRecord;
}

/** What a summary in the transcript stands for. */
export interface CompactionRecord {
  /**
   * The messages this summary summarized for the first time, as whole-conversation indexes `[from, to)`: the earlier
   * summary (if any) is folded into it, so the summary stands for everything before `to` but the system prompt.
   * @asType integer
   * @minimum 0
   */
  from: number;
  /**
   * The first message the model still saw verbatim when the summary was made (exclusive end of `[from, to)`).
   * @asType integer
   * @minimum 0
   */
  to: number;
  /**
   * How many messages just before this one the model still sees verbatim (the newest turns when it was made).
   * @asType integer
   * @minimum 0
   */
  verbatim: number;
  /** `window`: the model's input passed the threshold of its window; `refusal`: the model refused it as too long. */
  reason: 'window' | 'refusal';
  /**
   * The model input's estimated tokens when the summary was made.
   * @asType integer
   * @minimum 0
   */
  tokensBefore: number;
}

/**
 * The model's reasoning as its provider returned it, kept with the assistant message so it can be sent back in the
 * tool rounds that follow (Anthropic requires its thinking blocks back with their signatures; OpenAI's Responses API
 * reasons from scratch without its encrypted reasoning). Never part of the message's text: only the provider that
 * wrote an item reads it, and other providers leave it out.
 */
export type ReasoningItem =
  | { type: 'anthropic_thinking'; thinking: string; signature: string }
  | { type: 'anthropic_redacted_thinking'; data: string }
  | { type: 'openai_reasoning'; id: string; encryptedContent: string; summary: string[] };

/**
 * Provider-native compaction (`settings.compaction: "provider"`, docs/models.md#provider-native-compaction): the
 * provider summarized the model's input itself and answered with this item, which stands for everything before it.
 * It is kept with the answer's assistant message and sent back in every later call, where the provider that wrote it
 * reads it instead of the messages before it (system messages excepted); other providers leave it out.
 * `openai_compaction` is the Responses API's `compaction` output item (its content is encrypted: only the API reads
 * it); `anthropic_compaction` is the Messages API's `compaction` block, whose `content` is the summary's text.
 */
export type ProviderCompaction =
  | { type: 'openai_compaction'; id: string; encryptedContent: string }
  | {
      type: 'anthropic_compaction';
      /** The summary; `null` when the provider's compaction failed (the block is then a no-op, sent back as it is). */
      content: string | null;
      encryptedContent?: string;
      signature?: string;
      /** The block's `tool_changes`, as the API returned them: sent back unchanged. */
      toolChanges?: JsonValue[];
    };

/**
 * A change the provider made to the model's input (provider-native compaction and context editing): reported in the
 * model call's result and the turn's `compaction.providerEdits`.
 */
export interface ProviderContextEdit {
  /**
   * `compaction` (the Responses API's compaction item, Anthropic's `compact_20260112`), or the Anthropic context edit's
   * type: `clear_tool_uses_20250919`, `clear_thinking_20251015`.
   */
  type: string;
  /**
   * Input tokens the edit removed, when the provider says.
   * @asType integer
   * @minimum 0
   */
  clearedInputTokens?: number;
  /**
   * Tool uses whose results were cleared (`clear_tool_uses_20250919`).
   * @asType integer
   * @minimum 0
   */
  clearedToolUses?: number;
  /**
   * Assistant turns whose thinking was cleared (`clear_thinking_20251015`).
   * @asType integer
   * @minimum 0
   */
  clearedThinkingTurns?: number;
}

/** What a model call asks of provider-native compaction (`settings.compaction: "provider"`). */
export interface ProviderCompactionRequest {
  /**
   * Compact when the input passes this many tokens: 80% of the model's window when the conversation knows it, else
   * absent (the provider's own default).
   * @asType integer
   * @minimum 1
   */
  threshold?: number;
}

/** Extended thinking for the providers that have it (Anthropic); others ignore it. */
export interface ThinkingSetting {
  /**
   * Tokens the model may spend thinking in each call; Anthropic requires at least 1,024 and less than the call's
   * `max_tokens`.
   * @asType integer
   * @minimum 1024
   */
  budgetTokens: number;
}

export type UserMessage = Extract<ChatMessage, { role: 'user' }>;
export type AssistantMessage = Extract<ChatMessage, { role: 'assistant' }>;
export type ToolMessage = Extract<ChatMessage, { role: 'tool' }>;

/** MCP tool annotations that change how durable-agent retries a call. */
export interface ToolAnnotations {
  readOnlyHint?: boolean;
  idempotentHint?: boolean;
  destructiveHint?: boolean;
  openWorldHint?: boolean;
}

/** A tool as the model sees it (namespaced `server__tool`) plus what the worker needs to call it. */
export interface ToolDefinition {
  /** Namespaced, sanitised name the model uses, e.g. `files__read_file`. */
  name: string;
  description: string;
  /** JSON Schema of the arguments object. */
  inputSchema: JsonObject;
  annotations: ToolAnnotations;
  /** The configured MCP server name. */
  server: string;
  /** The tool's name on its MCP server. */
  originalName: string;
  /** Per-call timeout in milliseconds from the server's configuration. */
  timeoutMs: number;
  /**
   * Present when the server's `requireApproval` asks a person to approve each call of this tool (docs/approvals.md);
   * absent when it does not, so tool lists without approvals are recorded as before.
   */
  approval?: ToolApproval;
  /**
   * How long a call may wait in all for a person to answer the server's questions (MCP elicitation), from the server's
   * configuration; the workflow adds it to the call's start-to-close timeout. Absent in tools recorded before it was.
   */
  elicitationTimeoutMs?: number;
  /**
   * `function`: a tool written in TypeScript that runs in the worker (`defineTool`, docs/tools.md); `server` is then
   * `worker`. Absent for an MCP server's tool, so the tool lists of workers without such tools are recorded as before.
   */
  source?: 'function' | 'agent';
  /**
   * For `source: 'agent'`: the sub-agent a call of this tool runs as a child workflow (`defineSubAgent`,
   * docs/embedding.md); `server` is then `agent`.
   */
  agent?: SubAgentSettings;
  /**
   * Called as an MCP task (docs/mcp.md, "Tasks"): `required` when the server's `execution.taskSupport` says so,
   * `optional` when it allows it and the server's `optionalTasks` setting asks for it. Absent for every other tool, so
   * tool lists without tasks are recorded as before.
   */
  task?: 'required' | 'optional';
}

/** What a sub-agent runs with: plain data, recorded with the turn's tools. */
export interface SubAgentSettings {
  /** The sub-agent's model; default the worker's. */
  model?: string;
  /** Its system prompt. */
  systemPrompt?: string;
  /**
   * The tools it may call, by name as the model sees them (`<server>__<tool>`, a TypeScript tool's name, `*` matching
   * any run of characters); default every tool except the sub-agents.
   */
  tools?: string[];
  /** Its own per-turn limits, each capped by what is left of the calling turn's. */
  budget?: {
    /** @asType integer */
    maxRounds?: number;
    /** @asType integer */
    maxToolCalls?: number;
    /** @asType integer */
    maxTokens?: number;
    /** @asType integer */
    maxDurationMs?: number;
    maxCostUsd?: number;
  };
}

/** Why a tool's calls wait for a person's approval. */
export interface ToolApproval {
  /** For people: which policy asks for it, e.g. `server "files" requires approval of tools not annotated read-only`. */
  reason: string;
}

export interface TokenUsage {
  /**
   * @asType integer
   * @minimum 0
   */
  inputTokens: number;
  /**
   * @asType integer
   * @minimum 0
   */
  outputTokens: number;
  /**
   * @asType integer
   * @minimum 0
   */
  totalTokens: number;
  /**
   * Of `inputTokens`, those read from the provider's prompt cache (billed at the cache-read price); absent when none.
   * @asType integer
   * @minimum 0
   */
  cacheReadTokens?: number;
  /**
   * Of `inputTokens`, those written to the provider's prompt cache (billed at the cache-write price); absent when none.
   * @asType integer
   * @minimum 0
   */
  cacheWriteTokens?: number;
  /**
   * Of `outputTokens`, those the model spent reasoning (billed as output); absent when none.
   * @asType integer
   * @minimum 0
   */
  reasoningTokens?: number;
}

export const ZERO_USAGE: TokenUsage = { inputTokens: 0, outputTokens: 0, totalTokens: 0 };

/** Input of the `callTool` activity: one tool call the workflow has already validated. */
export interface CallToolInput {
  toolCallId: string;
  tool: Pick<ToolDefinition, 'name' | 'server' | 'originalName' | 'annotations' | 'timeoutMs' | 'source'>;
  arguments: JsonObject;
  /** The conversation's `toolAttempts`, only when not the default (the activity counts its failed attempts). */
  toolAttempts?: number;
  /**
   * Only on a call sent again after a 2026-07-28 server asked questions (`input_required`, docs/mcp.md): the round
   * (2 for the first call sent again), the person's answers by the server's keys, and the server's opaque state.
   */
  inputRound?: number;
  inputResponses?: Record<string, ToolQuestionAnswer>;
  requestState?: string;
  /**
   * Where the server's questions go (MCP elicitation): a sub-agent's calls ask the conversation that called it. Absent:
   * the run that scheduled the call.
   */
  questionsTo?: { workflowId: string; runId: string };
  /** Call it as an MCP task: the server answers with a task (`outcome: 'task'`), polled by the workflow. */
  task?: true;
}

/** A question a 2026-07-28 server asked by answering a tool call `input_required` (docs/mcp.md). */
export interface ToolQuestion {
  /** The server's key for the question: its answer goes back under it. */
  key: string;
  mode: 'form' | 'url';
  message: string;
  /** Form mode: the JSON Schema of the requested fields. */
  requestedSchema?: JsonObject;
  /** URL mode: the page the person opens. */
  url?: string;
}

/** The person's answer to a {@link ToolQuestion}, as the server gets it. */
export interface ToolQuestionAnswer {
  action: 'accept' | 'decline' | 'cancel';
  content?: JsonObject;
}

/**
 * The `callTool` activity's other result: a 2026-07-28 server needs answers before it answers the call. The workflow
 * asks the person and sends the call again, with the answers and `requestState`, as a new activity.
 */
export interface CallToolInputRequired {
  outcome: 'input_required';
  questions: ToolQuestion[];
  requestState?: string;
}

/**
 * Result of the `callTool` activity. `error` is an MCP result with `isError: true` (the model sees it);
 * `outcome_unknown` means an earlier attempt of a call that is not safe to repeat may have run.
 */
export interface CallToolResult {
  outcome: 'ok' | 'error' | 'outcome_unknown';
  content: string;
  truncated: boolean;
}

/** Where a model call's transcript prefix is: the first `count` messages, whose chained digest is `digest`. */
export interface TranscriptPosition {
  count: number;
  digest: string;
}

/**
 * Input of the `callModel` activity. It carries only what the worker may not have seen: the transcript prefix is
 * named by position and digest, and the tools by their digest; the worker rebuilds both from its cache or, on a
 * miss, from the workflow by query. So history grows with new content, not with the transcript.
 */
export interface ModelCallInput {
  workflowId: string;
  runId: string;
  turn: number;
  round: number;
  prefix: TranscriptPosition;
  newMessages: ChatMessage[];
  /** Digest of the turn's tool list (see `toolsDigest`); `undefined` when the turn has no tools. */
  toolsDigest: string | undefined;
  model: string | undefined;
  temperature: number | undefined;
  maxCompletionTokens: number | undefined;
  maxInputTokens: number | undefined;
  /** `none` for the final-answer call after the budget ran out. */
  toolChoice: 'auto' | 'none';
  /** Extra instruction sent with this call only (not recorded in the transcript). */
  instruction: string | undefined;
  /** Stream the completion and publish its text to the conversation's subscribers; default off. */
  stream?: boolean;
  /**
   * The turn's first call: list the tools of every MCP server, offer them to the model and return them with the
   * result (`turnSetup`), so the workflow records them once per turn without an activity of its own.
   * `toolsDigest` is then `undefined`.
   */
  listTools?: true;
  /** The conversation's `modelAttempts`, only when not the default (the activity counts its failed attempts). */
  modelAttempts?: number;
  /** The conversation's extended thinking, only when set. */
  thinking?: ThinkingSetting;
  /** A cost budget limits the turn: the worker refuses to call a model it cannot price. Only when set. */
  costBudget?: true;
  /**
   * A tenant's call: the worker checks the tenant's `dailyCostUsd` (its tenants file) against the tenant's ledger of
   * `day` before making it (docs/tenants.md). Only in a tenant's turns.
   */
  dailyCost?: DailyCostCheck;
  /** The turn asks for structured output: the provider's structured-output option. Absent otherwise. */
  responseFormat?: ResponseFormat;
  /**
   * With `listTools`: offer only the tools these names or patterns match (a sub-agent's or a child turn's selection).
   * Absent: every tool but the sub-agents.
   */
  toolSelection?: string[];
  /**
   * With `listTools`: the digest of the tool list the conversation recorded last. When the listing has this digest,
   * the result names it (`turnSetup.toolsDigest`) instead of recording the list again. Absent: the list is returned.
   */
  knownToolsDigest?: string;
  /**
   * A summary call (compaction, docs/models.md#compaction) instead of a turn's model call: the model summarizes these
   * messages of the run's transcript, without tools; the answer is the summary. Absent for every other call.
   */
  summarize?: SummaryRequest;
  /**
   * `settings.compaction: "provider"`: the provider compacts the input itself (docs/models.md#provider-native-compaction).
   * Absent for every other call; a provider without it refuses the call with `ProviderCompactionUnsupported`.
   */
  providerCompaction?: ProviderCompactionRequest;
}

/** What the worker checks a tenant's call against: its daily cost limit (docs/tenants.md, "Budgets"). */
export interface DailyCostCheck {
  tenant: string;
  /** The UTC day of the call (workflow time), `YYYY-MM-DD`: the ledger it is checked against. */
  day: string;
  /**
   * The least the call costs: the input of the conversation's call before, sent again (docs/cost.md).
   * @minimum 0
   */
  leastUsd: number;
  /** A person approved this one call past the limit: it is made without the check. */
  approved?: true;
  /**
   * A person raised the tenant's limit for `day` to this: the worker records it in the ledger first.
   * @minimum 0
   */
  raiseToUsd?: number;
}

/** What a summary call summarizes (src/shared/compaction.ts). */
export interface SummaryRequest {
  /** The n-th summary call of the turn, from 1: part of the call's idempotency key. */
  index: number;
  /** The run's messages `[from, to)` to summarize; earlier summaries among them are left out. */
  from: number;
  to: number;
  /** Index of the earlier summary folded into this one. */
  previous?: number;
  /** What the summary's transcript message will record. */
  record: CompactionRecord;
  /** Estimated tokens the request's text may have. */
  maxInputTokens: number;
}

/** A JSON Schema the model's answer must match, as the model activity sends it (in each API's own option). */
export interface ResponseFormat {
  name: string;
  schema: JsonObject;
  strict: boolean;
}

/** What the turn's first model call found: recorded once per turn, used by every later call of the turn. */
export interface TurnSetup {
  /** The tools the model may call in this turn; absent when `toolsDigest` names the list the call knew. */
  tools?: ToolDefinition[];
  /**
   * Instead of `tools`: the listing is the one the call named in `knownToolsDigest` (recorded by an earlier turn), so
   * it is not recorded again.
   */
  toolsDigest?: string;
  /** The model that answers when the conversation names none (the worker's default). */
  model: string;
  /** MCP servers left out of this turn's tools because they could not be listed; absent when none were. */
  unavailableServers?: UnavailableServer[];
}

/**
 * What one model call cost in US dollars, priced by the worker that made it from its usage (docs/cost.md) and recorded
 * with the call's result, so replay never prices it again. A model without a known price is `priced: false`, not free.
 */
export type ModelCallCost =
  | {
      priced: true;
      /** The call's price: input (cache reads and writes at their own prices) plus output (reasoning included). */
      usd: number;
      /** The input's part of `usd`: the next call of the conversation sends at least this input again. */
      inputUsd: number;
      /** Where the price came from: `configured`, or `genai-prices:<provider>/<model>`. */
      source: string;
    }
  | { priced: false; usd: null; reason: string };

/** What the model calls of a turn or a conversation cost (docs/cost.md). */
export interface CostSpend {
  /** US dollars of the calls that had a price. */
  usd: number;
  /**
   * Calls without a known price, not counted in `usd` (which is then a lower bound); absent when none.
   * @asType integer
   * @minimum 1
   */
  unpricedCalls?: number;
}

export const ZERO_COST: CostSpend = { usd: 0 };

export interface ModelCallResult {
  message: AssistantMessage;
  usage: TokenUsage;
  finishReason: string;
  model: string;
  /** Absent in results recorded before calls were priced. */
  cost?: ModelCallCost;
  /** Only for a call with `listTools`. */
  turnSetup?: TurnSetup;
  /** What the provider cleared or compacted in this call's input (provider-native compaction); absent when nothing. */
  contextEdits?: ProviderContextEdit[];
}

/** A page of the transcript and the turn's tools, as the workflow answers the `modelContext` query. */
export interface ModelContextPage {
  messages: ChatMessage[];
  from: number;
  total: number;
  tools: ToolDefinition[] | undefined;
  toolsDigest: string | undefined;
}

/** An MCP server left out of a turn's tools because it could not be started, reached or listed. */
export interface UnavailableServer {
  server: string;
  /** Why, as the worker saw it (secrets redacted). */
  reason: string;
}
