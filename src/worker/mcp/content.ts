import type { CallToolResult, ContentBlock } from '@modelcontextprotocol/client';
import {
  formatBytes,
  MAX_PART_BYTES,
  truncateText as truncateToLimits,
  type TruncatedText,
} from '../../shared/payload-limits.js';

/**
 * MCP tool results → the text the model reads. The model gets text only: binary content (images, audio, blobs) is
 * described in a short placeholder instead of being pasted as base64, which would waste the context window and
 * bloat workflow history. The result is capped with an explicit marker so the model knows it saw only a part: at
 * `maxChars` characters (the setting) and, whatever the setting, at `maxBytes` bytes of JSON, so that the activity's
 * result stays under Temporal's payload warning (see src/shared/payload-limits.ts).
 */

/** Default cap on a tool result's text, as `config.toolResultMaxChars`. */
export const DEFAULT_TOOL_RESULT_MAX_CHARS = 20_000;

/** The text for the model; `truncated` when it was cut, `limitedBy` saying whether by characters or bytes. */
export type ToolResultText = TruncatedText;

/** The parts of an MCP `tools/call` result that the conversion reads (older servers may send `toolResult`). */
export type McpToolResult = Partial<Pick<CallToolResult, 'content' | 'structuredContent' | 'isError'>> & {
  toolResult?: unknown;
};

/**
 * Convert an MCP tool result to text for the model, at most `maxChars` characters long and `maxBytes` bytes of JSON
 * (marker included).
 * `structuredContent` is added as JSON only when no text block carries the result: the spec asks servers to send its
 * JSON as text too, and servers that send something else as text (server-filesystem sends the file, and
 * `{"content": <the file>}` as structured content) would otherwise have the model read everything twice.
 */
export function toolResultToText(
  result: McpToolResult,
  maxChars: number = DEFAULT_TOOL_RESULT_MAX_CHARS,
  maxBytes: number = MAX_PART_BYTES,
): ToolResultText {
  const blocks = result.content ?? [];
  const parts = blocks.map(contentBlockToText);
  const structured = result.structuredContent;
  if (structured !== undefined && !blocks.some((block) => block.type === 'text')) {
    parts.push(parts.length === 0 ? stringifyJson(structured) : `Structured content:\n${stringifyJson(structured)}`);
  }
  if (parts.length === 0 && result.toolResult !== undefined) {
    parts.push(typeof result.toolResult === 'string' ? result.toolResult : stringifyJson(result.toolResult));
  }
  return truncateText(parts.join('\n'), maxChars, maxBytes);
}

/** One content block as text: text as is, binary content as a placeholder naming its type and size. */
export function contentBlockToText(block: ContentBlock): string {
  switch (block.type) {
    case 'text':
      return block.text;
    case 'image':
      return `[image: ${block.mimeType}, ${formatBytes(base64Bytes(block.data))}, not shown]`;
    case 'audio':
      return `[audio: ${block.mimeType}, ${formatBytes(base64Bytes(block.data))}, not shown]`;
    case 'resource': {
      const resource = block.resource;
      const mimeType = resource.mimeType === undefined ? '' : ` (${resource.mimeType})`;
      if ('text' in resource && typeof resource.text === 'string') {
        return `[resource: ${resource.uri}${mimeType}]\n${resource.text}`;
      }
      const size = 'blob' in resource && typeof resource.blob === 'string' ? base64Bytes(resource.blob) : 0;
      return `[resource: ${resource.uri}${mimeType}, ${formatBytes(size)} of binary data, not shown]`;
    }
    case 'resource_link': {
      const details = [block.mimeType, block.size === undefined ? undefined : formatBytes(block.size)].filter(Boolean);
      const suffix = details.length === 0 ? '' : ` (${details.join(', ')})`;
      const description = block.description ? `: ${block.description}` : '';
      return `[resource link: ${block.name} <${block.uri}>${suffix}${description}]`;
    }
    default: {
      // A content type newer than this code: show it as JSON rather than dropping it silently.
      const unknown = block as { type?: unknown };
      return `[${String(unknown.type)} content]\n${stringifyJson(block)}`;
    }
  }
}

/**
 * Cut `text` to at most `maxChars` characters and `maxBytes` bytes of JSON, including the marker
 * `\n…[truncated: N of M characters shown]`. Never splits a surrogate pair.
 */
export function truncateText(
  text: string,
  maxChars: number = DEFAULT_TOOL_RESULT_MAX_CHARS,
  maxBytes: number = MAX_PART_BYTES,
): ToolResultText {
  return truncateToLimits(text, maxChars, maxBytes);
}

/** Bytes encoded by a base64 string (without decoding it). */
function base64Bytes(data: string): number {
  const length = data.replace(/\s/g, '').length;
  const padding = data.endsWith('==') ? 2 : data.endsWith('=') ? 1 : 0;
  return Math.max(0, Math.floor((length * 3) / 4) - padding);
}

function stringifyJson(value: unknown): string {
  return JSON.stringify(value, null, 2) ?? String(value);
}
