import type { JsonObject } from '../../shared/types.js';
import type { ModelApi } from './model-api.js';
import { CHARS_PER_TOKEN as CHARACTERS_PER_TOKEN } from '../../shared/context.js';

/**
 * The scripted model's provider-native compaction (docs/scripted-model.md#provider-native-compaction): the Responses
 * API's `context_management` (a `compaction` output item) and the Anthropic beta API's context editing
 * (`context_management.edits`, a `compaction` block and `applied_edits`), checked as the real APIs check them.
 */

/** What the answer to a request with context management carries besides the script's step. */
export interface ManagedContext {
  /** The summary of a compaction the answer starts with (an item or a block); absent when none was due. */
  compaction?: string;
  /** Anthropic's `context_management.applied_edits`. */
  appliedEdits: JsonObject[];
}

/** The result of reading a request's context management: a refusal's message, or what to answer with. */
export type ContextManagementResult = { problem: string } | { managed: ManagedContext } | undefined;

/** The beta headers the Anthropic edits need, by edit type. */
const EDIT_BETAS: Record<string, string> = {
  clear_tool_uses_20250919: 'context-management-2025-06-27',
  clear_thinking_20251015: 'context-management-2025-06-27',
  compact_20260112: 'compact-2026-01-12',
};
/** The least `compact_20260112` trigger the API takes, and its defaults. */
const MIN_COMPACT_TRIGGER = 50_000;
const DEFAULT_COMPACT_TRIGGER = 150_000;
const DEFAULT_CLEAR_TRIGGER = 100_000;
const DEFAULT_KEEP_TOOL_USES = 3;

/** The prefix of the scripted compaction item's "encrypted" content: the summary follows, base64url-encoded. */
export const SCRIPTED_COMPACTION_PREFIX = 'enc_cmp_';

/** The summary a scripted compaction item stands for (its content is the summary, encoded), or undefined. */
export function scriptedCompactionSummary(encryptedContent: string): string | undefined {
  if (!encryptedContent.startsWith(SCRIPTED_COMPACTION_PREFIX)) return undefined;
  return Buffer.from(encryptedContent.slice(SCRIPTED_COMPACTION_PREFIX.length), 'base64url').toString('utf8');
}

export function scriptedCompactionContent(summary: string): string {
  return SCRIPTED_COMPACTION_PREFIX + Buffer.from(summary, 'utf8').toString('base64url');
}

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);
const isCount = (value: unknown): value is number => typeof value === 'number' && Number.isInteger(value) && value >= 0;

/** The request's context management, checked; `undefined` when it has none. */
export function manageContext(
  api: ModelApi,
  body: Record<string, unknown>,
  headers: Record<string, string>,
): ContextManagementResult {
  if (body.context_management === undefined || body.context_management === null) return undefined;
  if (api === 'responses') return responsesCompaction(body);
  if (api === 'messages') return anthropicEdits(body, headers);
  return { problem: 'Unrecognized request argument supplied: context_management' };
}

function responsesCompaction(body: Record<string, unknown>): ContextManagementResult {
  const entries = body.context_management;
  if (!Array.isArray(entries)) return { problem: "Invalid type for 'context_management': expected an array." };
  let threshold: number | undefined;
  for (const [index, entry] of entries.entries()) {
    const at = `context_management[${index}]`;
    if (!isObject(entry)) return { problem: `Invalid type for '${at}': expected an object.` };
    const unknown = Object.keys(entry).find((key) => key !== 'type' && key !== 'compact_threshold');
    if (unknown !== undefined) return { problem: `Unknown parameter: '${at}.${unknown}'.` };
    if (entry.type !== 'compaction') {
      return { problem: `Invalid value: '${String(entry.type)}'. Supported values are: 'compaction'. (${at}.type)` };
    }
    const value = entry.compact_threshold;
    if (value !== undefined && value !== null && (!isCount(value) || value < 1)) {
      return { problem: `Invalid '${at}.compact_threshold': expected an integer of at least 1.` };
    }
    if (isCount(value)) threshold = value;
  }
  const input = Array.isArray(body.input) ? (body.input as unknown[]) : [];
  const tokens = Math.ceil(JSON.stringify(body).length / CHARACTERS_PER_TOKEN);
  // Without a threshold of its own the API picks one from the model's window; the scripted model has none, so never.
  if (threshold === undefined || tokens <= threshold) return { managed: { appliedEdits: [] } };
  return { managed: { compaction: compactionSummary(responsesParts(input)), appliedEdits: [] } };
}

