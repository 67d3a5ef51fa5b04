import type { ApprovalDecision, PendingApproval } from '../../client/index.js';
import { shorten } from '../format.js';
import { InlineQuestions, type InlineQuestionsOptions } from './inline-questions.js';

/** How much of a call's arguments the question shows (compact JSON). */
const QUESTION_ARGUMENTS_CHARS = 400;

/** A question being asked: which call, and whether the answer wanted now is the denial's reason. */
interface Asking {
  item: PendingApproval;
  wantsReason: boolean;
}

/**
 * The chat's side of tool calls that wait for a person (docs/approvals.md): each call is asked about inline, one at a
 * time, in the order the conversation asked (`Allow crm__update_field {...}? [y/n/a]`: y approves, n denies and asks
 * for the reason the model gets, a approves for the rest of the conversation); a model call a cost budget holds is
 * asked about the same way, without `a`. A call decided elsewhere (another
 * terminal, `durable-agent approve`, a web page) is not asked about again, or stops being asked about.
 */
export class ChatApprovals extends InlineQuestions<PendingApproval, Asking, InlineQuestionsOptions> {
  /** A call was decided (here or elsewhere): it is no longer asked about. */
  decided(decision: ApprovalDecision): void {
    this.settled(decision.callId);
  }

  protected idOf(approval: PendingApproval): string {
    return approval.callId;
  }

  protected elsewhere(approval: PendingApproval): string {
    const { conversationId } = this.options;
    return (
      `  ? ${approval.tool} waits for approval: durable-agent approve -c ${conversationId} ${approval.callId}` +
      ` (or deny … --reason '…')`
    );
  }

  protected begin(approval: PendingApproval): void {
    this.asking = { item: approval, wantsReason: false };
    this.ask(question(approval));
  }

  protected reply(asking: Asking, line: string): void {
    const text = line.trim();
    if (asking.wantsReason) {
      if (text === '') this.ask('A denial needs a reason (the model gets it): ');
      else void this.decide(asking.item, { reason: text });
      return;
    }
    const choice = text.toLowerCase();
    if (choice === 'y' || choice === 'yes') void this.decide(asking.item, {});
    else if ((choice === 'a' || choice === 'always') && asking.item.kind !== 'budget') {
      void this.decide(asking.item, { always: true });
    } else if (choice === 'n' || choice === 'no') {
      asking.wantsReason = true;
      // A held model call's reason goes with the turn's result (`budgetDenied`); a tool call's, to the model.
      this.ask(
        asking.item.kind === 'budget'
          ? "Why not? (kept with the turn's result): "
          : 'Why not? (the model gets your reason): ',
      );
    } else {
      const choices =
        asking.item.kind === 'budget' ? 'y (allow once) or n (deny)' : 'y (allow), n (deny) or a (allow always)';
      this.ask(`Please answer ${choices}. ${question(asking.item)}`);
    }
  }

  private decide(approval: PendingApproval, decision: { always?: boolean; reason?: string }): Promise<void> {
    const { client, conversationId, by } = this.options;
    const who = by !== undefined ? { by } : {};
    return this.send(approval, `decide ${approval.tool} (${approval.callId})`, () =>
      decision.reason !== undefined
        ? client.deny(conversationId, approval.callId, { reason: decision.reason, ...who })
        : client.approve(conversationId, approval.callId, { ...(decision.always ? { always: true } : {}), ...who }),
    );
  }
}

/** The inline question about a call, with its arguments. */
export function question(approval: PendingApproval): string {
  // A model call a cost budget holds: once only (`approve --max-cost-usd` raises the limit).
  if (approval.kind === 'budget') return `${approval.reason}. Make the call anyway? [y/n] `;
  const args = shorten(JSON.stringify(approval.arguments), QUESTION_ARGUMENTS_CHARS);
  return `Allow ${approval.tool} ${args}? [y/n/a] `;
}
