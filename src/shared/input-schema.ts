import type { JsonObject, JsonValue } from './types.js';

/**
 * Checks an answer's content against the schema an MCP server requested (elicitation, form mode). MCP restricts that
 * schema to a flat object of primitive fields (string, number, integer, boolean, and enums, single or multi-select),
 * so a small deterministic validator does, in workflow code. Returns what is wrong, one line per field; empty when
 * the content fits.
 */
export function inputContentProblems(schema: JsonObject | undefined, content: JsonObject): string[] {
  const properties = isObject(schema?.properties) ? schema.properties : {};
  const required = Array.isArray(schema?.required) ? schema.required.filter((key) => typeof key === 'string') : [];
  const problems: string[] = [];
  for (const key of required) {
    if (content[key] === undefined) problems.push(`"${key}" is required`);
  }
  for (const [key, value] of Object.entries(content)) {
    const field = properties[key];
    if (!isObject(field)) {
      const known = Object.keys(properties);
      problems.push(`"${key}" is not a requested field (requested: ${known.join(', ') || 'none'})`);
      continue;
    }
    const problem = fieldProblem(field, value);
    if (problem !== undefined) problems.push(`"${key}" ${problem}`);
  }
  return problems;
}

/**
 * `content` with the requested schema's `default` for every field it leaves out. The chat page shows the defaults
 * filled in, so a form accepted as shown means them; applied here, where every surface's answer arrives (the chat page,
 * `chat`, the client, the bridge), the same empty form gets the same answer everywhere.
 */
export function withSchemaDefaults(schema: JsonObject | undefined, content: JsonObject): JsonObject {
  const properties = isObject(schema?.properties) ? schema.properties : {};
  const filled: JsonObject = { ...content };
  for (const [key, field] of Object.entries(properties)) {
    if (filled[key] === undefined && isObject(field) && field.default !== undefined) filled[key] = field.default;
  }
  return filled;
}

function fieldProblem(field: JsonObject, value: JsonValue): string | undefined {
  switch (field.type) {
    case 'string':
      return typeof value === 'string' ? stringProblem(field, value) : `must be a string, got ${kind(value)}`;
    case 'number':
    case 'integer':
      return typeof value === 'number' && (field.type === 'number' || Number.isInteger(value))
        ? rangeProblem(field, value, 'minimum', 'maximum', '')
        : `must be ${field.type === 'integer' ? 'an integer' : 'a number'}, got ${kind(value)}`;
    case 'boolean':
      return typeof value === 'boolean' ? undefined : `must be true or false, got ${kind(value)}`;
    case 'array':
      return Array.isArray(value) && value.every((item) => typeof item === 'string')
        ? (rangeProblem(field, value.length, 'minItems', 'maxItems', ' choices') ??
            value.map((item) => choiceProblem(isObject(field.items) ? field.items : {}, item)).find(Boolean))
        : `must be a list of strings, got ${kind(value)}`;
    default:
      return `has a type this client cannot check (${JSON.stringify(field.type)})`;
  }
}

function stringProblem(field: JsonObject, value: string): string | undefined {
  const length = rangeProblem(field, value.length, 'minLength', 'maxLength', ' characters');
  if (length !== undefined) return length;
  const name = typeof field.format === 'string' ? field.format : undefined;
  const format = name === undefined ? undefined : FORMATS[name];
  if (format !== undefined && !format.test(value)) return `must be a valid ${name}`;
  return choiceProblem(field, value);
}

/** `enum`, or `oneOf`/`anyOf` of `{ const }` (titled choices): the value must be one of them. */
function choiceProblem(field: JsonObject, value: string): string | undefined {
  const options = [field.oneOf, field.anyOf].find(Array.isArray);
  const choices = Array.isArray(field.enum)
    ? field.enum
    : options?.map((option) => (isObject(option) ? option.const : undefined));
  if (choices === undefined || choices.includes(value)) return undefined;
  return `must be one of ${choices.map((choice) => JSON.stringify(choice)).join(', ')}, got ${JSON.stringify(value)}`;
}

function rangeProblem(field: JsonObject, n: number, low: string, high: string, unit: string): string | undefined {
  const min = field[low];
  const max = field[high];
  if (typeof min === 'number' && n < min) return `must be at least ${min}${unit}, got ${n}`;
  if (typeof max === 'number' && n > max) return `must be at most ${max}${unit}, got ${n}`;
  return undefined;
}

const FORMATS: Record<string, RegExp> = {
  email: /^[^\s@]+@[^\s@]+$/,
  uri: /^[a-zA-Z][a-zA-Z0-9+.-]*:\S*$/,
  date: /^\d{4}-\d{2}-\d{2}$/,
  'date-time': /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:\d{2})$/,
};

function isObject(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function kind(value: JsonValue): string {
  return value === null ? 'null' : Array.isArray(value) ? 'a list' : typeof value;
}
