import type { JsonObject, JsonValue, ResponseFormat } from '../shared/types.js';
import { schemaErrors, schemaProblem } from './argument-schema.js';

/**
 * Structured output (docs/tools.md#structured-output): a turn whose final answer must be JSON matching a schema. The
 * schema goes to the provider as its structured-output option; the answer is checked here, in the workflow, from what
 * history recorded, so replay reaches the same verdict; an answer that does not match is sent back to the model for a
 * bounded number of corrections, each one a model call counted in the turn's budget. Pure functions.
 */

/** A final answer that must be JSON matching `schema`. */
export interface OutputFormat {
  /** The JSON Schema the answer must match (the client writes a zod schema as JSON Schema). */
  schema: JsonObject;
  /**
   * The schema's name for the provider (`response_format.json_schema.name`): letters, digits, `_` and `-`, at most 64.
   * Default `answer`.
   * @pattern ^[a-zA-Z0-9_-]{1,64}$
   */
  name?: string;
  /** Ask the provider to keep to the schema strictly (it then demands `additionalProperties: false`); default false. */
  strict?: boolean;
  /**
   * How many times an answer that does not match may be sent back to the model to be corrected; default 2.
   * @asType integer
   * @minimum 0
   */
  maxCorrections?: number;
}

/** The default of {@link OutputFormat.maxCorrections}. */
export const DEFAULT_OUTPUT_CORRECTIONS = 2;
const DEFAULT_OUTPUT_NAME = 'answer';
const NAME_PATTERN = /^[a-zA-Z0-9_-]{1,64}$/;

export function responseFormat(format: OutputFormat): ResponseFormat {
  return { name: format.name ?? DEFAULT_OUTPUT_NAME, schema: format.schema, strict: format.strict ?? false };
}

export function correctionsAllowed(format: OutputFormat): number {
  const { maxCorrections } = format;
  return typeof maxCorrections === 'number' && Number.isInteger(maxCorrections) && maxCorrections >= 0
    ? maxCorrections
    : DEFAULT_OUTPUT_CORRECTIONS;
}

/** What is wrong with an output format a client sent, or `undefined` when it is usable. */
export function outputFormatProblem(format: unknown): string | undefined {
  if (typeof format !== 'object' || format === null || Array.isArray(format)) {
    return '"output" must be an object { schema, name?, strict?, maxCorrections? }.';
  }
  const { schema, name, strict, maxCorrections } = format as Partial<Record<keyof OutputFormat, unknown>>;
  if (typeof schema !== 'object' || schema === null || Array.isArray(schema)) {
    return '"output.schema" must be a JSON Schema object, e.g. {"type": "object", "properties": {...}}.';
  }
  const problem = schemaProblem(schema as JsonObject);
  if (problem !== undefined) return `"output.schema" is not a usable JSON Schema: ${problem}.`;
  if (name !== undefined && (typeof name !== 'string' || !NAME_PATTERN.test(name))) {
    return '"output.name" must be 1 to 64 letters, digits, "_" or "-".';
  }
  if (strict !== undefined && typeof strict !== 'boolean') return '"output.strict" must be true or false.';
  if (maxCorrections !== undefined && !(Number.isInteger(maxCorrections) && (maxCorrections as number) >= 0)) {
    return '"output.maxCorrections" must be a whole number, 0 or more.';
  }
  return undefined;
}

/** The model's answer read against the format: the parsed value, or what is wrong with it (for the model to fix). */
export type OutputReading = { ok: true; value: JsonValue } | { ok: false; problem: string };

export function readOutput(format: OutputFormat, answer: string | null): OutputReading {
  if (answer === null || answer.trim() === '') return { ok: false, problem: 'the answer is empty' };
  let value: JsonValue;
  try {
    value = JSON.parse(stripCodeFence(answer)) as JsonValue;
  } catch (error) {
    return { ok: false, problem: `the answer is not JSON (${error instanceof Error ? error.message : String(error)})` };
  }
  const errors = schemaErrors(format.schema, value, 'the output schema');
  return errors.length === 0 ? { ok: true, value } : { ok: false, problem: errors.join('; ') };
}

/** Models without a structured-output option often wrap JSON in a Markdown code fence. */
function stripCodeFence(text: string): string {
  const match = /^\s*```(?:json)?\s*\n([\s\S]*?)\n\s*```\s*$/.exec(text);
  return match ? match[1]! : text;
}

/** The message that sends a non-matching answer back to the model. */
export function correctionRequest(problem: string): string {
  return (
    `Your answer does not match the required JSON Schema: ${problem}. ` +
    'Answer again with only a JSON value that matches the schema, and nothing else.'
  );
}
