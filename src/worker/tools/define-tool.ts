import { z } from 'zod';
import { ConfigError } from '../../config/index.js';
import { DurableAgentError } from '../../shared/errors.js';
import type { JsonObject, JsonValue, ToolAnnotations } from '../../shared/types.js';
import { MAX_TOOL_NAME_LENGTH, NAMESPACE_SEPARATOR, TOOL_NAME_PATTERN } from '../mcp/names.js';

/**
 * Tools written in TypeScript that run in the worker beside the MCP servers' tools (docs/tools.md). Each call is its
 * own `callTool` activity, under the rules MCP tools follow: retries, heartbeats, cancellation, approvals, the budget
 * and "outcome unknown" for a call that may have run and is not safe to repeat (its annotations say).
 */

/** What a tool's `execute` gets besides its arguments. */
export interface ToolCallContext {
  /** The conversation the call belongs to (`conversation-<conversationId>` is its workflow id). */
  conversationId: string;
  workflowId: string;
  /** The model's id for this tool call: the same on every attempt, so a service can deduplicate by it. */
  callId: string;
  /** The activity attempt, from 1. */
  attempt: number;
  /** Aborted when the call is cancelled (an interrupt, the turn's time limit) or its `timeoutMs` has passed. */
  signal: AbortSignal;
  /**
   * Tells Temporal that the call is alive, with an optional progress report (shown in the Web UI). The activity
   * heartbeats on its own while `execute` runs; call this for progress.
   */
  heartbeat(progress?: { progress: number; total?: number; message?: string }): void;
}

/** What `execute` may return: text as it is, anything else as its JSON. */
export type ToolOutput = string | JsonValue | undefined | void;

/** A tool defined with {@link defineTool}: give it to the worker in its `tools` option. */
export interface FunctionTool {
  readonly name: string;
  readonly description: string;
  /** The JSON Schema of the arguments object, as the model gets it. */
  readonly inputSchema: JsonObject;
  readonly annotations: ToolAnnotations;
  /** How long a call may run, in milliseconds (the abort signal fires then); `undefined`: the registry's default. */
  readonly timeoutMs: number | undefined;
  /** Checks (and with zod, transforms) the arguments the workflow has already checked against `inputSchema`. */
  readonly parse: (value: JsonObject) => { ok: true; value: unknown } | { ok: false; error: string };
  readonly execute: (args: unknown, context: ToolCallContext) => ToolOutput | Promise<ToolOutput>;
}

interface ToolDefinitionBase {
  /** The name the model calls it by: letters, digits, `_` and `-`, at most 64, without `__` (MCP tools' separator). */
  name: string;
  /** What the tool does, for the model. */
  description: string;
  /** MCP tool annotations: `readOnlyHint` or `idempotentHint` make a call safe to retry after it may have run. */
  annotations?: ToolAnnotations;
  /** How long one call may run, in milliseconds. Default: the registry's `timeoutMs` (60,000). */
  timeoutMs?: number;
}

/** A tool whose parameters are a zod object schema: `execute` gets the parsed (typed) arguments. */
export interface ZodToolDefinition<Schema extends z.ZodType> extends ToolDefinitionBase {
  parameters: Schema;
  execute(args: z.output<Schema>, context: ToolCallContext): ToolOutput | Promise<ToolOutput>;
}

/** A tool whose parameters are a JSON Schema object. */
export interface JsonSchemaToolDefinition extends ToolDefinitionBase {
  parameters: JsonObject;
  execute(args: JsonObject, context: ToolCallContext): ToolOutput | Promise<ToolOutput>;
}

/** A tool's definition is not usable; the message says which tool, what is wrong and how to fix it. */
export class ToolDefinitionError extends ConfigError {}

/**
 * Thrown by `execute` for a failure the model should read and may correct (a record that does not exist, a value out
 * of range): the call ends with an `error` result carrying the message, and is not retried. Anything else thrown is
 * a failure of the infrastructure: retried when the tool is read-only or idempotent, else "outcome unknown".
 */
export class ToolError extends DurableAgentError {}

