import type { ApplicationFailure } from '@temporalio/common';
import type {
  ChatMessage,
  ModelCallResult,
  ProviderCompaction,
  ProviderCompactionRequest,
  ResponseFormat,
  ThinkingSetting,
  ToolDefinition,
} from '../../../../shared/types.js';
import { OPENAI_SETUP, toModelFailure, type OfferedTool, type ProviderSetup } from '../errors.js';
import type { ToolLimits } from '../tool-limits.js';

/**
 * The model APIs a conversation's model can name: `anthropic:claude-sonnet-4-5`, `openai:gpt-5.1`,
 * `openai-responses:gpt-5.1`. A name without one of these prefixes goes to the default provider, Chat Completions,
 * whole (so `llama3:8b` on an OpenAI-compatible server keeps its colon).
 */
export const ProviderName = {
  ChatCompletions: 'openai',
  Anthropic: 'anthropic',
  OpenAIResponses: 'openai-responses',
} as const;

export type ProviderName = (typeof ProviderName)[keyof typeof ProviderName];

const PROVIDER_NAMES: readonly string[] = Object.values(ProviderName);

/** A conversation's model setting split into the provider that serves it and the name that provider knows it by. */
export interface ModelChoice {
  provider: ProviderName;
  model: string;
}

export function parseModelName(name: string): ModelChoice {
  const colon = name.indexOf(':');
  const prefix = colon > 0 ? name.slice(0, colon) : '';
  if (PROVIDER_NAMES.includes(prefix) && colon < name.length - 1) {
    return { provider: prefix as ProviderName, model: name.slice(colon + 1) };
  }
  return { provider: ProviderName.ChatCompletions, model: name };
}

/** Options every provider sends with a request: the idempotency key header and the activity's cancellation. */
export interface SdkRequestOptions {
  headers?: Record<string, string>;
  signal?: AbortSignal;
}

/**
 * The one method of an SDK client a provider needs (`chat.completions.create`, `messages.create`); tests pass a real
 * client pointed at a local server, or a stub of this.
 */
export interface CreateMethod<Body, Answer> {
  create(body: Body, options?: SdkRequestOptions): PromiseLike<Answer>;
}

/** One model call in provider-neutral terms; each provider converts it to its API at the edge. */
export interface ProviderRequest {
  /** The model as the provider names it (without the provider prefix). */
  model: string;
  /** The transcript as the model should see it, trimmed to the context budget. */
  messages: ChatMessage[];
  /** Extra instruction for this call only, sent after the transcript. */
  instruction: string | undefined;
  /** The tools to offer, already fitted to the provider's limits; empty for none. */
  tools: ToolDefinition[];
  toolChoice: 'auto' | 'none';
  temperature: number | undefined;
  maxCompletionTokens: number | undefined;
  thinking: ThinkingSetting | undefined;
  /** The JSON Schema the answer must match (structured output), as each API's own option. */
  responseFormat: ResponseFormat | undefined;
  /** Sent as the `Idempotency-Key` header, so a retried request can be recognised. */
  idempotencyKey: string;
  signal: AbortSignal;
  /** `settings.compaction: "provider"`: the API's own compaction (a provider without it is never asked). */
  providerCompaction?: ProviderCompactionRequest;
  /** Present when the answer is to be streamed: called with each piece of text as it arrives. */
  onText?: (text: string) => void;
}

/** What a provider answers: the result without the turn's setup, which the model activity adds. */
export type ProviderAnswer = Omit<ModelCallResult, 'turnSetup'>;

/** One model API behind the model activity: provider-neutral transcript in, provider-neutral answer out. */
export interface ModelProvider {
  readonly name: ProviderName;
  /** Where requests go, for error messages. */
  readonly endpoint: string;
  /** What a tool definition may be in this API; the activity fits the turn's tools to it before each call. */
  readonly toolLimits: ToolLimits;
  /**
   * The kind of compaction item the API makes when it compacts the input itself (`settings.compaction: "provider"`);
   * undefined when it cannot.
   */
  readonly nativeCompaction: ProviderCompaction['type'] | undefined;
  call(request: ProviderRequest): Promise<ProviderAnswer>;
  /** The failure a thrown error becomes, classified as retryable or not (see ../errors.ts). */
  toFailure(error: unknown, tools: readonly OfferedTool[]): ApplicationFailure;
}

/** What makes a provider besides its call: errors name its endpoint (the client's `baseURL`) and its variables. */
export interface ProviderDescription {
  name: ProviderName;
  client: object;
  /** Named in errors when the client has no `baseURL`. */
  defaultEndpoint: string;
  toolLimits: ToolLimits;
  /** Default none. */
  nativeCompaction?: ProviderCompaction['type'];
  /** Default: the `OPENAI_*` variables. */
  setup?: ProviderSetup;
}

export function defineProvider(
  description: ProviderDescription,
  call: (request: ProviderRequest) => Promise<ProviderAnswer>,
): ModelProvider {
  const endpoint = (description.client as { baseURL?: string }).baseURL ?? description.defaultEndpoint;
  const setup = description.setup ?? OPENAI_SETUP;
  return {
    name: description.name,
    endpoint,
    toolLimits: description.toolLimits,
    nativeCompaction: description.nativeCompaction,
    toFailure: (error, tools) => toModelFailure(error, endpoint, tools, setup),
    call,
  };
}
