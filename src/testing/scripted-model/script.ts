import { readFile } from 'node:fs/promises';
import { ConfigError } from '../../config/index.js';
import type { JsonObject, JsonValue } from '../../shared/types.js';
import type { RecordedRequest } from './recorded-request.js';

/**
 * The script format: what the scripted model answers, one step per model call.
 * docs/scripted-model.md is the reference for users; keep the two in step.
 */

/** Options every step accepts: how the answer is delivered rather than what it says. */
export interface StepDelivery {
  /** Milliseconds to wait before answering, on every attempt unless `delayAttempts` says otherwise. Default: 0. */
  delayMs?: number;
}

/** Options of the steps that answer with a completion. */
export interface CompletionDelivery extends StepDelivery {
  /**
   * How many attempts wait `delayMs`: the request that gets the step first is attempt 1, each retry with the same
   * idempotency key the next one; later retries answer at once. `1` holds back only the first attempt, e.g. to kill
   * a worker while it waits, or to let a client time out once. Default: every attempt.
   */
  delayAttempts?: number;
  /** Milliseconds to wait between two streamed chunks. Default: 0. */
  chunkDelayMs?: number;
  /**
   * Drop the connection after this many streamed chunks (a non-streaming request gets no response at all).
   * Default: never.
   */
  failAfterChunks?: number;
  /** Token counts to report. Default: estimated at one token per 4 characters. */
  usage?: ScriptUsage;
  /**
   * `finish_reason` to report. Default: `tool_calls` when the step has tool calls, otherwise `stop`. The other APIs
   * get their own name for it: `/v1/messages` `end_turn`, `tool_use`, `max_tokens`, `refusal`; `/v1/responses` a
   * `completed` or `incomplete` status.
   */
  finishReason?: FinishReason;
  /**
   * The model's reasoning before its answer. `/v1/messages` sends it as a thinking block with a signature,
   * `/v1/responses` as a reasoning item with encrypted content (both derived from the text); Chat Completions has no
   * place for it and leaves it out. Default: none.
   */
  reasoning?: string;
}

export type FinishReason = 'stop' | 'tool_calls' | 'length' | 'content_filter';

/**
 * Token counts in the wire names of Chat Completions, the cache in OpenAI's spelling or in Anthropic's (not both);
 * each API gets them in its own shape (usage.ts).
 */
export interface ScriptUsage {
  prompt_tokens: number;
  completion_tokens: number;
  /** Default: `prompt_tokens + completion_tokens`. */
  total_tokens?: number;
  /** Of `prompt_tokens`, those read from the prompt cache (OpenAI's spelling). Default: none reported. */
  prompt_tokens_details?: { cached_tokens: number };
  /** Of `completion_tokens`, those spent reasoning. Default: none reported. */
  completion_tokens_details?: { reasoning_tokens: number };
  /**
   * Tokens written to the prompt cache, apart from `prompt_tokens` as Anthropic counts them (its `input_tokens` leaves
   * the cache out). Default: none reported.
   */
  cache_creation_input_tokens?: number;
  /** Tokens read from the prompt cache, apart from `prompt_tokens` as Anthropic counts them. Default: none reported. */
  cache_read_input_tokens?: number;
}

export interface ScriptToolCall {
  /** The tool's name as the model sees it, e.g. `files__read_file`. */
  name: string;
  /** An object (sent as its JSON text) or a raw string, so that tests can send malformed JSON. Default: `{}`. */
  arguments?: JsonObject | string;
}

/** The model answers with text. */
export interface ContentStep extends CompletionDelivery {
  content: string;
  toolCalls?: ScriptToolCall[];
}

/** The model asks for tool calls; several entries are parallel calls in one response. */
export interface ToolCallsStep extends CompletionDelivery {
  toolCalls: ScriptToolCall[];
  /** Text sent along with the tool calls. Default: none (`content: null`). */
  content?: string;
}

/** The model fails with an HTTP error, `times` requests in a row. */
export interface ErrorStep extends StepDelivery {
  error: ScriptedHttpError;
}

export interface ScriptedHttpError {
  /** HTTP status, e.g. 429 or 500. */
  status: number;
  /** Response headers, e.g. `{ "retry-after": "1" }`. Default: none. */
  headers?: Record<string, string>;
  /** Response body: JSON, or a string sent as plain text. Default: an OpenAI-style `{ "error": { ... } }`. */
  body?: JsonValue;
  /** How many requests in a row fail before the script moves on. Default: 1. */
  times?: number;
}

export type ScriptStep = ContentStep | ToolCallsStep | ErrorStep;

