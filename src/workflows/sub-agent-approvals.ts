import { defineSignal, getExternalWorkflowHandle, log, setHandler } from '@temporalio/workflow';
import type { ApprovalDecision, PendingApproval } from '../shared/approval-messages.js';
import type { InputAnswer } from '../shared/input-messages.js';
import type { JsonObject, ToolDefinition } from '../shared/types.js';
import type { Approvals } from './approvals.js';
import type { SubAgentInputLinks } from './sub-agent-inputs.js';
import type { SubAgentApprovals, TurnApprovals, WaitClock } from './turn-context.js';

/**
 * A sub-agent's approvals are answered in the conversation that called it (docs/embedding.md): the child signals each
 * call it waits on to the parent, which records it as one of its own pending calls (so its status, pending list,
 * stream and chat show it, and its `approve` and `deny` decide it) and signals the decision back. A decision the
 * child makes itself (a timeout, a cancellation) is signalled too, so the parent drops its copy.
 */

/** Child → parent: a call waits for a person, or (with `decision`) was decided in the child. */
export interface SubAgentApprovalReport {
  /** The parent's tool call that runs the sub-agent. */
  parentCallId: string;
  pending?: PendingApproval;
  /** The waiting call's input schema, against which the parent checks edited arguments. */
  inputSchema?: JsonObject;
  decision?: ApprovalDecision;
}

export const subAgentApprovalSignal = defineSignal<[SubAgentApprovalReport]>('subAgentApproval');
/** What the Web UI shows for it. */
export const SUB_AGENT_APPROVAL_DESCRIPTION =
  "Internal: a sub-agent's child workflow reports a call waiting for approval, or decided. Do not send.";
/** Parent → child: a person's decision, under the child's own call id. */
export const subAgentDecisionSignal = defineSignal<[ApprovalDecision]>('subAgentDecision');

/** The parent's copy of a child's call id: the call that runs the sub-agent, then the child's own id. */
export function parentCopyId(parentCallId: string, childCallId: string): string {
  return `${parentCallId}/${childCallId}`;
}

/**
 * The conversation's side, with its `subAgentApproval` handler set (it emits no command); with `inputs`, the sub-agents'
 * questions too (./sub-agent-inputs.ts).
 */
export function linkSubAgents(approvals: Approvals, inputs?: SubAgentInputLinks): SubAgentLinks {
  const links = new SubAgentLinks(approvals, inputs);
  setHandler(subAgentApprovalSignal, (report) => links.receive(report), {
    description: SUB_AGENT_APPROVAL_DESCRIPTION,
  });
  return links;
}

/** The conversation's side: the sub-agents' calls it holds as pending approvals, by the call that runs each agent. */
export class SubAgentLinks implements SubAgentApprovals {
  private readonly copies = new Map<string, Set<string>>();
  private readonly clocks = new Map<string, WaitClock>();

  constructor(
    private readonly approvals: Approvals,
    private readonly inputs?: SubAgentInputLinks,
  ) {}

  /** A call that runs a sub-agent started: its child's reports are accepted from now on. */
  open(parentCallId: string, clock: WaitClock): void {
    this.copies.set(parentCallId, new Set());
    this.clocks.set(parentCallId, clock);
    this.inputs?.open(parentCallId, clock);
  }

  /** Whether a person answered one of this sub-agent's questions here, and it is not yet forwarded. */
  hasAnswered(parentCallId: string): boolean {
    return this.inputs?.hasAnswered(parentCallId) ?? false;
  }

  /** The answers given here for the sub-agent's questions, under the child's request ids. */
  takeAnswered(parentCallId: string): InputAnswer[] {
    return this.inputs?.takeAnswered(parentCallId) ?? [];
  }

  /** The `subAgentApproval` signal. */
  receive(report: SubAgentApprovalReport): void {
    const copies = this.copies.get(report.parentCallId);
    if (copies === undefined) return;
    if (report.pending !== undefined) {
      const callId = parentCopyId(report.parentCallId, report.pending.callId);
      copies.add(callId);
      this.clocks.get(report.parentCallId)?.pause();
      // A held model call (a budget pause) has no tool: approved as it is, or with a raised limit.
      const tool =
        report.pending.kind === 'budget' ? undefined : ({ inputSchema: report.inputSchema ?? {} } as ToolDefinition);
      this.approvals.request({ ...report.pending, callId }, tool);
    } else if (report.decision !== undefined) {
      const callId = parentCopyId(report.parentCallId, report.decision.callId);
      if (!this.isWaiting(callId)) return;
      const { decision, by, reason } = report.decision;
      this.approvals.decide(callId, { decision, ...(by !== undefined ? { by } : {}), ...(reason ? { reason } : {}) });
      this.approvals.take(callId);
      this.release(report.parentCallId, callId);
    }
  }