/** A TypeScript tool for the model, with zod or JSON Schema parameters. */
export function defineTool<Schema extends z.ZodType>(definition: ZodToolDefinition<Schema>): FunctionTool;
export function defineTool(definition: JsonSchemaToolDefinition): FunctionTool;
export function defineTool(definition: ZodToolDefinition<z.ZodType> | JsonSchemaToolDefinition): FunctionTool {
  const name = checkName(definition.name);
  if (typeof definition.description !== 'string') {
    throw new ToolDefinitionError(`Tool "${name}": "description" must be a string saying what the tool does.`);
  }
  if (typeof definition.execute !== 'function') {
    throw new ToolDefinitionError(`Tool "${name}": "execute" must be a function (args, context) => result.`);
  }
  const timeoutMs = definition.timeoutMs;
  if (timeoutMs !== undefined && !(Number.isInteger(timeoutMs) && timeoutMs >= 1)) {
    throw new ToolDefinitionError(`Tool "${name}": "timeoutMs" must be a whole number of milliseconds, at least 1.`);
  }
  const { parameters } = definition;
  const zodSchema = isZodSchema(parameters) ? parameters : undefined;
  const inputSchema = zodSchema ? zodToInputSchema(name, zodSchema) : checkJsonSchema(name, parameters);
  return {
    name,
    description: definition.description,
    inputSchema,
    annotations: { ...definition.annotations },
    timeoutMs,
    parse: zodSchema
      ? (value) => {
          const parsed = zodSchema.safeParse(value);
          return parsed.success
            ? { ok: true, value: parsed.data }
            : { ok: false, error: z.prettifyError(parsed.error) };
        }
      : (value) => ({ ok: true, value }),
    execute: (args, context) => (definition.execute as FunctionTool['execute'])(args, context),
  };
}

function checkName(name: unknown): string {
  if (typeof name !== 'string' || !TOOL_NAME_PATTERN.test(name)) {
    throw new ToolDefinitionError(
      `Tool name ${JSON.stringify(name)} is not one the model APIs accept: use 1 to ${MAX_TOOL_NAME_LENGTH} letters, ` +
        'digits, "_" or "-".',
    );
  }
  if (name.includes(NAMESPACE_SEPARATOR)) {
    throw new ToolDefinitionError(
      `Tool name "${name}" contains "${NAMESPACE_SEPARATOR}", which separates the server from the tool in MCP tools' ` +
        `names (<server>${NAMESPACE_SEPARATOR}<tool>): rename it (e.g. "${name.replaceAll(NAMESPACE_SEPARATOR, '_')}") so ` +
        'it can never be taken for an MCP tool.',
    );
  }
  return name;
}

function isZodSchema(value: unknown): value is z.ZodType {
  return typeof value === 'object' && value !== null && '_zod' in value;
}

function zodToInputSchema(name: string, schema: z.ZodType): JsonObject {
  let converted: JsonObject;
  try {
    converted = z.toJSONSchema(schema, { io: 'input' }) as JsonObject;
  } catch (error) {
    throw new ToolDefinitionError(
      `Tool "${name}": its zod parameters cannot be written as JSON Schema (${error instanceof Error ? error.message : String(error)}); ` +
        'use types JSON Schema can express (no transforms of the input, no functions, no dates as objects).',
    );
  }
  return checkJsonSchema(name, withoutDraft(converted));
}

/** The model APIs read the keywords; the draft marker only makes some providers refuse the schema. */
function withoutDraft(schema: JsonObject): JsonObject {
  const { $schema: _draft, ...rest } = schema;
  return rest;
}

function checkJsonSchema(name: string, schema: unknown): JsonObject {
  if (
    typeof schema !== 'object' ||
    schema === null ||
    Array.isArray(schema) ||
    (schema as JsonObject).type !== 'object'
  ) {
    throw new ToolDefinitionError(
      `Tool "${name}": "parameters" must be a zod object schema (z.object({...})) or a JSON Schema with ` +
        `"type": "object", since the model passes arguments as one object; got ${JSON.stringify(schema)?.slice(0, 80)}.`,
    );
  }
  // Round-trip through JSON so only plain data reaches the tool list the workflow records.
  return JSON.parse(JSON.stringify(schema)) as JsonObject;
}
