/**
 * Temporal's limits on one payload (an activity's input or result, a signal, a query's answer) and durable-agent's
 * bounds under them, so that we cut what is too large and say so, rather than Temporal refusing it. Temporal measures
 * a payload in bytes of its encoding, which for durable-agent is JSON in UTF-8; so do these functions. With
 * encryption keys set (src/codec), Temporal measures the encrypted payload instead: compressed, so usually smaller,
 * and at worst (incompressible text) a few hundred bytes larger, which the margins below absorb
 * (test/codec/encryption-codec.test.ts checks it at both bounds). A JavaScript
 * string's `length` counts UTF-16 code units instead: an emoji is 2 of them and 4 bytes, a Chinese character 1 and 3,
 * a control character 1 and 6 (`\u0001`).
 *
 * Pure functions, no Node builtins: workflow code uses them too.
 */

/**
 * A payload larger than this is refused: the server's default `limit.blobSize.error`, also Temporal Cloud's. The
 * worker checks it before sending (it reads the namespace's limit) and fails the activity with `PayloadsTooLarge`.
 */
export const TEMPORAL_PAYLOAD_LIMIT_BYTES = 2 * 1024 * 1024;

/** A payload larger than this is logged as a warning: the server's default `limit.blobSize.warn`, and the SDK's. */
export const TEMPORAL_PAYLOAD_WARN_BYTES = 512 * 1024;

/**
 * The most that one thing durable-agent records may take, in bytes of JSON: a tool result's text, the new messages a
 * model call carries, a model's answer (its text and tool calls together), a turn's tool list. 4 KiB under Temporal's
 * warning threshold, so that a tool result or a model call's input with the fields around it draws no warning.
 */
export const MAX_PART_BYTES = TEMPORAL_PAYLOAD_WARN_BYTES - 4 * 1024;

/**
 * The most any activity payload of durable-agent may take. The model call's result is the only one that carries two
 * parts (the answer and, on a turn's first call, the tool list), so it stays near 1 MiB; anything larger (a model that
 * sends thousands of tool calls) fails by name. Three quarters of the hard limit: the rest is margin for the payload's
 * metadata and for a namespace whose limit is a little lower.
 */
export const MAX_ACTIVITY_PAYLOAD_BYTES = (TEMPORAL_PAYLOAD_LIMIT_BYTES * 3) / 4;

/**
 * The largest accepted `DURABLE_AGENT_TOOL_RESULT_MAX_CHARS` (256 Ki characters, about 64,000 tokens of English).
 * Text of one or two bytes per UTF-16 code unit (English, code, accented letters, emoji) that long fits in
 * {@link MAX_PART_BYTES}, so for such text this setting is what cuts; denser text (Chinese, control characters) is
 * cut earlier, by bytes. Even at the worst (6 bytes per code unit) it is 1.5 MiB, under Temporal's hard limit.
 */
export const MAX_TOOL_RESULT_CHARS = 256 * 1024;

/** Bytes of `text` in UTF-8. A lone surrogate counts 3, as the replacement character it is encoded as. */
export function utf8Bytes(text: string): number {
  let bytes = 0;
  for (let index = 0; index < text.length; index++) {
    const code = text.charCodeAt(index);
    if (code < 0x80) bytes += 1;
    else if (code < 0x800) bytes += 2;
    else if (isHighSurrogate(code) && isLowSurrogate(text.charCodeAt(index + 1))) {
      bytes += 4;
      index++;
    } else bytes += 3;
  }
  return bytes;
}

/** Bytes of `value`'s payload: its JSON in UTF-8, as Temporal's default payload converter encodes it. */
export function jsonBytes(value: unknown): number {
  const json = JSON.stringify(value) as string | undefined;
  return json === undefined ? 0 : utf8Bytes(json);
}

/**
 * The length of the longest prefix of `text` whose JSON string (quotes included) takes at most `maxBytes`, and at
 * most `maxChars` code units. Never ends between the two halves of a surrogate pair.
 */
