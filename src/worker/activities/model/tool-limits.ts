import { TOOL_NAME_PATTERN } from '../../mcp/names.js';
import { toolsDigest } from '../../../shared/digest.js';
import type { JsonObject, JsonValue, ToolDefinition } from '../../../shared/types.js';

/**
 * What the Chat Completions API refuses in a `tools` array, fixed (or the tool left out) before the request is sent,
 * so one MCP server's over-long description or sloppy schema cannot fail every turn with a 400. Pure functions: the
 * model activity offers their result and logs what they changed. Only the offered copy changes: the tool list the
 * workflow records keeps each server's own definition, and each server still validates the calls it gets.
 */

export interface ToolLimits {
  /** Most tools one request may offer; the rest are left out, in list order. */
  maxTools: number;
  /** What a function name must match. */
  namePattern: RegExp;
  /** Most characters of a function description. */
  maxDescriptionLength: number;
}

/** The limits of OpenAI's Chat Completions API (non-strict function calling). */
export const CHAT_COMPLETIONS_TOOL_LIMITS: ToolLimits = {
  maxTools: 128,
  namePattern: TOOL_NAME_PATTERN,
  maxDescriptionLength: 1024,
};

/**
 * The limits of Anthropic's Messages API: the same name pattern; it documents no limit on the number of tools or the
 * length of a description, so neither is cut (the request's size is what bounds them).
 */
export const ANTHROPIC_TOOL_LIMITS: ToolLimits = {
  maxTools: Number.POSITIVE_INFINITY,
  namePattern: TOOL_NAME_PATTERN,
  maxDescriptionLength: Number.POSITIVE_INFINITY,
};

/** Ends a description that was cut to the limit, so the model (and a reader of the request) can tell. */
export const DESCRIPTION_TRUNCATION_MARKER = ' [description truncated]';

/** One tool that was changed or left out, for the log. */
export interface ToolAdjustment {
  /** The model-facing name, `server__tool`. */
  name: string;
  server: string;
  originalName: string;
  /** What was changed, or why the tool was left out; one short phrase each. */
  changes: string[];
  /** True when the tool is not offered at all. */
  refused: boolean;
}

export interface ToolOffer {
  /** The tools as offered, in order: the `N` of a `tools[N]` in a provider's error indexes this list. */
  tools: ToolDefinition[];
  /** Every tool that was changed or left out; empty when the list was within the limits. */
  adjustments: ToolAdjustment[];
}

/** Fit each tool to `limits`; a tool that already fits is offered as it is (the same object). */
export function fitToolsToLimits(
  tools: readonly ToolDefinition[],
  limits: ToolLimits = CHAT_COMPLETIONS_TOOL_LIMITS,
): ToolOffer {
  const offered: ToolDefinition[] = [];
  const adjustments: ToolAdjustment[] = [];
  const adjustment = (tool: ToolDefinition, changes: string[], refused: boolean) =>
    adjustments.push({ name: tool.name, server: tool.server, originalName: tool.originalName, changes, refused });
  for (const tool of tools) {
    // Renaming would not help: the model would call a name the workflow does not know. names.ts already guarantees
    // the pattern for every tool of the MCP pool, so only a definition from elsewhere gets here.
    if (!limits.namePattern.test(tool.name)) {
      adjustment(tool, [`the name does not match ${String(limits.namePattern)}: left out`], true);
      continue;
    }
    if (offered.length >= limits.maxTools) {
      adjustment(tool, [`the API takes at most ${limits.maxTools} tools in one request: left out`], true);
      continue;
    }
    const description = fitDescription(tool.description, limits.maxDescriptionLength);
    const parameters = fitParameters(tool.inputSchema);
    const changes = [
      ...(description !== tool.description
        ? [`description cut from ${tool.description.length} to ${description.length} characters`]
        : []),
      ...parameters.changes,
    ];
    if (changes.length === 0) {
      offered.push(tool);
      continue;
    }
    offered.push({ ...tool, description, inputSchema: parameters.schema });
    adjustment(tool, changes, false);
  }
  return { tools: offered, adjustments };
}

/**
 * Cut `text` to at most `maxLength` characters (UTF-16 code units, never fewer code points than the API counts),
 * ending with {@link DESCRIPTION_TRUNCATION_MARKER}. The cut falls on a word boundary when one is near.
 */
