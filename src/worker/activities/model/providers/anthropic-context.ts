import type {
  BetaCompactionBlockParam,
  BetaContextManagementConfig,
  BetaContextManagementResponse,
} from '@anthropic-ai/sdk/resources/beta/messages/messages';
import { COMPACT_AT, COMPACT_TO } from '../../../../shared/compaction.js';
import type {
  JsonValue,
  ProviderCompaction,
  ProviderCompactionRequest,
  ProviderContextEdit,
} from '../../../../shared/types.js';

/**
 * Anthropic's context editing and compaction (`settings.compaction: "provider"`,
 * docs/models.md#provider-native-compaction), on its beta Messages API: the request's edits, the compaction block the
 * answer may start with, and the edits the API reports it applied.
 */

/** The beta headers context editing and compaction need. */
export const ANTHROPIC_CONTEXT_BETAS = ['context-management-2025-06-27', 'compact-2026-01-12'];
/** The least input a `compact_20260112` trigger may name (the API refuses less). */
export const MIN_COMPACTION_TRIGGER_TOKENS = 50_000;

/**
 * The edits: old tool results are cleared first, once the input passes {@link COMPACT_TO} of the window (the newest
 * three tool uses stay, the API's default); the conversation is compacted once it passes `threshold` ({@link COMPACT_AT}
 * of the window, at least {@link MIN_COMPACTION_TRIGGER_TOKENS}). Without a known window, the API's own triggers.
 */
export function contextManagement(compaction: ProviderCompactionRequest): BetaContextManagementConfig {
  const { threshold } = compaction;
  const clearAt = threshold === undefined ? undefined : Math.floor((threshold / COMPACT_AT) * COMPACT_TO);
  const compactAt = threshold === undefined ? undefined : Math.max(MIN_COMPACTION_TRIGGER_TOKENS, threshold);
  return {
    edits: [
      {
        type: 'clear_tool_uses_20250919',
        ...(clearAt !== undefined ? { trigger: { type: 'input_tokens', value: clearAt } } : {}),
      },
      {
        type: 'compact_20260112',
        ...(compactAt !== undefined ? { trigger: { type: 'input_tokens', value: compactAt } } : {}),
      },
    ],
  };
}

/** An answer's `compaction` block, as the transcript keeps it. */
export interface CompactionBlock {
  type: 'compaction';
  content: string | null;
  encrypted_content?: string | null;
  signature?: string | null;
  tool_changes?: unknown[] | null;
}

export function fromCompactionBlock(block: CompactionBlock): ProviderCompaction {
  return {
    type: 'anthropic_compaction',
    content: block.content,
    ...(typeof block.encrypted_content === 'string' ? { encryptedContent: block.encrypted_content } : {}),
    ...(typeof block.signature === 'string' ? { signature: block.signature } : {}),
    ...(Array.isArray(block.tool_changes) ? { toolChanges: block.tool_changes as JsonValue[] } : {}),
  };
}

/** The block sent back, unchanged but for the names. */
export function toCompactionBlock(item: ProviderCompaction): BetaCompactionBlockParam[] {
  if (item.type !== 'anthropic_compaction') return [];
  return [
    {
      type: 'compaction',
      content: item.content,
      ...(item.encryptedContent !== undefined ? { encrypted_content: item.encryptedContent } : {}),
      ...(item.signature !== undefined ? { signature: item.signature } : {}),
      ...(item.toolChanges !== undefined
        ? { tool_changes: item.toolChanges as unknown as BetaCompactionBlockParam['tool_changes'] }
        : {}),
    },
  ];
}

/** What the API applied, with a compaction (reported by its block, not among `applied_edits`) last. */
export function appliedEdits(
  response: BetaContextManagementResponse | null | undefined,
  compacted: boolean,
): ProviderContextEdit[] {
  const edits: ProviderContextEdit[] = (response?.applied_edits ?? []).map((edit) => ({
    type: edit.type,
    clearedInputTokens: edit.cleared_input_tokens,
    ...('cleared_tool_uses' in edit ? { clearedToolUses: edit.cleared_tool_uses } : {}),
    ...('cleared_thinking_turns' in edit ? { clearedThinkingTurns: edit.cleared_thinking_turns } : {}),
  }));
  return compacted ? [...edits, { type: 'compaction' }] : edits;
}