export function prefixWithinBytes(text: string, maxBytes: number, maxChars: number = text.length): number {
  let bytes = 2;
  const end = Math.min(text.length, Math.max(0, maxChars));
  let index = 0;
  while (index < end) {
    const code = text.charCodeAt(index);
    const pair = isHighSurrogate(code) && isLowSurrogate(text.charCodeAt(index + 1));
    const units = pair ? 2 : 1;
    const cost = pair ? 4 : jsonCodeUnitBytes(code);
    if (index + units > end || bytes + cost > maxBytes) break;
    bytes += cost;
    index += units;
  }
  return index;
}

export interface TruncatedText {
  text: string;
  /** True when the text was cut. */
  truncated: boolean;
  /** Which bound cut it: the character limit asked for, or the byte limit of the payload. */
  limitedBy?: 'chars' | 'bytes';
}

/**
 * Cut `text` to at most `maxChars` characters and `maxBytes` bytes of JSON (quotes included), marker included:
 * `\n…[truncated: N of M characters shown]`, so the reader knows it saw only a part. Never splits a surrogate pair.
 */
export function truncateText(text: string, maxChars: number, maxBytes: number = MAX_PART_BYTES): TruncatedText {
  if (text.length <= maxChars && (text.length * 6 + 2 <= maxBytes || jsonBytes(text) <= maxBytes)) {
    return { text, truncated: false };
  }
  const marker = (shown: number) => `\n…[truncated: ${shown} of ${text.length} characters shown]`;
  // The marker's length depends on the number it shows; the longest it can be is with `text.length` digits.
  const longest = marker(text.length);
  const charBudget = Math.max(0, maxChars - longest.length);
  const shown = prefixWithinBytes(text, maxBytes - (jsonBytes(longest) - 2), charBudget);
  // Where the character limit alone would cut: its budget, less half a surrogate pair.
  const byChars = charBudget > 0 && isHighSurrogate(text.charCodeAt(charBudget - 1)) ? charBudget - 1 : charBudget;
  const limitedBy = shown < Math.min(byChars, text.length) ? 'bytes' : 'chars';
  return { text: text.slice(0, shown) + marker(shown), truncated: true, limitedBy };
}

/**
 * Where the longest tail of `items` that fits in `maxBytes` as a JSON array begins: `items.slice(start)` fits, and
 * `items.length` when not even the last item does.
 */
export function tailWithinBytes(items: readonly unknown[], maxBytes: number): number {
  let bytes = 2;
  let start = items.length;
  while (start > 0) {
    const cost = jsonBytes(items[start - 1]) + (start < items.length ? 1 : 0);
    if (bytes + cost > maxBytes) break;
    bytes += cost;
    start--;
  }
  return start;
}

/** A byte count for people: `812 bytes`, `3.4 KiB`, `2.5 MiB`. */
export function formatBytes(bytes: number): string {
  if (bytes < 1024) return `${bytes} bytes`;
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)} KiB`;
  return `${(bytes / (1024 * 1024)).toFixed(1)} MiB`;
}

/** Bytes of one UTF-16 code unit (not part of a surrogate pair) inside a JSON string. */
function jsonCodeUnitBytes(code: number): number {
  if (code === 0x22 || code === 0x5c) return 2; // \" and \\
  if (code < 0x20) return code === 0x08 || code === 0x09 || code === 0x0a || code === 0x0c || code === 0x0d ? 2 : 6;
  if (code < 0x80) return 1;
  if (code < 0x800) return 2;
  // A lone surrogate is escaped (`\ud800`), as JSON.stringify does since ES2019.
  if (isHighSurrogate(code) || isLowSurrogate(code)) return 6;
  return 3;
}

function isHighSurrogate(code: number): boolean {
  return code >= 0xd800 && code <= 0xdbff;
}

function isLowSurrogate(code: number): boolean {
  return code >= 0xdc00 && code <= 0xdfff;
}