export function fitDescription(text: string, maxLength: number): string {
  if (text.length <= maxLength) return text;
  let end = Math.max(0, maxLength - DESCRIPTION_TRUNCATION_MARKER.length);
  const space = text.slice(0, end + 1).search(/\s\S*$/);
  if (space > end - 80 && space > 0) end = space;
  // Never split a surrogate pair.
  if (end > 0 && /[\uD800-\uDBFF]/.test(text.charAt(end - 1))) end--;
  return text.slice(0, end).trimEnd() + DESCRIPTION_TRUNCATION_MARKER;
}

/** JSON Schema's type names; anything else in `type` fails the API's check of the schema. */
const TYPE_NAMES = new Set(['object', 'array', 'string', 'number', 'integer', 'boolean', 'null']);
/** Keywords whose value is one schema. */
const SCHEMA_KEYWORDS = [
  'items',
  'additionalProperties',
  'additionalItems',
  'contains',
  'propertyNames',
  'not',
  'if',
  'then',
  'else',
  'unevaluatedItems',
  'unevaluatedProperties',
] as const;
/** Keywords whose value maps names to schemas. */
const SCHEMA_MAP_KEYWORDS = ['properties', 'patternProperties', '$defs', 'definitions', 'dependentSchemas'] as const;
/** Keywords whose value is a list of schemas. */
const SCHEMA_LIST_KEYWORDS = ['anyOf', 'oneOf', 'allOf', 'prefixItems'] as const;
/** What the API refuses at the top level of `parameters`, besides a type other than `object`. */
const TOP_LEVEL_FORBIDDEN = ['anyOf', 'oneOf', 'allOf', 'enum', 'not'] as const;

/**
 * Make `schema` a `parameters` object the API accepts: a JSON Schema object with `type: 'object'` and `properties`
 * at the top level and no top-level `anyOf`/`oneOf`/`allOf`/`enum`/`not`; every array schema with `items`, at any
 * depth; every subschema an object or a boolean; `type` only JSON Schema's type names; `required` a list of names.
 * Returns the same object when nothing had to change.
 */
export function fitParameters(schema: unknown): { schema: JsonObject; changes: string[] } {
  const changes: string[] = [];
  let root: JsonObject;
  if (!isPlainObject(schema)) {
    changes.push(`parameters were ${kindOf(schema)}, not a JSON Schema object: offered as an object of any properties`);
    root = { type: 'object', properties: {} };
  } else {
    root = fitTopLevel(schema, changes);
  }
  root = fitSchema(root, [], changes) as JsonObject;
  if (!('properties' in root)) {
    root = { ...root, properties: {} };
    changes.push('the top level had no properties: added an empty properties');
  }
  return { schema: changes.length === 0 && isPlainObject(schema) ? schema : root, changes };
}

function fitTopLevel(schema: JsonObject, changes: string[]): JsonObject {
  let root = schema;
  const type = root.type;
  if (type === undefined) {
    root = { ...root, type: 'object' };
    changes.push('the top level had no type: set to "object"');
  } else if (Array.isArray(type) && type.includes('object')) {
    root = { ...root, type: 'object' };
    changes.push(`the top-level type ${JSON.stringify(type)} became "object"`);
  } else if (type !== 'object') {
    changes.push(`the top-level type ${JSON.stringify(type)} is not "object": offered as an object of any properties`);
    // Tool arguments are always an object (MCP sends them as one), so nothing of a non-object schema applies.
    return {
      type: 'object',
      properties: {},
      ...(typeof root.description === 'string' ? { description: root.description } : {}),
    };
  }
  for (const keyword of TOP_LEVEL_FORBIDDEN) {
    if (!(keyword in root)) continue;
    const { [keyword]: value, ...rest } = root;
    root = rest;
    if ((keyword === 'allOf' || keyword === 'anyOf' || keyword === 'oneOf') && Array.isArray(value)) {
      root = mergeBranches(root, value, keyword === 'allOf');
      changes.push(
        keyword === 'allOf'
          ? 'the top-level allOf was merged into one object'
          : `the top-level ${keyword} was merged into one object of all its properties (the alternatives are not shown)`,
      );
    } else {
      changes.push(`the top-level ${keyword} was removed`);
    }
  }
  return root;
}