/** The earlier summary and the user's texts of a Responses input, in order. */
function responsesParts(input: unknown[]): { earlier: string[]; user: string[] } {
  const earlier: string[] = [];
  const user: string[] = [];
  for (const item of input) {
    if (!isObject(item)) continue;
    if (item.type === 'compaction' && typeof item.encrypted_content === 'string') {
      // The latest compaction stands for everything before it.
      earlier.splice(0, earlier.length, scriptedCompactionSummary(item.encrypted_content) ?? '');
      user.length = 0;
    } else if (item.role === 'user') user.push(...texts(item.content));
  }
  return { earlier, user };
}

function texts(content: unknown): string[] {
  if (typeof content === 'string') return [content];
  if (!Array.isArray(content)) return [];
  return content.flatMap((part) => (isObject(part) && typeof part.text === 'string' ? [part.text] : []));
}

/**
 * The scripted compaction's summary, like the `user-lines` summarizer: the lines of the earlier summary, then the first
 * sentence of each user text as a line `- <sentence>`.
 */
function compactionSummary({ earlier, user }: { earlier: string[]; user: string[] }): string {
  const lines = earlier.flatMap((summary) => summary.split('\n').filter((line) => line !== ''));
  for (const text of user) lines.push(`- ${firstSentence(text)}`);
  return lines.join('\n');
}

function firstSentence(text: string): string {
  const end = /[.!?](?:\s|$)/.exec(text);
  return (end === null ? text : text.slice(0, end.index + 1)).slice(0, 300);
}

function anthropicEdits(body: Record<string, unknown>, headers: Record<string, string>): ContextManagementResult {
  const betas = (headers['anthropic-beta'] ?? '').split(',').map((beta) => beta.trim());
  if (!betas.some((beta) => Object.values(EDIT_BETAS).includes(beta))) {
    return { problem: 'context_management: Extra inputs are not permitted' };
  }
  const config = body.context_management;
  if (!isObject(config)) return { problem: 'context_management: Input should be a valid dictionary' };
  const extra = Object.keys(config).find((key) => key !== 'edits');
  if (extra !== undefined) return { problem: `context_management.${extra}: Extra inputs are not permitted` };
  const edits = config.edits ?? [];
  if (!Array.isArray(edits)) return { problem: 'context_management.edits: Input should be a valid list' };
  for (const [index, edit] of edits.entries()) {
    const problem = editProblem(edit, `context_management.edits.${index}`, betas, body);
    if (problem !== undefined) return { problem };
  }
  return { managed: applyEdits(edits as Record<string, unknown>[], body) };
}