  /** Whether a person decided one of this sub-agent's calls here, and it is not yet forwarded. */
  hasDecided(parentCallId: string): boolean {
    return [...(this.copies.get(parentCallId) ?? [])].some((callId) => this.approvals.isDecided(callId));
  }

  /** The decisions made here for the sub-agent, under the child's call ids, to signal to it. */
  takeDecided(parentCallId: string): ApprovalDecision[] {
    const copies = this.copies.get(parentCallId) ?? new Set<string>();
    const decided: ApprovalDecision[] = [];
    for (const callId of copies) {
      const decision = this.approvals.take(callId);
      if (decision === undefined) continue;
      this.release(parentCallId, callId);
      decided.push({ ...decision, callId: callId.slice(parentCallId.length + 1) });
    }
    return decided;
  }

  /** The sub-agent's call ended: whatever of it still waits here is over (its child decided it, or is gone). */
  close(parentCallId: string, by: string, reason: string): void {
    for (const callId of this.copies.get(parentCallId) ?? []) {
      if (this.isWaiting(callId)) this.approvals.decide(callId, { decision: 'denied', by, reason });
      this.approvals.take(callId);
      this.release(parentCallId, callId);
    }
    this.copies.delete(parentCallId);
    this.clocks.delete(parentCallId);
    this.inputs?.close(parentCallId, by);
  }

  /** A copy no longer waits for a person here: the turn's clock runs again once none does. */
  private release(parentCallId: string, callId: string): void {
    if (this.copies.get(parentCallId)?.delete(callId)) this.clocks.get(parentCallId)?.resume();
  }

  private isWaiting(callId: string): boolean {
    return this.approvals.pending.some((pending) => pending.callId === callId);
  }
}

/**
 * The child's side: its own `Approvals`, with every call that starts waiting and every decision it makes itself
 * reported to the conversation that called it.
 */
export class ForwardedApprovals implements TurnApprovals {
  constructor(
    private readonly approvals: Approvals,
    private readonly parent: { workflowId: string; callId: string; agent: string },
  ) {}

  get allowedTools(): ReadonlySet<string> {
    return this.approvals.allowedTools;
  }

  /** Without `tool`: a model call the tenant's daily limit holds (./budget-pause.ts). */
  request(pending: PendingApproval, tool?: ToolDefinition): void {
    this.approvals.request(pending, tool);
    this.report({
      pending: { ...pending, reason: `sub-agent ${this.parent.agent}: ${pending.reason}` },
      ...(tool !== undefined ? { inputSchema: tool.inputSchema } : {}),
    });
  }

  isDecided(callId: string): boolean {
    return this.approvals.isDecided(callId);
  }

  take(callId: string): ApprovalDecision | undefined {
    return this.approvals.take(callId);
  }

  decide(callId: string, fields: Parameters<TurnApprovals['decide']>[1]): ApprovalDecision {
    const decision = this.approvals.decide(callId, fields);
    this.report({ decision });
    return decision;
  }

  /** The `subAgentDecision` signal: the person's decision, made in the parent conversation. */
  decidedInParent(decision: ApprovalDecision): void {
    if (!this.approvals.pending.some((pending) => pending.callId === decision.callId)) return;
    const { callId, decision: verdict, by, reason, arguments: edited, always, maxCostUsd } = decision;
    this.approvals.decide(callId, {
      decision: verdict,
      ...(by !== undefined ? { by } : {}),
      ...(reason !== undefined ? { reason } : {}),
      ...(edited !== undefined ? { arguments: edited } : {}),
      ...(always !== undefined ? { always } : {}),
      ...(maxCostUsd !== undefined ? { maxCostUsd } : {}),
    });
  }

  private report(report: Omit<SubAgentApprovalReport, 'parentCallId'>): void {
    getExternalWorkflowHandle(this.parent.workflowId)
      .signal(subAgentApprovalSignal, { parentCallId: this.parent.callId, ...report })
      .catch((error: unknown) => log.warn('the calling conversation did not get an approval report', { error }));
  }
}