/** A step decided when its request arrives. It is called once per conversation; a retry gets the same step. */
export type StepFunction = (request: RecordedRequest) => ScriptStep | Promise<ScriptStep>;

/**
 * A whole script as a function: called with each new step position of a conversation.
 * Returning `undefined` ends the script (the request gets the past-the-end error).
 */
export type ScriptFunction = (
  request: RecordedRequest,
  position: { stepIndex: number },
) => ScriptStep | undefined | Promise<ScriptStep | undefined>;

export type Script = ReadonlyArray<ScriptStep | StepFunction> | ScriptFunction;

/** A script, a step or a script file is not what the format expects. */
export class ScriptValidationError extends ConfigError {}

const DELIVERY_KEYS = ['delayMs'] as const;
const COMPLETION_KEYS = [
  'content',
  'toolCalls',
  ...DELIVERY_KEYS,
  'delayAttempts',
  'chunkDelayMs',
  'failAfterChunks',
  'usage',
  'finishReason',
  'reasoning',
] as const;
const ERROR_STEP_KEYS = ['error', ...DELIVERY_KEYS] as const;
const ERROR_KEYS = ['status', 'headers', 'body', 'times'] as const;
const TOOL_CALL_KEYS = ['name', 'arguments'] as const;
const USAGE_KEYS = [
  'prompt_tokens',
  'completion_tokens',
  'total_tokens',
  'cache_creation_input_tokens',
  'cache_read_input_tokens',
] as const;
/** Usage keys a step may leave out. */
const OPTIONAL_USAGE_KEYS: readonly string[] = [
  'total_tokens',
  'cache_creation_input_tokens',
  'cache_read_input_tokens',
];
const USAGE_DETAILS = {
  prompt_tokens_details: 'cached_tokens',
  completion_tokens_details: 'reasoning_tokens',
} as const;
const FINISH_REASONS: readonly FinishReason[] = ['stop', 'tool_calls', 'length', 'content_filter'];

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function describe(value: unknown): string {
  if (value === undefined) return 'nothing';
  if (Array.isArray(value)) return 'an array';
  const text = JSON.stringify(value);
  return text.length > 60 ? `${text.slice(0, 57)}...` : text;
}

/** Validates steps one at a time, so that every message names the source, the step and the key. */
class StepValidator {
  constructor(
    private readonly source: string,
    private readonly stepIndex: number,
  ) {}

  fail(key: string | undefined, expected: string, actual: unknown): never {
    const where = key === undefined ? '' : ` "${key}"`;
    throw new ScriptValidationError(
      `${this.source}: step ${this.stepIndex}${where}: expected ${expected}, got ${describe(actual)}.`,
    );
  }

  onlyKeys(value: Record<string, unknown>, allowed: readonly string[], prefix = ''): void {
    for (const key of Object.keys(value)) {
      if (!allowed.includes(key)) {
        this.fail(`${prefix}${key}`, `one of the keys ${allowed.map((name) => `"${name}"`).join(', ')}`, key);
      }
    }
  }

  whole(value: unknown, key: string, minimum: number, maximum = Number.MAX_SAFE_INTEGER): void {
    if (value === undefined) return;
    if (typeof value !== 'number' || !Number.isInteger(value) || value < minimum || value > maximum) {
      const range = maximum === Number.MAX_SAFE_INTEGER ? `${minimum} or more` : `from ${minimum} to ${maximum}`;
      this.fail(key, `a whole number ${range}`, value);
    }
  }

  step(value: unknown): ScriptStep {
    if (!isObject(value)) {
      this.fail(undefined, 'an object with "content", "toolCalls" or "error"', value);
    }
    this.whole(value.delayMs, 'delayMs', 0);
    if ('error' in value) {
      this.onlyKeys(value, ERROR_STEP_KEYS);
      this.error(value.error);
      return value as unknown as ErrorStep;
    }
    if (!('content' in value) && !('toolCalls' in value)) {
      this.fail(undefined, 'an object with "content", "toolCalls" or "error"', value);
    }
    this.onlyKeys(value, COMPLETION_KEYS);
    if ('content' in value && typeof value.content !== 'string') this.fail('content', 'a string', value.content);
    if ('toolCalls' in value) this.toolCalls(value.toolCalls);
    if ('reasoning' in value && typeof value.reasoning !== 'string')
      this.fail('reasoning', 'a string', value.reasoning);
    this.whole(value.delayAttempts, 'delayAttempts', 1);
    this.whole(value.chunkDelayMs, 'chunkDelayMs', 0);
    this.whole(value.failAfterChunks, 'failAfterChunks', 0);
    if (value.usage !== undefined) this.usage(value.usage);
    if (value.finishReason !== undefined && !FINISH_REASONS.includes(value.finishReason as FinishReason)) {
      this.fail(
        'finishReason',
        `one of ${FINISH_REASONS.map((reason) => `"${reason}"`).join(', ')}`,
        value.finishReason,
      );
    }
    return value as unknown as ContentStep | ToolCallsStep;
  }

