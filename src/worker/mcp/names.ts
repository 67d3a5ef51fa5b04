import { createHash } from 'node:crypto';

/**
 * Tool names as the model sees them: `<server>__<tool>`, restricted to what OpenAI-compatible APIs accept.
 * The mapping is a pure function of the set of (server, tool) pairs, so it does not depend on the order in which
 * servers answer, and a name stays the same from one turn to the next as long as no new colliding tool appears.
 */

/** What OpenAI-compatible chat APIs accept as a function name. */
export const TOOL_NAME_PATTERN = /^[a-zA-Z0-9_-]{1,64}$/;
export const MAX_TOOL_NAME_LENGTH = 64;
/** Separator between the server name and the tool name. */
export const NAMESPACE_SEPARATOR = '__';

/** Hex digits of the hash suffix that keeps shortened or colliding names apart; lengthened only if it collides. */
const HASH_LENGTH = 8;

export interface ToolKey {
  /** The configured server name. */
  server: string;
  /** The tool's name on its server. */
  tool: string;
}

/** Replace every character the model APIs reject with `_` (an empty part becomes `_`). */
export function sanitizeNamePart(text: string): string {
  const sanitized = text.replace(/[^a-zA-Z0-9_-]/g, '_');
  return sanitized === '' ? '_' : sanitized;
}

/**
 * Give each (server, tool) pair a unique model-facing name. Returns names in the order of `keys`.
 *
 * - The plain name is `sanitize(server) + '__' + sanitize(tool)`.
 * - Longer than 64 characters: cut, and end with `_` and a hash of the pair, so two long names that share a prefix
 *   stay apart.
 * - Two pairs with the same plain name: the pair whose name needed no sanitising wins, then the lower
 *   (server, tool) in code-point order; every other pair gets the hash suffix.
 */
export function assignToolNames(keys: readonly ToolKey[]): string[] {
  const candidates = keys.map((key, index) => {
    const raw = `${key.server}${NAMESPACE_SEPARATOR}${key.tool}`;
    const plain = `${sanitizeNamePart(key.server)}${NAMESPACE_SEPARATOR}${sanitizeNamePart(key.tool)}`;
    return { key, index, exact: plain === raw && plain.length <= MAX_TOOL_NAME_LENGTH, plain };
  });
  // Decide in a fixed order so the outcome depends only on the set of pairs.
  const ordered = [...candidates].sort(
    (a, b) =>
      Number(b.exact) - Number(a.exact) ||
      compareCodePoints(a.key.server, b.key.server) ||
      compareCodePoints(a.key.tool, b.key.tool),
  );
  const taken = new Set<string>();
  const names: string[] = new Array<string>(keys.length);
  for (const candidate of ordered) {
    let name = candidate.plain.length <= MAX_TOOL_NAME_LENGTH ? candidate.plain : withHash(candidate, HASH_LENGTH);
    for (let hashLength = HASH_LENGTH; taken.has(name); hashLength += 4) {
      if (hashLength > 64) throw new Error(`Cannot give ${candidate.plain} a unique tool name.`);
      name = withHash(candidate, hashLength);
    }
    taken.add(name);
    names[candidate.index] = name;
  }
  return names;
}

function withHash(candidate: { key: ToolKey; plain: string }, hashLength: number): string {
  const hash = createHash('sha256')
    .update(`${candidate.key.server}\u0000${candidate.key.tool}`)
    .digest('hex')
    .slice(0, hashLength);
  return `${candidate.plain.slice(0, MAX_TOOL_NAME_LENGTH - hashLength - 1)}_${hash}`;
}

function compareCodePoints(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
