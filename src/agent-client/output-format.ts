import { z } from 'zod';
import type { JsonObject } from '../shared/types.js';
import type { OutputFormat } from '../workflows/structured-output.js';

/**
 * Structured output as a client asks for it: the workflow's {@link OutputFormat}, whose `schema` may also be a zod
 * schema, written here as the JSON Schema the conversation records (it holds plain JSON only).
 */
export type OutputRequest = Omit<OutputFormat, 'schema'> & { schema: JsonObject | z.ZodType };

/** The format as the conversation takes it: a zod schema written as JSON Schema (the shape of what it outputs). */
export function toOutputFormat(request: OutputRequest): OutputFormat {
  const { schema } = request;
  if (typeof schema !== 'object' || schema === null || !('_zod' in schema)) return request as OutputFormat;
  const { $schema: _draft, ...jsonSchema } = z.toJSONSchema(schema as z.ZodType, { io: 'output' }) as JsonObject;
  return { ...request, schema: jsonSchema };
}