/**
 * Merge the properties of `branches` into `root`. `all` (allOf): every branch's `required` applies; otherwise
 * (anyOf, oneOf) only what every branch requires. A property `root` declares itself keeps its own schema.
 */
function mergeBranches(root: JsonObject, branches: JsonValue[], all: boolean): JsonObject {
  const objects = branches.filter(isPlainObject);
  const properties: JsonObject = {};
  for (const branch of objects) {
    if (isPlainObject(branch.properties)) {
      for (const [name, property] of Object.entries(branch.properties)) properties[name] ??= property;
    }
  }
  const requiredBy = objects.map((branch) => new Set(stringsOf(branch.required)));
  const branchRequired = [...new Set(requiredBy.flatMap((names) => [...names]))].filter(
    (name) => all || requiredBy.every((names) => names.has(name)),
  );
  const own = isPlainObject(root.properties) ? root.properties : {};
  const required = [...new Set([...stringsOf(root.required), ...(objects.length > 0 ? branchRequired : [])])];
  return {
    ...root,
    properties: { ...properties, ...own },
    ...(required.length > 0 ? { required } : {}),
  };
}

/** Fix one subschema and everything below it; copy on write, so an unchanged schema is the same object. */
function fitSchema(node: unknown, path: readonly string[], changes: string[]): JsonValue {
  if (typeof node === 'boolean') return node;
  if (!isPlainObject(node)) {
    changes.push(`${where(path)} was ${kindOf(node)}, not a schema: replaced by {} (any value)`);
    return {};
  }
  let result = node;
  const set = (key: string, value: JsonValue | undefined) => {
    if (result === node) result = { ...node };
    if (value === undefined) delete result[key];
    else result[key] = value;
  };

  const types = fitType(node.type, path, changes, (value) => set('type', value));
  if (Array.isArray(node.items)) {
    // The tuple form (draft 7 and earlier): keep what the elements may be, not their positions.
    const members = node.items;
    set('items', members.length === 0 ? {} : members.length === 1 ? members[0]! : { anyOf: members });
    changes.push(`the tuple items at ${where(path)} became one items schema`);
  } else if (types.includes('array') && !('items' in node)) {
    set('items', {});
    changes.push(`the array at ${where(path)} had no items: added items {} (any value)`);
  }
  if ('required' in node) {
    const names = stringsOf(node.required);
    if (!Array.isArray(node.required) || names.length !== node.required.length) {
      set('required', names.length > 0 ? names : undefined);
      changes.push(`required at ${where(path)} was not a list of names: kept only the names`);
    }
  }

  for (const keyword of SCHEMA_KEYWORDS) {
    if (!(keyword in result)) continue;
    const fitted = fitSchema(result[keyword], [...path, keyword], changes);
    if (fitted !== result[keyword]) set(keyword, fitted);
  }
  for (const keyword of SCHEMA_MAP_KEYWORDS) {
    if (!(keyword in result)) continue;
    const map = result[keyword];
    if (!isPlainObject(map)) {
      set(keyword, {});
      changes.push(`${where([...path, keyword])} was ${kindOf(map)}, not an object of schemas: replaced by {}`);
      continue;
    }
    let fittedMap = map;
    for (const [name, member] of Object.entries(map)) {
      const fitted = fitSchema(member, [...path, keyword, name], changes);
      if (fitted === member) continue;
      if (fittedMap === map) fittedMap = { ...map };
      fittedMap[name] = fitted;
    }
    if (fittedMap !== map) set(keyword, fittedMap);
  }
  for (const keyword of SCHEMA_LIST_KEYWORDS) {
    if (!(keyword in result)) continue;
    const list = result[keyword];
    if (!Array.isArray(list)) {
      set(keyword, undefined);
      changes.push(`${where([...path, keyword])} was ${kindOf(list)}, not a list of schemas: removed`);
      continue;
    }
    const fitted = list.map((member, index) => fitSchema(member, [...path, keyword, String(index)], changes));
    if (fitted.some((member, index) => member !== list[index])) set(keyword, fitted);
  }
  return result;
}