  private error(value: unknown): void {
    if (!isObject(value)) this.fail('error', 'an object like {"status": 429}', value);
    this.onlyKeys(value, ERROR_KEYS, 'error.');
    this.whole(value.status, 'error.status', 400, 599);
    if (value.status === undefined) this.fail('error.status', 'an HTTP status from 400 to 599', value.status);
    if (value.headers !== undefined) {
      if (!isObject(value.headers)) this.fail('error.headers', 'an object of header names to strings', value.headers);
      for (const [name, header] of Object.entries(value.headers)) {
        if (typeof header !== 'string') this.fail(`error.headers.${name}`, 'a string', header);
      }
    }
    this.whole(value.times, 'error.times', 1);
  }

  private toolCalls(value: unknown): void {
    if (!Array.isArray(value) || value.length === 0) {
      this.fail('toolCalls', 'a non-empty array of {"name", "arguments"}', value);
    }
    value.forEach((call: unknown, callIndex) => {
      const key = `toolCalls[${callIndex}]`;
      if (!isObject(call)) this.fail(key, 'an object {"name", "arguments"}', call);
      this.onlyKeys(call, TOOL_CALL_KEYS, `${key}.`);
      if (typeof call.name !== 'string' || call.name === '') this.fail(`${key}.name`, 'a non-empty string', call.name);
      if (call.arguments !== undefined && typeof call.arguments !== 'string' && !isObject(call.arguments)) {
        this.fail(`${key}.arguments`, 'an object or a string', call.arguments);
      }
    });
  }

  private usage(value: unknown): void {
    if (!isObject(value)) this.fail('usage', 'an object {"prompt_tokens", "completion_tokens"}', value);
    this.onlyKeys(value, [...USAGE_KEYS, ...Object.keys(USAGE_DETAILS)], 'usage.');
    for (const key of USAGE_KEYS) {
      if (!OPTIONAL_USAGE_KEYS.includes(key) && value[key] === undefined)
        this.fail(`usage.${key}`, 'a whole number', undefined);
      this.whole(value[key], `usage.${key}`, 0);
    }
    for (const [key, count] of Object.entries(USAGE_DETAILS)) {
      const details = value[key];
      if (details === undefined) continue;
      if (!isObject(details)) this.fail(`usage.${key}`, `an object {"${count}"}`, details);
      this.onlyKeys(details, [count], `usage.${key}.`);
      this.whole(details[count], `usage.${key}.${count}`, 0);
    }
    // The two spellings mean different things by prompt_tokens: the cache within it, or apart from it.
    const anthropicKey = ['cache_read_input_tokens', 'cache_creation_input_tokens'].find((key) => key in value);
    if (anthropicKey !== undefined && value.prompt_tokens_details !== undefined) {
      this.fail(
        'usage.prompt_tokens_details',
        `no "prompt_tokens_details" beside "${anthropicKey}": count the cache either within prompt_tokens ` +
          '(prompt_tokens_details.cached_tokens) or apart from it ' +
          '(cache_read_input_tokens, cache_creation_input_tokens)',
        value.prompt_tokens_details,
      );
    }
  }
}

/** Check one step (from a script or returned by a step function) and return it typed. */
export function validateStep(value: unknown, stepIndex: number, source: string): ScriptStep {
  return new StepValidator(source, stepIndex).step(value);
}

/**
 * Check a script given as data (parsed JSON, or an array built in code, whose function steps are checked
 * when they are called). `source` names the script in messages, e.g. its file.
 */
export function validateScript(value: unknown, source: string): Script {
  if (typeof value === 'function') return value as ScriptFunction;
  if (!Array.isArray(value)) {
    throw new ScriptValidationError(`${source}: expected a JSON array of steps, got ${describe(value)}.`);
  }
  value.forEach((step: unknown, stepIndex) => {
    if (typeof step !== 'function') validateStep(step, stepIndex, source);
  });
  return value as Script;
}

/** Read and check a script file (a JSON array of steps). */
export async function loadScriptFile(file: string): Promise<ScriptStep[]> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (error) {
    throw new ScriptValidationError(`Cannot read the script ${file}: ${(error as Error).message}`);
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new ScriptValidationError(`${file}: not valid JSON: ${(error as Error).message}`);
  }
  return validateScript(value, file) as ScriptStep[];
}
