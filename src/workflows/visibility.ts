import { patched, setCurrentDetails, upsertMemo, upsertSearchAttributes, workflowInfo } from '@temporalio/workflow';
import { formatCost } from '../shared/dollars.js';
import type { CostSpend } from '../shared/types.js';
import { DURABLE_AGENT_SEARCH_ATTRIBUTES as SearchAttribute } from '../shared/search-attributes.js';
import type { ConversationPhase, ConversationStatus } from './definitions.js';
import { preview } from './stream-events.js';

/** How much of a pending call's arguments the current details show. */
const ARGUMENTS_PREVIEW_CHARS = 120;

/**
 * The patch of the conversation's cost in its memo, which `list` reads (docs/cost.md). Asked only once a conversation
 * has a cost to show, so runs of releases that priced nothing replay without it.
 */
export const COST_MEMO_PATCH = 'cost-memo';

/**
 * How a conversation shows in Temporal's lists and Web UI: search attributes (status, turns, conversation id) to
 * filter by, and the current details a person reads on the workflow's page.
 */
/**
 * The patch of the tenant's search attribute, set by the workflow when the run started without it (a client of the
 * protocol that did not set it; docs/tenants.md). Asked only then, so runs without a tenant replay without it.
 */
export const TENANT_ATTRIBUTE_PATCH = 'tenant-attribute';

export class Visibility {
  private published: { status: ConversationPhase; turns: number } | undefined;
  private publishedCost: CostSpend | undefined;

  /** `tenant`: the conversation's tenant from its settings, when it has one. */
  constructor(private readonly tenant?: string) {}

  /**
   * Upsert the search attributes when the phase or the turn count changed, then describe. Only on change: each
   * upsert is a history event and a visibility write.
   */
  publish(status: ConversationStatus): void {
    if (this.published?.status !== status.phase || this.published.turns !== status.turns) {
      upsertSearchAttributes([
        { key: SearchAttribute.status, value: status.phase },
        { key: SearchAttribute.turns, value: status.turns },
        // Set once per run; continue-as-new carries search attributes over.
        ...(this.published ? [] : [{ key: SearchAttribute.conversationId, value: status.conversationId }]),
        ...(this.published ? [] : this.missingTenant()),
      ]);
      this.published = { status: status.phase, turns: status.turns };
      this.publishCost(status.cost);
    }
    this.describe(status);
  }

  /** The tenant's search attribute when the run has a tenant but started without it (the client sets it at start). */
  private missingTenant(): { key: typeof SearchAttribute.tenant; value: string }[] {
    if (this.tenant === undefined || workflowInfo().typedSearchAttributes.get(SearchAttribute.tenant) !== undefined) {
      return [];
    }
    return patched(TENANT_ATTRIBUTE_PATCH) ? [{ key: SearchAttribute.tenant, value: this.tenant }] : [];
  }

  /**
   * The conversation's cost in its memo, with the search attributes (at most once a turn), when its dollars changed.
   * Calls without a price change nothing here: each memo is a history event, and they would add one to every turn.
   */
  private publishCost(cost: CostSpend | undefined): void {
    if (cost === undefined || cost.usd === 0 || cost.usd === this.publishedCost?.usd) return;
    if (!patched(COST_MEMO_PATCH)) return;
    upsertMemo({ cost });
    this.publishedCost = cost;
  }

  /** Update the current details only (no history event). */
  describe(status: ConversationStatus): void {
    setCurrentDetails(currentDetails(status));
  }
}

/** The Web UI's current details of a conversation: its phase and queue, and the running turn's progress or the last result. */
export function currentDetails(status: ConversationStatus): string {
  const { conversationId, phase, turns, queued, currentTurn, lastResult, cost } = status;
  // The dollars only once there are some (or unpriced calls), so a conversation that spent none reads as before.
  const spent = cost !== undefined && (cost.usd > 0 || cost.unpricedCalls) ? ` · ${formatCost(cost)}` : '';
  const lines = [`**Conversation** \`${conversationId}\` · ${phase} · ${turns} turns · ${queued} queued${spent}`];
  if (currentTurn) {
    lines.push(
      `**Turn ${currentTurn.turn}** · ${currentTurn.activity}`,
      `rounds ${currentTurn.rounds} · tool calls ${currentTurn.toolCalls} · tokens ${currentTurn.usage.totalTokens}`,
    );
  } else if (lastResult) {
    lines.push(`Last turn ${lastResult.turn}: ${lastResult.stopReason}`);
  }
  for (const pending of status.pendingApprovals ?? []) {
    const shown = preview(JSON.stringify(pending.arguments), ARGUMENTS_PREVIEW_CHARS);
    lines.push(`**Awaiting approval** · ${pending.tool} ${pending.callId} · \`${shown}\` · ${pending.reason}`);
  }
  lines.push(...inputLines(status));
  return lines.join('\n\n');
}

/** The questions MCP servers wait for a person to answer, with their fields and how to answer. */
function inputLines({ conversationId, pendingInputs }: ConversationStatus): string[] {
  return (pendingInputs ?? []).map((request) => {
    const fields = Object.keys((request.requestedSchema?.properties as object | undefined) ?? {});
    const asks = request.mode === 'url' ? `open ${request.url}` : `fields: ${fields.join(', ') || 'none'}`;
    return (
      `**Waiting for input** \`${request.requestId}\` · ${request.tool}: ${request.message} · ${asks} · ` +
      `answer with \`durable-agent answer -c ${conversationId} ${request.requestId}\`` +
      (request.expiresAt !== undefined ? ` by ${request.expiresAt}` : '')
    );
  });
}
