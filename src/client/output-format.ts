import type { z } from 'zod';
import type { JsonObject } from '../shared/types.js';
import type { OutputFormat } from '../workflows/structured-output.js';

/**
 * Structured output as a client asks for it: the workflow's {@link OutputFormat}, whose `schema` may also be a zod
 * schema, written here as the JSON Schema the conversation records (it holds plain JSON only).
 */
export type OutputRequest = Omit<OutputFormat, 'schema'> & { schema: JsonObject | z.ZodType };

/**
 * The format as the conversation takes it: a zod schema written as JSON Schema (the shape of what it outputs). zod is
 * loaded only for a zod schema (the caller has loaded it already): every client process, each CLI command among them,
 * would otherwise spend a tenth of its start-up evaluating zod's modules.
 */
export async function toOutputFormat(request: OutputRequest): Promise<OutputFormat> {
  const { schema } = request;
  if (typeof schema !== 'object' || schema === null || !('_zod' in schema)) return request as OutputFormat;
  const { toJSONSchema } = await import('zod');
  const { $schema: _draft, ...jsonSchema } = toJSONSchema(schema as z.ZodType, { io: 'output' }) as JsonObject;
  return { ...request, schema: jsonSchema };
}