function editProblem(edit: unknown, at: string, betas: string[], body: Record<string, unknown>): string | undefined {
  if (!isObject(edit)) return `${at}: Input should be a valid dictionary`;
  const beta = typeof edit.type === 'string' ? EDIT_BETAS[edit.type] : undefined;
  if (beta === undefined) {
    const tags = Object.keys(EDIT_BETAS)
      .map((tag) => `'${tag}'`)
      .join(', ');
    return `${at}: Input tag '${String(edit.type)}' found using 'type' does not match any of the expected tags: ${tags}`;
  }
  if (!betas.includes(beta)) return `${at}: the ${String(edit.type)} edit needs the beta header "${beta}"`;
  const allowed: Record<string, string[]> = {
    clear_tool_uses_20250919: ['type', 'trigger', 'keep', 'clear_at_least', 'clear_tool_inputs', 'exclude_tools'],
    clear_thinking_20251015: ['type', 'keep'],
    compact_20260112: ['type', 'trigger', 'instructions', 'pause_after_compaction'],
  };
  const extra = Object.keys(edit).find((key) => !allowed[edit.type as string]!.includes(key));
  if (extra !== undefined) return `${at}.${extra}: Extra inputs are not permitted`;
  if (edit.type === 'clear_thinking_20251015' && !isObject(body.thinking)) {
    return `${at}: clear_thinking_20251015 requires thinking to be enabled`;
  }
  const kinds = edit.type === 'clear_tool_uses_20250919' ? ['input_tokens', 'tool_uses'] : ['input_tokens'];
  for (const field of ['trigger', 'keep'] as const) {
    const value = edit[field];
    if (value === undefined || value === null || (field === 'keep' && edit.type !== 'clear_tool_uses_20250919'))
      continue;
    const kind = field === 'keep' ? ['tool_uses'] : kinds;
    if (!isObject(value) || !kind.includes(value.type as string) || !isCount(value.value)) {
      return `${at}.${field}: expected {"type": ${kind.map((name) => `"${name}"`).join(' or ')}, "value": <integer>}`;
    }
  }
  const trigger = edit.trigger as { value?: number } | undefined;
  if (edit.type === 'compact_20260112' && trigger?.value !== undefined && trigger.value < MIN_COMPACT_TRIGGER) {
    return `${at}.trigger.value: Input should be greater than or equal to ${MIN_COMPACT_TRIGGER}`;
  }
  return undefined;
}

/** The edits that apply to the request's input: tool results cleared first, then a compaction, each past its trigger. */
function applyEdits(edits: Record<string, unknown>[], body: Record<string, unknown>): ManagedContext {
  const messages = Array.isArray(body.messages) ? (body.messages as unknown[]) : [];
  let tokens = Math.ceil(JSON.stringify(body).length / CHARACTERS_PER_TOKEN);
  const managed: ManagedContext = { appliedEdits: [] };
  const results = messages.flatMap((message) =>
    isObject(message) && Array.isArray(message.content)
      ? (message.content as unknown[]).filter((block) => isObject(block) && block.type === 'tool_result')
      : [],
  );
  for (const edit of edits) {
    const trigger = (edit.trigger as { type: string; value: number } | undefined) ?? undefined;
    if (edit.type === 'clear_tool_uses_20250919') {
      const over =
        trigger?.type === 'tool_uses'
          ? results.length > trigger.value
          : tokens > (trigger?.value ?? DEFAULT_CLEAR_TRIGGER);
      const keep = (edit.keep as { value: number } | undefined)?.value ?? DEFAULT_KEEP_TOOL_USES;
      const cleared = results.slice(0, Math.max(0, results.length - keep));
      if (!over || cleared.length === 0) continue;
      const clearedTokens = Math.ceil(JSON.stringify(cleared).length / CHARACTERS_PER_TOKEN);
      tokens -= clearedTokens;
      managed.appliedEdits.push({
        type: 'clear_tool_uses_20250919',
        cleared_tool_uses: cleared.length,
        cleared_input_tokens: clearedTokens,
      });
    } else if (edit.type === 'compact_20260112' && tokens > (trigger?.value ?? DEFAULT_COMPACT_TRIGGER)) {
      managed.compaction = compactionSummary(anthropicParts(messages));
    }
  }
  return managed;
}

/** The earlier compaction's summary and the user's texts of a Messages request, in order. */
function anthropicParts(messages: unknown[]): { earlier: string[]; user: string[] } {
  const earlier: string[] = [];
  const user: string[] = [];
  for (const message of messages) {
    if (!isObject(message)) continue;
    const blocks: unknown[] = Array.isArray(message.content)
      ? message.content
      : [{ type: 'text', text: message.content }];
    for (const block of blocks) {
      if (!isObject(block)) continue;
      if (block.type === 'compaction') {
        // The API drops everything before the latest compaction block.
        earlier.splice(0, earlier.length, ...(typeof block.content === 'string' ? [block.content] : []));
        user.length = 0;
      } else if (message.role === 'user' && block.type === 'text' && typeof block.text === 'string')
        user.push(block.text);
    }
  }
  return { earlier, user };
}