/** The type names `type` allows (none: any type); fixes `type` through `set` when it holds anything else. */
function fitType(
  type: JsonValue | undefined,
  path: readonly string[],
  changes: string[],
  set: (value: JsonValue | undefined) => void,
): string[] {
  if (type === undefined) return [];
  if (typeof type === 'string' && TYPE_NAMES.has(type)) return [type];
  const names = (Array.isArray(type) ? type : [type]).filter(
    (name): name is string => typeof name === 'string' && TYPE_NAMES.has(name),
  );
  const unique = [...new Set(names)];
  if (Array.isArray(type) && unique.length === type.length) return unique;
  set(unique.length === 0 ? undefined : unique.length === 1 ? unique[0] : unique);
  changes.push(
    `the type ${JSON.stringify(type)} at ${where(path)} ` +
      (unique.length === 0 ? 'names no JSON Schema type: removed' : `became ${JSON.stringify(unique)}`),
  );
  return unique;
}

function isPlainObject(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function stringsOf(value: JsonValue | undefined): string[] {
  return Array.isArray(value) ? value.filter((item): item is string => typeof item === 'string') : [];
}

function kindOf(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'a list';
  return typeof value === 'string' ? `the string ${JSON.stringify(value.slice(0, 40))}` : `a ${typeof value}`;
}

/** A schema location for the log, e.g. `properties.paths.items`. */
function where(path: readonly string[]): string {
  return path.length === 0 ? 'the top level' : path.join('.');
}

/** Most changes of one tool the log line lists; the rest are counted. */
const MAX_CHANGES_LOGGED = 8;

/** The log line for `adjustments`, out of `total` tools listed. */
export function describeAdjustments(adjustments: readonly ToolAdjustment[], total: number): string {
  const refused = adjustments.filter((entry) => entry.refused).length;
  const changed = adjustments.length - refused;
  const tools = adjustments.map((entry) => {
    const shown = entry.changes.slice(0, MAX_CHANGES_LOGGED);
    const more = entry.changes.length - shown.length;
    return (
      `${entry.name} (tool "${entry.originalName}" of MCP server "${entry.server}"): ` +
      shown.join('; ') +
      (more > 0 ? `; and ${more} more` : '')
    );
  });
  return (
    `Fitted the tool list to the model API's limits: ${changed} of ${total} tools changed, ${refused} left out ` +
    `(logged once per tool list). ${tools.join('. ')}.`
  );
}

/** The one method of the worker's logger that {@link ToolOffers} uses. */
export interface WarningLogger {
  warn(message: string, meta?: Record<string, unknown>): void;
}

/**
 * The model activity's memory of fitted tool lists: each list object is fitted once (the rounds of a turn share
 * one), and each distinct list that needed changes is logged once per worker (by digest), not once per turn.
 */
export class ToolOffers {
  private readonly fitted = new WeakMap<readonly ToolDefinition[], ToolDefinition[]>();
  /** Digests of the lists already logged, oldest first. */
  private readonly reported = new Set<string>();

  constructor(
    private readonly limits: ToolLimits = CHAT_COMPLETIONS_TOOL_LIMITS,
    /** Digests remembered; the oldest is forgotten first (and its list logged again if it comes back). */
    private readonly maxReported = 1_000,
  ) {}

  /** The tools to offer, fitted to the limits; logs the changes the first time this worker sees the list. */
  offer(tools: readonly ToolDefinition[], log: WarningLogger): ToolDefinition[] {
    const known = this.fitted.get(tools);
    if (known !== undefined) return known;
    const { tools: offered, adjustments } = fitToolsToLimits(tools, this.limits);
    this.fitted.set(tools, offered);
    if (adjustments.length > 0) {
      const digest = toolsDigest(tools) ?? '';
      if (!this.reported.has(digest)) {
        this.reported.add(digest);
        if (this.reported.size > this.maxReported) this.reported.delete(this.reported.values().next().value!);
        log.warn(describeAdjustments(adjustments, tools.length), {
          toolsDigest: digest,
          changedTools: adjustments.filter((entry) => !entry.refused).map((entry) => entry.name),
          refusedTools: adjustments.filter((entry) => entry.refused).map((entry) => entry.name),
        });
      }
    }
    return offered;
  }
}
