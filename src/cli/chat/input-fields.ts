import type { InputAnswer, InputRequest } from '../../client/index.js';
import type { JsonObject, JsonValue } from '../../shared/types.js';

/** One field of a form-mode question (MCP elicitation asks for a flat object of primitive fields). */
export interface InputField {
  name: string;
  /** `string`, `number`, `integer`, `boolean`, or `any` when the schema names none. */
  type: string;
  required: boolean;
  title?: string;
  /** The allowed values, when the schema lists them. */
  choices?: JsonValue[];
}

/** The fields a form-mode question asks for, in the schema's order. */
export function inputFields(request: InputRequest): InputField[] {
  const schema = request.requestedSchema ?? {};
  const properties = (schema.properties ?? {}) as Record<string, JsonObject>;
  const required = Array.isArray(schema.required) ? schema.required : [];
  return Object.entries(properties).map(([name, field]) => ({
    name,
    type: typeof field.type === 'string' ? field.type : 'any',
    required: required.includes(name),
    ...(typeof field.title === 'string' ? { title: field.title } : {}),
    ...(Array.isArray(field.enum) ? { choices: field.enum } : {}),
  }));
}

/** The prompt for one field: its name, type, whether it is required, its title and choices. */
export function fieldPrompt(field: InputField): string {
  const need = field.required ? ', required' : '';
  const title = field.title !== undefined ? ` ${field.title}` : '';
  const choices = field.choices ? ` one of ${field.choices.map((v) => JSON.stringify(v)).join(', ')}` : '';
  return `  ${field.name} (${field.type}${need})${title}${choices}: `;
}

/**
 * A typed line as the field's value: `{ value }`, `{ skip }` for an empty optional field, or `{ error }` saying what is
 * expected (the person is asked again). The server's other constraints are checked by the conversation's validator.
 */
export function parseField(field: InputField, line: string): { value: JsonValue } | { skip: true } | { error: string } {
  const text = line.trim();
  if (text === '') return field.required ? { error: `${field.name} is required.` } : { skip: true };
  const value = typedValue(field.type, text);
  if (value === undefined) return { error: `${field.name}: expected ${article(field.type)}, got ${text}.` };
  if (field.choices && !field.choices.some((choice) => choice === value)) {
    return { error: `${field.name}: expected one of ${field.choices.map((v) => JSON.stringify(v)).join(', ')}.` };
  }
  return { value };
}

function typedValue(type: string, text: string): JsonValue | undefined {
  switch (type) {
    case 'integer':
      return /^-?\d+$/.test(text) ? Number(text) : undefined;
    case 'number': {
      const number = Number(text);
      return Number.isFinite(number) ? number : undefined;
    }
    case 'boolean': {
      const lower = text.toLowerCase();
      if (['y', 'yes', 'true'].includes(lower)) return true;
      if (['n', 'no', 'false'].includes(lower)) return false;
      return undefined;
    }
    default:
      return text;
  }
}

function article(type: string): string {
  if (type === 'boolean') return 'y or n';
  return type === 'integer' ? 'an integer' : `a ${type}`;
}

/** A line that gives the whole answer as a JSON object, or undefined when the line is not one. */
export function jsonAnswer(line: string): JsonObject | undefined {
  const text = line.trim();
  if (!text.startsWith('{')) return undefined;
  try {
    const value: unknown = JSON.parse(text);
    return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as JsonObject) : undefined;
  } catch {
    return undefined;
  }
}

/** What the chat shows of a question: who asks, the server's message, and the page to open (url mode). */
export function describeInputRequest(request: InputRequest): string[] {
  const lines = [`  ? ${request.tool} asks: ${request.message}`];
  if (request.mode === 'url') lines.push(`    open: ${request.url}`);
  else for (const field of inputFields(request)) lines.push(`  ${fieldPrompt(field).slice(0, -2)}`);
  return lines;
}

/** The line for an answer given (here or elsewhere). */
export function describeInputAnswer(answer: InputAnswer): string {
  const who = answer.by !== undefined ? ` by ${answer.by}` : '';
  const mark = answer.action === 'accept' ? '✓' : '✗';
  const content = answer.content !== undefined ? ` ${JSON.stringify(answer.content)}` : '';
  return `  ${mark} ${answer.requestId} answered${who}: ${answer.action}${content}`;
}
